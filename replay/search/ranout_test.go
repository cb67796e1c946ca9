package search_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/schema"
)

// ranOut is a probe's result whose run ended after wall seconds of a
// window of window seconds: open loop with rowsDone of the trace's rows
// (319) run, or, with closed, a closed loop with left of its users'
// requests never released. Every figure else passes.
func ranOut(wall, window float64, rowsDone int64, closed bool, left int64) *schema.Result {
	res := result("PASS", map[string]float64{"batch": 1})
	res.WallS = wall
	res.Replay.DurationS = window
	res.Replay.Rows, res.Replay.RowsDone = rowsDone, rowsDone
	res.Traces = []schema.TraceInfo{{File: "short.csv.zst", Rows: 319}}
	if closed {
		res.ClosedLoop = &schema.ClosedLoopStats{Users: 1, WindowS: window, RequestsLeft: left,
			PerUser: []schema.UserStats{{User: 1, QoS: "batch", Requests: 1}}}
	}
	return res
}

// TestProbeThatOutranItsTrace: a probe whose trace (a capacity probe,
// open loop) or whose users' requests (a users probe) ran out before its
// --duration window closed is not a measurement of that window's load,
// and stops the search. Measured on this VM: a 10 s trace at 1/1024,
// --duration 3s, ran whole in 2.27 s at --speed 4 and in 0.08 s at
// --speed 128, where its "offered load" read 2.92 GB/s on a disk that
// sustains 0.1 to 0.2 (the capacity search answered "still improving",
// peak 2.92 GB/s); a users probe of 1 user replayed that user's one
// request in 35 ms of its 20 s window, and passed.
func TestProbeThatOutranItsTrace(t *testing.T) {
	for _, tt := range []struct {
		name string
		kind string
		res  *schema.Result
		want string // in NotMeasured; "" when a measurement
	}{
		{"capacity, the trace ran out", search.KindCapacity, ranOut(2.27, 3, 319, false, 0),
			"the trace ran out after 2.27 s of the probe's 3 s window"},
		{"capacity, the window closed it", search.KindCapacity, ranOut(3.0009, 3, 196, false, 0), ""},
		{"capacity, rows left though the run was short", search.KindCapacity, ranOut(2.9, 3, 196, false, 0), ""},
		{"capacity, no window", search.KindCapacity, ranOut(2.27, 0, 319, false, 0), ""},
		// A 59.3 s trace at --speed 2 fills 29.65 s of a 30 s window: held
		// for all but its last 5 %, it is a measurement, whatever the lag.
		{"capacity, the trace ran out in the window's last 5 %", search.KindCapacity, ranOut(29.65, 30, 319, false, 0), ""},
		{"capacity, the trace ran out before the window's last 5 %", search.KindCapacity, ranOut(28.4, 30, 319, false, 0),
			"the trace ran out after 28.4 s of the probe's 30 s window"},
		{"users, their requests ran out", search.KindUsers, ranOut(0.035, 20, 4, true, 0),
			"its users' requests ran out after 0.035 s of the probe's 20 s window"},
		{"users, the window closed it", search.KindUsers, ranOut(20.2, 20, 4, true, 0), ""},
		{"users, requests left", search.KindUsers, ranOut(19.99, 20, 4, true, 3), ""},
	} {
		p := search.Summarize(tt.kind, tt.res, tier2)
		switch {
		case tt.want == "" && (p.NotMeasured != "" || !p.Pass):
			t.Errorf("%s: not measured %q, pass %v: want a passing measurement", tt.name, p.NotMeasured, p.Pass)
		case tt.want != "" && (!strings.Contains(p.NotMeasured, tt.want) || p.Pass || !strings.Contains(p.NotMeasured, "--duration")):
			t.Errorf("%s: not measured %q, pass %v: want not a measurement, with %q and what to do (--duration)", tt.name, p.NotMeasured, p.Pass, tt.want)
		}
	}

	// The capacity search stops at the first probe the trace did not
	// fill: the peak is what the probes before it measured, a lower bound.
	d, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 10}, func(_ int, speed float64) (search.Probe, error) {
		res := ranOut(3.001, 3, 196, false, 0)
		if speed >= 4 {
			res = ranOut(3/speed*1.5, 3, 319, false, 0) // the whole trace, in less and less time
		}
		res.Tiers = []schema.TierTotals{{Tier: "Tier-2", ReadOfferedBps: 1e8 * speed}}
		return search.Summarize(search.KindCapacity, res, tier2), nil
	})
	if !errors.Is(err, search.ErrNotMeasured) || d.Done || !d.AnswerIsLowerBound || d.PeakSpeed != 2 || len(d.Probes) != 3 ||
		!strings.Contains(d.Reason, "at least peak offered load 0.200 GB/s at --speed 2") || !strings.Contains(d.Reason, "the trace ran out") {
		t.Errorf("capacity: err %v, done %v, lower bound %v, peak at --speed %v after %d probes: %s", err, d.Done, d.AnswerIsLowerBound, d.PeakSpeed, len(d.Probes), d.Reason)
	}
}

// TestCapacityFlagsFalls: a capacity search whose offered load fell as
// --speed rose (a noisy system: the figures of a search on this VM) says
// so in its reason, after the peak: the peak is one probe's figure, which
// the probes above it did not hold. A search whose load only rose, then
// held, says nothing of it (TestCapacitySaturatedFromFirstProbe's exact
// reasons).
func TestCapacityFlagsFalls(t *testing.T) {
	gbps := map[float64]float64{0.25: 0.00871, 0.5: 0.0245, 1: 0.0673, 2: 0.166, 4: 0.0849, 8: 0.484, 16: 0.205, 32: 0.234}
	d, err := search.Capacity(search.CapacityOptions{MaxProbes: 12}, func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: gbps[speed] * 1e9}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "; the offered load fell as --speed rose, by more than the 10 % a plateau's noise moves it: " +
		"0.0849 GB/s at --speed 4 (-49 % from 0.166 GB/s at --speed 2), 0.205 GB/s at --speed 16 (-58 % from 0.484 GB/s at --speed 8), " +
		"0.234 GB/s at --speed 32 (-52 % from 0.484 GB/s at --speed 8): the peak is one probe's figure, not a load the system held as the load rose " +
		"(noise, or a system that slows when overloaded: a longer --duration, or the search run again, shows which)"
	if d.PeakSpeed != 8 || len(d.Probes) != 8 || !strings.Contains(d.Reason, want) {
		t.Errorf("peak at --speed %v after %d probes:\n got %s\nwant ...%s", d.PeakSpeed, len(d.Probes), d.Reason, want)
	}
}

// TestStoppedUsersSearchSaysWhatFailed: a users search that a probe
// stopped (a signal, here at its third probe, as on this VM) gives both
// ends the probes before it found: the count that passed, a lower bound,
// and the smallest that failed. Before, "no number of users passed
// before the search stopped (a lower bound of 0)" hid that 19 and 38
// users had failed.
func TestStoppedUsersSearchSaysWhatFailed(t *testing.T) {
	interrupted := errors.New("interrupt signal received")
	for _, tt := range []struct {
		pass func(n int) bool
		want string
	}{
		{func(int) bool { return false },
			"no number of users passed before the search stopped (a lower bound of 0; 19 users failed); probe 3 (9 users) stopped without a result"},
		{func(n int) bool { return n <= 38 },
			"at least 38 users: 38 passed before the search stopped, 76 failed; probe 3 (57 users) stopped without a result"},
		{func(n int) bool { return true },
			"at least 76 users: 76 passed before the search stopped; probe 3 (150 users) stopped without a result"},
	} {
		calls := 0
		d, err := search.Users(search.UsersOptions{Total: 150, MaxProbes: 12, Repeats: 2}, func(n int, _ float64) (search.Probe, error) {
			if calls++; calls == 3 {
				return search.Probe{}, interrupted
			}
			return search.Probe{Pass: tt.pass(n)}, nil
		})
		if !errors.Is(err, interrupted) || !d.AnswerIsLowerBound || !strings.HasPrefix(d.Reason, tt.want) {
			t.Errorf("err %v, lower bound %v:\n got %s\nwant %s...", err, d.AnswerIsLowerBound, d.Reason, tt.want)
		}
	}
}

// TestUsersAnswerSaysClassesLeftOut: a users search whose answer is a
// sample of fewer users than the trace's QoS classes (1 user of a trace
// of interactive, responsive and batch users: the batch one, as kvreplay
// samples them) says which classes its probes left out, whose SLAs the
// answer did not measure: on this VM, "1 user passed, 2 failed" was a
// batch user's 1000 ms target met, beside interactive users that missed
// 50 ms at every count probed. An answer whose probes replayed every
// class, or a search that does not know the trace's classes, says
// nothing of it.
func TestUsersAnswerSaysClassesLeftOut(t *testing.T) {
	classes := map[string]int{"interactive": 25, "responsive": 53, "batch": 72}
	mix := func(n int) map[string]int { // as replay.SelectUsers samples 150 users so split
		switch n {
		case 1:
			return map[string]int{"batch": 1}
		case 2:
			return map[string]int{"responsive": 1, "batch": 1}
		}
		i := max(1, n*25/150)
		r := max(1, n*53/150)
		return map[string]int{"interactive": i, "responsive": r, "batch": n - i - r}
	}
	search1 := func(knee int, classes map[string]int) *search.Document {
		d, err := search.Users(search.UsersOptions{Total: 150, MaxProbes: 20, Repeats: 2, Classes: classes}, func(n int, _ float64) (search.Probe, error) {
			return search.Probe{Pass: n <= knee, UsersByQoS: mix(n)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := "1 user passed, 2 failed; the probes of 1 user replayed no interactive or responsive user, classes the trace has: " +
		"a sample of fewer users than its classes leaves some out (user_selection), so the answer measured none of their SLAs"
	if d := search1(1, classes); d.Users != 1 || d.Reason != want {
		t.Errorf("knee 1:\n got %s\nwant %s", d.Reason, want)
	}
	for _, tt := range []struct {
		knee    int
		classes map[string]int
	}{{2, nil}, {1, nil}, {40, classes}} {
		if d := search1(tt.knee, tt.classes); strings.Contains(d.Reason, "classes the trace has") {
			t.Errorf("knee %d, classes %v: %s", tt.knee, tt.classes, d.Reason)
		}
	}
	if d := search1(2, classes); !strings.Contains(d.Reason, "the probes of 2 users replayed no interactive user, a class the trace has") {
		t.Errorf("knee 2: %s", d.Reason)
	}
}
