package replay_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The tests of time run in synctest bubbles: the clock the replay reads
// (its default Clock, the time package's) is the bubble's, which moves
// only when every goroutine of the run waits. A row is then dispatched at
// its due time exactly, a delayed device takes its delay exactly, and a
// parallel load on the machine changes nothing.

// TestPacing replays rows at known trace times at several speeds on a
// device slower than the rows' spacing: each row's I/O starts at its trace
// time divided by the speed, exactly (an open loop does not wait for the
// device), no row lags its schedule, and the run lasts to the last row's
// time plus the device's delay.
func TestPacing(t *testing.T) {
	at := []time.Duration{0, 10 * time.Millisecond, 25 * time.Millisecond, 100 * time.Millisecond, time.Second}
	const delay = 30 * time.Millisecond
	for _, speed := range []float64{1, 2, 0.5} {
		t.Run(fmt.Sprint("speed=", speed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var recs []schema.Record
				for i, a := range at {
					recs = append(recs, rec(a, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("k", i), schema.PhasePrefill, 0))
				}
				cfg := replay.DefaultConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
				cfg.Speed = speed
				rb := fault.Record(fault.Delay(newRAM(t, 16<<20), delay))
				begin := time.Now()
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
				if err != nil {
					t.Fatal(err)
				}
				starts := map[string]time.Time{}
				for _, c := range rb.Log() {
					if c.Op == fault.OpWrite {
						starts[c.Key] = c.Start
					}
				}
				scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }
				for i, a := range at {
					got, ok := starts[fmt.Sprint("1_k", i)]
					if want := scaled(a); !ok || got.Sub(begin) != want {
						t.Errorf("row %d (trace time %v) started at %v, want %v", i, a, got.Sub(begin), want)
					}
				}
				if res.Lag.MaxUS > 1 { // the histogram's floor: 0 reads as 1 us
					t.Errorf("lag max %.0f us, want 0: every row was dispatched at its due time", res.Lag.MaxUS)
				}
				if want := (scaled(at[len(at)-1]) + delay).Seconds(); res.WallS != want {
					t.Errorf("the run lasted %v s, want %v (the last row's time plus the delay)", res.WallS, want)
				}
			})
		})
	}
}

// TestPacingBehindSlowDevice: rows that wait behind a slow device (one
// worker) are dispatched late, and the lag says by how much: the k-th row
// of rows 1 ms apart on a 10 ms device waits for the k before it.
func TestPacingBehindSlowDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, gap, delay = 20, time.Millisecond, 10 * time.Millisecond
		recs := writes(n, gap)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.QueueDepth = 1, 1, 1
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), delay)})
		if err != nil {
			t.Fatal(err)
		}
		// Row k starts at k*delay, due at k*gap: it lags k*(delay-gap).
		if want := float64((n-1)*(delay-gap)) / 1e3; res.Lag.MaxUS < want*0.99 || res.Lag.MaxUS > want*1.01 {
			t.Errorf("lag max %.0f us, want %.0f", res.Lag.MaxUS, want)
		}
		if want := (n * delay).Seconds(); res.WallS != want {
			t.Errorf("the run lasted %v s, want %v", res.WallS, want)
		}
	})
}

// TestCancelMidRun cancels a paced run at 1.05 s of a 10 s trace: the run
// stops there, incomplete, its error the cancellation, having done the
// rows due before it and no other.
func TestCancelMidRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(100, 100*time.Millisecond)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		src := memTrace(t, recs)
		plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			time.Sleep(1050 * time.Millisecond)
			cancel()
		}()
		res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 16<<20)}, replay.Hooks{})
		if !errors.Is(err, context.Canceled) || res == nil || res.Complete {
			t.Fatalf("error %v, result complete %v", err, res != nil && res.Complete)
		}
		if res.Replay.RowsDone != 11 || res.WallS != 1.05 {
			t.Errorf("%d rows done in %v s; want the 11 due by 1.05 s, and to stop there", res.Replay.RowsDone, res.WallS)
		}
	})
}

// fastClock is a Clock that runs rate times faster than the wall clock,
// from base.
type fastClock struct {
	base, real time.Time
	rate       float64
}

func (c *fastClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.real)) * c.rate))
}

func (c *fastClock) AfterFunc(d time.Duration, f func()) replay.Timer {
	return &fastTimer{c: c, t: time.AfterFunc(time.Duration(float64(d)/c.rate), f)}
}

type fastTimer struct {
	c *fastClock
	t *time.Timer
}

func (t *fastTimer) Stop() bool { return t.t.Stop() }
func (t *fastTimer) Reset(d time.Duration) bool {
	return t.t.Reset(time.Duration(float64(d) / t.c.rate))
}

// TestPacingOnInjectedClock runs a paced trace of a minute on a clock
// (Hooks.Clock) 6000 times faster than the wall clock: the run reads its
// time from it alone, so it starts at the clock's time, lasts the trace's
// minute on it, and dispatches every row.
func TestPacingOnInjectedClock(t *testing.T) {
	recs := writes(61, time.Second)
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	src := memTrace(t, recs)
	plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	clk := &fastClock{base: base, real: time.Now(), rate: 6000}
	res, err := replay.Run(t.Context(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 16<<20)}, replay.Hooks{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if res.Started.Year() != 2001 || res.WallS < 60 || res.Replay.RowsDone != 61 {
		t.Errorf("started %v, lasted %.1f s on the clock, %d rows done; want 2001, at least the trace's 60 s, 61", res.Started, res.WallS, res.Replay.RowsDone)
	}
}

// TestWindowClosesBehindSchedule: a --duration window that closes while
// rows already due wait for a worker (the device is slower than the
// trace) says how many it never released, across batches, and counts each
// in the lag, so that a run whose released rows kept a low lag does not
// pass for one that kept the trace's pace; at --speed max, where no row is
// late, it says nothing. BEHIND SCHEDULE is said where, and only where,
// storage_health's schedule criterion fails: rows left 49 ms late keep
// the lag's p95 under its 1 s; left 20 s late, they fail it (an 8B
// trace's run had said BEHIND SCHEDULE for 502 rows of 520,377 and
// passed the criterion, and another failed it saying nothing).
func TestWindowClosesBehindSchedule(t *testing.T) {
	for _, tc := range []struct {
		name          string
		speed         float64
		delay, window time.Duration
		held, behind  bool
	}{
		{"paced", 1, 10 * time.Millisecond, 55 * time.Millisecond, true, false},
		{"paced, far behind", 1, 2 * time.Second, 20 * time.Second, true, true},
		{"max", 0, 10 * time.Millisecond, 55 * time.Millisecond, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n, gap = 600, 10 * time.Microsecond
				recs := writes(n, gap)
				cfg := replay.DefaultConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
				cfg.Speed, cfg.Workers, cfg.QueueDepth, cfg.Duration = tc.speed, 1, 1, tc.window
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), tc.delay)})
				if err != nil {
					t.Fatal(err)
				}
				// A row at a time: a few rows run in the window, and
				// every row is due within its first 6 ms.
				rel := res.Replay.Rows
				if rel == 0 || rel > 20 {
					t.Fatalf("%d rows released, want a few", rel)
				}
				want := fmt.Sprintf("%d rows due before the --duration window closed were never released (%d were)", n-rel, rel)
				held, behind := false, ""
				for _, w := range res.Warnings {
					held = held || strings.HasPrefix(w, want)
					if strings.HasPrefix(w, "BEHIND SCHEDULE") {
						behind = w
					}
				}
				if held != tc.held {
					t.Errorf("warnings %q: one starting %q: %v, want %v", res.Warnings, want, held, tc.held)
				}
				_, failed := results.BehindSchedule(res.Summary.StorageHealth)
				if failed != tc.behind || (behind != "") != tc.behind || (tc.behind && !strings.Contains(behind, "the system did not keep the trace's pace")) {
					t.Errorf("schedule criterion failed: %v, BEHIND SCHEDULE warning %q; want both %v", failed, behind, tc.behind)
				}
				// The rows never released count in the lag, late by at
				// least the time from when each was due to the window's
				// end (49 ms and more in the first case).
				if missed := res.Replay.RowsMissed; tc.held && (missed != n-rel || res.Lag.Count != n || res.Lag.P50US < float64(tc.window-6*time.Millisecond)/1e3) {
					t.Errorf("%d rows missed, lag of %d rows, p50 %.0f us; want %d, %d and at least %v", missed, res.Lag.Count, res.Lag.P50US, n-rel, n, tc.window-6*time.Millisecond)
				}
			})
		})
	}
}

// TestBehindScheduleWithoutMissedRows: a run that released every row, each
// late by more than a second, fails the schedule criterion and says BEHIND
// SCHEDULE, though no window closed on a row.
func TestBehindScheduleWithoutMissedRows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(20, time.Millisecond)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.QueueDepth = 1, 1, 1
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 500*time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		c, failed := results.BehindSchedule(res.Summary.StorageHealth)
		found := false
		for _, w := range res.Warnings {
			found = found || w == "BEHIND SCHEDULE: "+c.Reason
		}
		if res.Replay.RowsMissed != 0 || res.Replay.RowsDone != 20 || !failed || !found || res.Summary.StorageHealth.OverallStatus != results.HealthFail {
			t.Errorf("%d rows missed, %d done, schedule criterion %+v (failed %v), BEHIND SCHEDULE said %v, health %s; want 0, 20, failed, said, FAIL: %q",
				res.Replay.RowsMissed, res.Replay.RowsDone, c, failed, found, res.Summary.StorageHealth.OverallStatus, res.Warnings)
		}
	})
}

// TestWindowClosesOnBacklogFails: a run that keeps the trace's pace until
// a burst it cannot serve, and whose window closes on most of the burst,
// fails storage_health's schedule criterion. Of the rows it released, few
// were a second late; counted with the rows it never released, each late
// by at least the time from when it was due to the window's end, more
// than 5 % were, so the lag p95 is over a second. Before, the rows never
// released were not counted, and the run passed.
func TestWindowClosesOnBacklogFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const steady, burst, delay = 1000, 500, 10 * time.Millisecond
		var recs []schema.Record
		for i := range steady { // one row per 20 ms: served on time
			recs = append(recs, rec(time.Duration(i)*20*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("s", i), schema.PhasePrefill, 0))
		}
		at := time.Duration(steady) * 20 * time.Millisecond
		for i := range burst { // all due at once: 5 s of work
			recs = append(recs, rec(at, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("b", i), schema.PhasePrefill, 0))
		}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.QueueDepth = 1, 1, 1
		cfg.Duration = at + 1500*time.Millisecond
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), delay)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.Rows+res.Replay.RowsMissed != steady+burst || res.Replay.RowsMissed < burst/2 {
			t.Fatalf("%d rows released, %d missed; want %d in all, most of the burst missed", res.Replay.Rows, res.Replay.RowsMissed, steady+burst)
		}
		t.Logf("%d rows released, %d missed, lag p95 %.3f s", res.Replay.Rows, res.Replay.RowsMissed, res.Lag.P95US/1e6)
		h := res.Summary.StorageHealth
		failed := ""
		for _, c := range h.Criteria {
			if !c.Passed {
				failed += c.Name + "; "
			}
		}
		if h.OverallStatus != results.HealthFail || !strings.HasPrefix(failed, "Schedule Lag P95") || res.Lag.P95US < 1e6 {
			t.Errorf("storage_health %s (failed: %s), lag p95 %.0f us; want FAIL on the schedule lag, p95 over a second", h.OverallStatus, failed, res.Lag.P95US)
		}
	})
}

// TestStoppedRunCountsOnlyRowsRun stops a run while rows it released wait
// for the device: those rows complete without running (skipped), and
// rows_done counts the rows that ran, as the cells do, not them too (a
// truncated trace's replay said 1551 rows done of which 1301 ran).
func TestStoppedRunCountsOnlyRowsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(200, 0)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.QueueDepth = 0, 1
		src := memTrace(t, recs)
		plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			time.Sleep(35 * time.Millisecond)
			cancel()
		}()
		res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond)}, replay.Hooks{})
		if !errors.Is(err, context.Canceled) || res == nil {
			t.Fatalf("error %v", err)
		}
		var ops int64
		for _, c := range res.Cells {
			ops += c.Ops
		}
		if res.Replay.RowsDone != ops || ops == 0 || res.Replay.Rows <= ops {
			t.Errorf("%d rows released, %d done, %d ran (the cells' ops); want done = ran, fewer than released", res.Replay.Rows, res.Replay.RowsDone, ops)
		}
	})
}
