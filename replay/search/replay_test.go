package search_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// usersTrace is users users issuing requests requests each, back to
// back, of the batch class (1 s at p95); a request writes then reads its
// own 64 KiB object on Tier-1.
func usersTrace(t *testing.T, users, requests int) replay.Source {
	return usersTraceGap(t, users, requests, time.Millisecond)
}

// usersTraceGap is usersTrace with each user's requests gap apart in
// trace time: a probe at --speed 1 (or closed-loop, gap less each
// request's time) takes requests times gap to run out of them, which a
// probe's window must not outlast (search.Summarize).
func usersTraceGap(t *testing.T, users, requests int, gap time.Duration) replay.Source {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs := replaytest.UserRecords(users, requests, gap, 64<<10, schema.TierCPU, schema.QoSBatch)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	return replay.Source{Name: "users", Rescan: true, Open: func() (*trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(data)), nil
	}}
}

// prober replays src with cfg on a fresh RAM backend behind decorate,
// closed-loop with n users or open-loop at speed, for a search of kind.
func prober(t *testing.T, kind string, cfg replay.Config, src replay.Source, decorate func(backend.Backend) backend.Backend) search.Prober {
	return func(n int, speed float64) (search.Probe, error) {
		c := cfg
		if n > 0 {
			c.Users = n
		} else {
			c.Speed = speed
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		plan, err := replay.Prepare(context.Background(), &c, []replay.Source{src})
		if err != nil {
			return search.Probe{}, err
		}
		b, err := ram.New(256 << 20)
		if err != nil {
			return search.Probe{}, err
		}
		defer b.Close()
		res, err := replay.Run(context.Background(), &c, plan, []replay.Source{src}, map[string]backend.Backend{"ram": decorate(b)}, replay.Hooks{})
		if res == nil {
			return search.Probe{}, err
		}
		// A run stopped by a failed operation returns its result, marked
		// incomplete, with the error, as kvreplay's probes do.
		return search.Summarize(kind, res, search.StorageOf(res)), nil
	}
}

// TestUsersSearchFindsKnee searches a device whose latency is 20 ms up to
// 12 operations in flight and rises 800 ms per operation beyond (to at
// most 1.7 s, so that probes far past the knee end soon): with each
// user's request a write then a read, n users keep at most n operations in
// flight, so a batch request (1 s at p95) takes about 40 ms up to 12 users
// and 1.6 s from 13. The margins on both sides are wide enough that a
// loaded machine (-race, the suite's packages in parallel), which delays
// wakeups by tens of milliseconds, leaves the knee where it is. The search
// answers within 10 % of 12, and every probe replayed the number of users
// it names.
func TestUsersSearchFindsKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dozen timed replays")
	}
	const knee = 12
	curve := func(n int) time.Duration {
		if n <= knee {
			return 20 * time.Millisecond
		}
		return min(20*time.Millisecond+time.Duration(n-knee)*800*time.Millisecond, 1700*time.Millisecond)
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.ClosedLoop, cfg.Duration = 0, true, 500*time.Millisecond
	probe := prober(t, search.KindUsers, cfg, usersTrace(t, 40, 100), func(b backend.Backend) backend.Backend { return fault.Load(b, curve) })
	seen := 0
	counting := func(n int, speed float64) (search.Probe, error) {
		p, err := probe(n, speed)
		seen++
		return p, err
	}
	d, err := search.Users(search.UsersOptions{Total: 40, MaxProbes: 14, Repeats: 2}, counting)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Probes {
		t.Logf("%d users: pass %v %s, p95 %v, %.0f requests/s", p.Users, p.Pass, p.Reason, p.P95MSByQoS, p.RequestsPerSecond)
	}
	if seen != len(d.Probes) || seen < 3 {
		t.Fatalf("%d probes ran, the document lists %d", seen, len(d.Probes))
	}
	if lo, hi := 0.9*knee, 1.1*knee; float64(d.Users) < lo || float64(d.Users) > hi {
		t.Errorf("answer %d users, want %d within 10%%: %s", d.Users, knee, d.Reason)
	}
}

// TestCapacitySearchFindsPlateau searches a device of 8 ms per operation
// behind 4 workers: at most 500 operations a second, which the trace's 100
// a second at --speed 1 reaches from --speed 8. The search finds the
// plateau there, and its peak is what the device delivers; the rates are
// low enough that a loaded machine's CPU is never the limit.
func TestCapacitySearchFindsPlateau(t *testing.T) {
	if testing.Short() {
		t.Skip("runs timed replays")
	}
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, trace.WriterOptions{})
	for i := range 20000 {
		r := schema.Record{Time: time.Duration(i) * 10 * time.Millisecond, Op: schema.OpWrite, Size: 64 << 10, Tier: schema.TierCPU,
			Key: []byte(fmt.Sprintf("k%d", i%500)), Phase: schema.PhasePrefill}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data := buf.Bytes()
	src := replay.Source{Name: "writes", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Workers, cfg.Duration = 4, 500*time.Millisecond
	probe := prober(t, search.KindCapacity, cfg, src, func(b backend.Backend) backend.Backend { return fault.Delay(b, 8*time.Millisecond) })
	d, err := search.Capacity(search.CapacityOptions{Start: 0.5, MaxProbes: 10}, probe)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Probes {
		t.Logf("speed %g: offered load %s", p.Speed, replay.FormatRate(p.OfferedBps))
	}
	if !d.Plateau {
		t.Fatalf("no plateau: %s", d.Reason)
	}
	// The ceiling is a bound: a loaded machine's sleeps overshoot, which
	// lowers the plateau but not the shape.
	const ceiling = 500 * (64 << 10) // bytes/s at 4 workers of 8 ms
	if d.PeakOfferedBps > 1.05*ceiling {
		t.Errorf("peak offered load %s, above the device's ceiling of %s", replay.FormatRate(d.PeakOfferedBps), replay.FormatRate(ceiling))
	}
	if d.PeakSpeed < 4 || d.Probes[0].OfferedBps > 0.25*d.PeakOfferedBps {
		t.Errorf("peak at --speed %g; the first probe (%g) delivered %s", d.PeakSpeed, d.Probes[0].Speed, replay.FormatRate(d.Probes[0].OfferedBps))
	}
}

// TestSearchStopsAtFault replays searches whose second probe fails part
// way, by the fault decorator: an I/O error in a users search, a full disk
// in a capacity search (both run a second probe, whatever the first
// found). Each stops there, not done,
// with the answer of the probes before as a lower bound, and
// ErrNotMeasured: the users search keeps the users that passed, and the
// capacity search's peak is never the stopped probe's.
func TestSearchStopsAtFault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs timed replays")
	}
	faulty := func(at int, rule fault.Rule) func(backend.Backend) backend.Backend {
		n := 0
		return func(b backend.Backend) backend.Backend {
			n++
			if n == at {
				return fault.Fail(b, rule)
			}
			return b
		}
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	// 50 requests 10 ms apart: at --speed 1 (the closed loop's think time
	// too), 500 ms of them, which no probe's 200 ms window outlasts.
	cfg.Speed, cfg.ClosedLoop, cfg.Duration = 1, true, 200*time.Millisecond
	src := usersTraceGap(t, 8, 50, 10*time.Millisecond)
	eio := fault.IOError(fault.OpWrite)
	eio.AfterCalls = 5
	probe := prober(t, search.KindUsers, cfg, src, faulty(2, eio))
	d, err := search.Users(search.UsersOptions{Total: 8, MaxProbes: 10, Repeats: 2}, probe)
	for _, p := range d.Probes {
		t.Logf("%d users: pass %v: %s", p.Users, p.Pass, p.Reason)
	}
	if !errors.Is(err, search.ErrNotMeasured) || d.Done || !d.AnswerIsLowerBound || len(d.Probes) != 2 || d.Users != 2 ||
		!d.Probes[0].Pass || d.Probes[1].NotMeasured == "" || !strings.Contains(d.LowerBoundReason, "input/output error") {
		t.Errorf("users: err %v, done %v, lower bound %v (%s), %d users after %d probes: %s",
			err, d.Done, d.AnswerIsLowerBound, d.LowerBoundReason, d.Users, len(d.Probes), d.Reason)
	}

	cfg.ClosedLoop = false
	full := fault.NoSpace(fault.OpWrite)
	full.AfterCalls = 5
	probe = prober(t, search.KindCapacity, cfg, src, faulty(2, full))
	c, err := search.Capacity(search.CapacityOptions{Start: 1, MaxProbes: 10}, probe)
	for _, p := range c.Probes {
		t.Logf("--speed %g: %s, pass %v: %s", p.Speed, replay.FormatRate(p.OfferedBps), p.Pass, p.Reason)
	}
	if !errors.Is(err, search.ErrNotMeasured) || c.Done || !c.AnswerIsLowerBound || len(c.Probes) != 2 || c.SaturatedFromFirstProbe ||
		c.PeakSpeed != 1 || c.PeakOfferedBps != c.Probes[0].OfferedBps || c.Probes[1].NotMeasured == "" ||
		!strings.Contains(c.LowerBoundReason, "no space left on device") {
		t.Errorf("capacity: err %v, done %v, lower bound %v (%s), peak %v at %v after %d probes: %s",
			err, c.Done, c.AnswerIsLowerBound, c.LowerBoundReason, c.PeakOfferedBps, c.PeakSpeed, len(c.Probes), c.Reason)
	}
}

// TestUsersSearchKeepsQoSMix searches a trace whose first users to appear
// are all batch class (then interactive, then responsive users): every
// probe of at least 3 users replays users of every class, in proportion.
func TestUsersSearchKeepsQoSMix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs timed replays")
	}
	recs := replaytest.UserRecords(12, 20, 10*time.Millisecond, 64<<10, schema.TierCPU, schema.QoSBatch)
	for i := range recs {
		switch u := recs[i].User; {
		case u > 9:
			recs[i].QoS = schema.QoSResponsive
		case u > 6:
			recs[i].QoS = schema.QoSInteractive
		}
	}
	var buf bytes.Buffer
	w, _ := trace.NewWriter(&buf, trace.WriterOptions{})
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	src := replay.Source{Name: "mixed", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	// 20 requests 10 ms apart, the think time at --speed 1: 200 ms of
	// them, which the 100 ms window does not outlast.
	cfg.Speed, cfg.ClosedLoop, cfg.Duration = 1, true, 100*time.Millisecond
	probe := prober(t, search.KindUsers, cfg, src, func(b backend.Backend) backend.Backend { return b })
	// A system that serves 3 users and no more, whatever their classes.
	judged := func(n int, speed float64) (search.Probe, error) {
		p, err := probe(n, speed)
		p.Pass = n <= 3
		return p, err
	}
	d, err := search.Users(search.UsersOptions{Total: 12, MaxProbes: 8, Repeats: 1}, judged)
	if err != nil {
		t.Fatal(err)
	}
	if d.UserSelection == "" || d.Users != 3 {
		t.Errorf("answer %d users, selection %q", d.Users, d.UserSelection)
	}
	for _, p := range d.Probes {
		got := p.UsersByQoS
		total := got["batch"] + got["interactive"] + got["responsive"]
		t.Logf("%d users: %v", p.Users, got)
		if total != p.Users || (p.Users >= 3 && (got["interactive"] < 1 || got["responsive"] < 1 || got["batch"] < got["interactive"])) {
			t.Errorf("a probe of %d users replayed %v", p.Users, got)
		}
	}
}
