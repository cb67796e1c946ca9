package search_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestUsersFindsKnee runs the users search against systems that serve
// exactly k users, for many k and totals: it answers k, confirmed.
func TestUsersFindsKnee(t *testing.T) {
	for _, total := range []int{1, 2, 7, 20, 100, 1000} {
		for _, k := range []int{0, 1, total / 3, total / 2, total - 1, total} {
			if k < 0 || k > total {
				continue
			}
			probe := func(n int, _ float64) (search.Probe, error) { return search.Probe{Pass: n <= k}, nil }
			d, err := search.Users(search.UsersOptions{Total: total, MaxProbes: 40, Repeats: 2}, probe)
			if err != nil {
				t.Fatal(err)
			}
			// The bisection stops once the gap is 1 user or 5 % of the
			// answer: never above the knee, at most 5 % below.
			if d.Users > k || float64(k-d.Users) > 0.05*float64(k) || !d.Done || len(d.Probes) < 1 {
				t.Errorf("total %d, knee %d: answer %d after %d probes (done %v): %s", total, k, d.Users, len(d.Probes), d.Done, d.Reason)
			}
			if k > 0 && k < total && (d.Resolution != 1 && float64(d.Resolution) > 0.05*float64(d.Users)+1) {
				t.Errorf("total %d, knee %d: resolution %d", total, k, d.Resolution)
			}
			if k > 0 && d.Confidence != 1 {
				t.Errorf("total %d, knee %d: confidence %v", total, k, d.Confidence)
			}
			if k == 1 && total > 1 && !strings.HasPrefix(d.Reason, "1 user passed, 2 failed") {
				t.Errorf("total %d, knee 1: %s", total, d.Reason)
			}
		}
	}
}

// TestUsersFlakyAnswer steps below an answer that fails when probed
// again, and stops at the probe cap, saying so.
func TestUsersFlakyAnswer(t *testing.T) {
	seen := map[int]int{}
	probe := func(n int, _ float64) (search.Probe, error) {
		seen[n]++
		// 10 passes once, then fails: the boundary is really 9.
		return search.Probe{Pass: n <= 9 || (n == 10 && seen[n] == 1)}, nil
	}
	d, err := search.Users(search.UsersOptions{Total: 40, MaxProbes: 30, Repeats: 2}, probe)
	if err != nil {
		t.Fatal(err)
	}
	if d.Users != 9 {
		t.Errorf("answer %d, want 9 (probes %+v)", d.Users, d.Probes)
	}
	capped, err := search.Users(search.UsersOptions{Total: 1000, MaxProbes: 3}, func(n int, _ float64) (search.Probe, error) {
		return search.Probe{Pass: n <= 377}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if capped.Done || len(capped.Probes) != 3 {
		t.Errorf("capped search: done %v after %d probes", capped.Done, len(capped.Probes))
	}
}

// TestCapacityFindsPlateau doubles the load until the offered load
// delivered stops improving and reports the first speed at the plateau.
func TestCapacityFindsPlateau(t *testing.T) {
	probe := func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: min(10*speed, 100), Health: "PASS"}, nil
	}
	d, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 20}, probe)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Plateau || d.PeakOfferedBps != 100 || d.PeakSpeed != 16 || len(d.Probes) != 7 {
		t.Errorf("peak %v at %v, plateau %v, %d probes", d.PeakOfferedBps, d.PeakSpeed, d.Plateau, len(d.Probes))
	}
	still, _ := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 4}, probe)
	if still.Plateau || still.Done {
		t.Errorf("a search capped before the plateau says it found one")
	}
}

// result is a probe's result: complete, storage_health status with one
// criterion (failed unless status is PASS), and QoS classes of 100
// requests, each within its target for the share given.
func result(status string, within map[string]float64) *schema.Result {
	res := &schema.Result{Complete: true, WallS: 10}
	res.Summary.StorageHealth.OverallStatus = "PASS"
	c := schema.Criterion{Name: "Storage Tier Read Total P95 < 200ms", Target: 200, Actual: 150, Unit: "ms", Passed: true}
	if status != "PASS" {
		res.Summary.StorageHealth.OverallStatus = "FAIL"
		c.Actual, c.Passed = 312, false
	}
	res.Summary.StorageHealth.Criteria = []schema.Criterion{c}
	res.Summary.StorageHealth.TotalCount = 1
	if c.Passed {
		res.Summary.StorageHealth.PassedCount = 1
	}
	targets := map[string]float64{"interactive": 50, "responsive": 100, "batch": 1000}
	for _, q := range []string{"interactive", "responsive", "batch"} {
		share, ok := within[q]
		if !ok {
			continue
		}
		p95 := targets[q] * 0.8
		if share < 0.95 {
			p95 = targets[q] * 1.258
		}
		res.Requests.ByQoS = append(res.Requests.ByQoS, schema.QoSStats{QoS: q, Count: 100, TargetP95MS: targets[q],
			WithinTarget: int64(100 * share), Compliance: share, Met: share >= 0.95, Latency: schema.Latency{P95US: 1000 * p95}})
	}
	return res
}

// TestProbeVerdicts judges probes of both kinds: pass and reason come from
// the same facts, the reason names a failed criterion with its figures or
// says what passed, and a capacity probe whose QoS classes miss their SLA
// is judged by its own criterion, storage_health, without a users
// search's reason.
func TestProbeVerdicts(t *testing.T) {
	for _, tt := range []struct {
		name, kind string
		res        *schema.Result
		pass       bool
		want, not  string
	}{
		{"users, a class misses its SLA", search.KindUsers, result("PASS", map[string]float64{"interactive": 0.932, "batch": 1}), false,
			"interactive p95 62.9 ms > 50 ms target (93.2 % of 100 requests within it, 95 % needed)", "batch p95"},
		{"users, every class meets it", search.KindUsers, result("PASS", map[string]float64{"interactive": 0.99, "batch": 1}), true,
			"every QoS class met its SLA (interactive 99.0 % within 50 ms, batch 100.0 % within 1000 ms) and storage_health PASS (1 of 1 criteria)", ""},
		{"users, storage_health fails", search.KindUsers, result("FAIL", map[string]float64{"batch": 1}), false,
			"storage_health FAIL: Storage Tier Read Total P95 < 200ms failed at 312.0 ms", "every QoS"},
		{"users, no class", search.KindUsers, result("PASS", nil), false, "no request of a QoS class completed", ""},
		{"capacity, storage_health passes", search.KindCapacity, result("PASS", map[string]float64{"interactive": 0.045}), true,
			"storage_health PASS (1 of 1 criteria): the load was served within the latency profile", "interactive"},
		{"capacity, storage_health fails", search.KindCapacity, result("FAIL", map[string]float64{"interactive": 1}), false,
			"storage_health FAIL: Storage Tier Read Total P95 < 200ms failed at 312.0 ms", "served"},
	} {
		p := search.Summarize(tt.kind, tt.res, tier2)
		if p.Pass != tt.pass || !strings.Contains(p.Reason, tt.want) || (tt.not != "" && strings.Contains(p.Reason, tt.not)) || p.NotMeasured != "" {
			t.Errorf("%s: pass %v, reason %q; want pass %v, reason with %q (and no %q)", tt.name, p.Pass, p.Reason, tt.pass, tt.want, tt.not)
		}
	}
	// Several failed criteria follow one "storage_health FAIL:", each with
	// its figures; a status without a failed criterion gives its reasons.
	two := result("FAIL", nil)
	two.Summary.StorageHealth.Criteria = append(two.Summary.StorageHealth.Criteria, schema.Criterion{Name: "Schedule Lag P95 < 1000ms",
		Reason: "lag behind the trace's schedule: p95 4211 ms >= 1000 ms limit"})
	if p := search.Summarize(search.KindCapacity, two, tier2); p.Pass || strings.Count(p.Reason, "storage_health") != 1 ||
		p.Reason != "storage_health FAIL: Storage Tier Read Total P95 < 200ms failed at 312.0 ms; lag behind the trace's schedule: p95 4211 ms >= 1000 ms limit" {
		t.Errorf("two failed criteria: pass %v, reason %q", p.Pass, p.Reason)
	}
	none := result("PASS", nil)
	none.Summary.StorageHealth = schema.StorageHealth{OverallStatus: schema.HealthNoData, Reasons: []string{"nothing the criteria judge ran"}}
	if p := search.Summarize(search.KindCapacity, none, tier2); p.Pass || p.Reason != "storage_health NO_DATA: nothing the criteria judge ran" {
		t.Errorf("NO_DATA: pass %v, reason %q", p.Pass, p.Reason)
	}
	// A capacity search keeps its probes' verdicts as judged.
	res := result("PASS", map[string]float64{"interactive": 0.045})
	d, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 3}, func(_ int, speed float64) (search.Probe, error) {
		r := *res
		r.Tiers = []schema.TierTotals{{Tier: "Tier-2", ReadOfferedBps: 1e6 * min(speed, 2)}}
		return search.Summarize(search.KindCapacity, &r, tier2), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Probes {
		if !p.Pass || strings.Contains(p.Reason, "interactive") {
			t.Errorf("capacity probe at --speed %g: pass %v, reason %q", p.Speed, p.Pass, p.Reason)
		}
	}
	// Incomplete or with failed operations: not a measurement.
	for _, r := range []*schema.Result{
		{Complete: false, IncompleteReason: "replay: Write Tier-2 Prefill \"k\": no space left on device", Errors: schema.ErrorStats{Count: 1}},
		{Complete: true, Errors: schema.ErrorStats{Count: 2, First: []string{"input/output error"}}},
	} {
		for _, kind := range []string{search.KindUsers, search.KindCapacity} {
			r.Summary.StorageHealth.OverallStatus = "PASS"
			p := search.Summarize(kind, r, tier2)
			if p.Pass || p.NotMeasured == "" || !strings.HasPrefix(p.Reason, "not a measurement: ") {
				t.Errorf("%s probe of %+v: pass %v, not measured %q, reason %q", kind, r, p.Pass, p.NotMeasured, p.Reason)
			}
		}
	}
}

// TestSearchStopsAtUnmeasuredProbe stops both searches at a probe that is
// not a measurement: the search is not done, says its answer is a lower
// bound and why, keeps what the probes before measured (a full disk's
// burst of bandwidth never becomes the peak; an I/O error never turns a
// passing answer into 0 users), and returns ErrNotMeasured.
func TestSearchStopsAtUnmeasuredProbe(t *testing.T) {
	calls := 0
	d, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 10}, func(_ int, speed float64) (search.Probe, error) {
		calls++
		if speed == 4 {
			return search.Probe{OfferedBps: 1e9, NotMeasured: "the run did not complete: no space left on device"}, nil
		}
		return search.Probe{OfferedBps: 10 * speed, Pass: true}, nil
	})
	if !errors.Is(err, search.ErrNotMeasured) || d.Done || !d.AnswerIsLowerBound || d.PeakOfferedBps != 20 || d.PeakSpeed != 2 ||
		calls != 3 || len(d.Probes) != 3 || !strings.Contains(d.LowerBoundReason, "no space left on device") || !strings.Contains(d.Reason, "at least") {
		t.Errorf("capacity: err %v, done %v, lower bound %v (%s), peak %v at %v after %d calls: %s",
			err, d.Done, d.AnswerIsLowerBound, d.LowerBoundReason, d.PeakOfferedBps, d.PeakSpeed, calls, d.Reason)
	}

	calls = 0
	u, err := search.Users(search.UsersOptions{Total: 12, MaxProbes: 12, Repeats: 2}, func(n int, _ float64) (search.Probe, error) {
		calls++
		if calls == 2 {
			return search.Probe{NotMeasured: "the run did not complete: input/output error"}, nil
		}
		return search.Probe{Pass: n <= 3}, nil
	})
	if !errors.Is(err, search.ErrNotMeasured) || u.Done || !u.AnswerIsLowerBound || u.Users != 3 || calls != 2 ||
		!strings.Contains(u.LowerBoundReason, "input/output error") || !strings.Contains(u.Reason, "at least 3 users") {
		t.Errorf("users: err %v, done %v, lower bound %v (%s), %d users after %d calls: %s",
			err, u.Done, u.AnswerIsLowerBound, u.LowerBoundReason, u.Users, calls, u.Reason)
	}

	// A probe that fails to run stops the search the same way.
	boom := errors.New("interrupted")
	u, err = search.Users(search.UsersOptions{Total: 12, MaxProbes: 12}, func(n int, _ float64) (search.Probe, error) {
		return search.Probe{}, boom
	})
	if !errors.Is(err, boom) || u.Done || !u.AnswerIsLowerBound || u.Users != 0 || len(u.Probes) != 0 {
		t.Errorf("users, probe error: err %v, done %v, lower bound %v, %d users, %d probes", err, u.Done, u.AnswerIsLowerBound, u.Users, len(u.Probes))
	}
}

// TestCapacitySaturatedFromFirstProbe stops after two probes when the
// first doubling of the load brings no more offered load, and says so,
// in GB/s (decimal) as every kvbench bandwidth; by default the search
// starts at a quarter of the trace's pace.
func TestCapacitySaturatedFromFirstProbe(t *testing.T) {
	var speeds []float64
	d, err := search.Capacity(search.CapacityOptions{MaxProbes: 12}, func(_ int, speed float64) (search.Probe, error) {
		speeds = append(speeds, speed)
		return search.Probe{OfferedBps: 2.5e9 + speed*4e7, Pass: true}, nil // saturated at any load, with a little noise
	})
	if err != nil {
		t.Fatal(err)
	}
	if !d.SaturatedFromFirstProbe || !d.Plateau || !d.Done || len(d.Probes) != 2 || speeds[0] != search.DefaultCapacityStart ||
		!strings.Contains(d.Reason, "saturated from the first probe") || d.PeakOfferedBps != 2.52e9 ||
		!strings.Contains(d.Reason, "changed the offered load delivered by +0.4 % (2.51 GB/s to 2.52 GB/s, under the 10 % that counts as improving)") ||
		!strings.HasSuffix(d.Reason, "at its plateau from the lowest load probed, --speed 0.25 (give a lower --speed to see the rise); peak offered load 2.52 GB/s at --speed 0.5") {
		t.Errorf("speeds %v: saturated %v, plateau %v, done %v, peak %v: %s", speeds, d.SaturatedFromFirstProbe, d.Plateau, d.Done, d.PeakOfferedBps, d.Reason)
	}
	// Rising at first: not saturated.
	d, _ = search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 12}, func(_ int, speed float64) (search.Probe, error) {
		return search.Probe{OfferedBps: min(1e8*speed, 4e8), Pass: true}, nil
	})
	if d.SaturatedFromFirstProbe || !d.Plateau || d.PeakSpeed != 4 ||
		d.Reason != "peak offered load 0.400 GB/s at --speed 4: the offered load delivered stopped improving (under 10 % over two doublings of the load) at --speed 16" {
		t.Errorf("rising: saturated %v, plateau %v, peak at %v: %s", d.SaturatedFromFirstProbe, d.Plateau, d.PeakSpeed, d.Reason)
	}
}

// tier2 is the storage tiers of a probe of the default tier map.
var tier2 = []string{schema.TierNVMe.String()}

// TestUsersProbeBehindSchedule: a users probe whose closed loop fell
// behind the schedule of the rows it releases at their trace times (rows
// of no user; the demotions and deletes of replayed users' objects that
// left-out users' requests carry) fails, though every QoS class met its
// SLA, and says why: storage_health judged those rows' lag. A probe of 38
// users passed with 168 such rows never released in its window, a
// warning alone saying so. Its users' rows keep no schedule: a probe
// whose every row is a user's is judged as before.
func TestUsersProbeBehindSchedule(t *testing.T) {
	for _, behind := range []bool{false, true} {
		res := result("PASS", map[string]float64{"batch": 1})
		res.Replay.Speed, res.Replay.RowsMissed = 1, 168
		res.Lag = schema.Latency{Count: 1000, P95US: 4e6, MaxUS: 5e6} // users' rows, and the scheduled ones
		res.ClosedLoop = &schema.ClosedLoopStats{Users: 38, WindowS: 10, RequestsLeft: 5}
		if behind {
			res.ClosedLoop.ScheduledLag = &schema.Latency{Count: 400, P95US: 2.5e6, MaxUS: 4e6}
		}
		res.Summary.StorageHealth = results.Health(res, &res.Summary)
		p := search.Summarize(search.KindUsers, res, tier2)
		named := strings.Contains(p.Reason, "storage_health FAIL: lag of the rows released at their trace times") &&
			strings.Contains(p.Reason, "p95 2500 ms >= 1000 ms limit")
		if p.Pass == behind || named != behind {
			t.Errorf("rows at trace times behind: %v: pass %v, reason %q", behind, p.Pass, p.Reason)
		}
		if v := results.ProbeVerdict(p); strings.HasPrefix(v, "PASS") == behind {
			t.Errorf("rows at trace times behind: %v: verdict %q", behind, v)
		}
	}
}
