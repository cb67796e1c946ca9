package replay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// containing picks the objects whose names contain part.
func containing(part string) func(string) bool {
	return func(k string) bool { return strings.Contains(k, part) }
}

// TestSetupRowsBeforeClock: a trace whose sidecar says its measured
// window starts at 2 s (kvtrace's --precondition) has slow writes before
// it (200 ms each, 8 of them on 2 workers, one of them a request's) and
// measured rows from 2 s on. The rows before 2 s run as setup, before the
// clock: in no cell, request, lag or timeline second, counted in
// setup_rows; the measured rows are paced from 2 s (due at 0, 0.5 s and
// 1 s after the clock starts, at --speed 1), and one of them reads a
// setup row's object, which the setup wrote (nothing cold).
func TestSetupRowsBeforeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 200 * time.Millisecond
		var recs []schema.Record
		for i := range 8 {
			var req uint64
			if i == 7 {
				req = 100
			}
			recs = append(recs, rec(time.Duration(i)*100*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("precond_", i), schema.PhasePrefill, req))
		}
		recs = append(recs,
			rec(2*time.Second, schema.OpWrite, 4096, schema.TierCPU, "m0", schema.PhasePrefill, 1),
			rec(2500*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, "m1", schema.PhasePrefill, 2),
			rec(3*time.Second, schema.OpRead, 4096, schema.TierCPU, "precond_0", schema.PhaseDecode, 3))
		src := memTrace(t, recs)
		src.Meta = &trace.Meta{MeasuredFrom: 2}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers = 1, 2
		b := slowWriter{newRAM(t, 16<<20), delay, containing("precond_")}
		var started time.Time
		srcs := []replay.Source{src}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		plan, err := replay.Prepare(context.Background(), &cfg, srcs)
		if err != nil {
			t.Fatal(err)
		}
		if plan.WindowRows != 11 || plan.Peak["ram"] < 10*4096 {
			t.Errorf("the plan models %d rows, peak %d bytes; want 11, the setup rows' space counted", plan.WindowRows, plan.Peak["ram"])
		}
		// A --duration window of 0.9 s reaches from the setup to 2.9 s
		// of trace time (measured_from_s's 2 s and the window): the rows
		// but the last.
		wcfg := cfg
		wcfg.Duration = 900 * time.Millisecond
		if wp, err := replay.Prepare(context.Background(), &wcfg, srcs); err != nil || wp.WindowRows != 10 {
			t.Errorf("a 0.9 s window models %d rows (%v), want 10: counted from measured_from_s", wp.WindowRows, err)
		}
		t0 := time.Now()
		res, err := replay.Run(context.Background(), &cfg, plan, srcs, map[string]backend.Backend{"ram": b},
			replay.Hooks{Ready: func() error { started = time.Now(); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if setup := started.Sub(t0); setup < 800*time.Millisecond {
			t.Errorf("the clock started %v after the run: the setup's 8 writes of 200 ms on 2 workers take 800 ms before it", setup)
		}
		if r := res.Replay; r.SetupRows != 8 || r.RowsDone != 3 || r.Rows != 3 || r.ColdPrepared != 0 {
			t.Errorf("setup_rows %d, rows %d, rows_done %d, cold_prepared %d; want 8, 3, 3, 0", r.SetupRows, r.Rows, r.RowsDone, r.ColdPrepared)
		}
		var ops, writes int64
		for _, c := range res.Cells {
			ops += c.Ops
			if c.Op == schema.OpWrite.String() {
				writes += c.Ops
				if c.Latency.MaxUS >= float64(delay.Microseconds()) {
					t.Errorf("write latency max %.0f us: a setup write is in it", c.Latency.MaxUS)
				}
			}
		}
		if ops != 3 || writes != 2 {
			t.Errorf("cells count %d operations, %d writes; want 3 and 2, the measured rows'", ops, writes)
		}
		if res.Requests.Count != 3 {
			t.Errorf("%d requests measured, want 3 (the setup's is not)", res.Requests.Count)
		}
		if res.Lag.MaxUS >= 1000 {
			t.Errorf("lag max %.0f us: the measured rows are late, paced from the trace's start or behind the setup", res.Lag.MaxUS)
		}
		// Paced from 2 s: the last row is due 1 s after the clock starts,
		// not 3 s.
		if res.WallS < 1 || res.WallS > 1.1 {
			t.Errorf("wall %.3f s, want 1 s: the measured rows (2 s to 3 s) paced from measured_from_s", res.WallS)
		}
		if len(res.Timeline) > 2 {
			t.Errorf("timeline of %d seconds, want at most 2", len(res.Timeline))
		}
	})
}

// TestNoSetupWithoutSidecar: the same rows without a sidecar are all
// measured, paced from the first row, as always.
func TestNoSetupWithoutSidecar(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := []schema.Record{
			rec(0, schema.OpWrite, 4096, schema.TierCPU, "precond_0", schema.PhasePrefill, 0),
			rec(2*time.Second, schema.OpWrite, 4096, schema.TierCPU, "m0", schema.PhasePrefill, 1),
		}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed = 1
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Replay; r.SetupRows != 0 || r.RowsDone != 2 || res.WallS < 2 {
			t.Errorf("setup_rows %d, rows_done %d, wall %.3f s; want 0, 2, 2 s", r.SetupRows, r.RowsDone, res.WallS)
		}
	})
}

// TestSetupEvictionsSaid: evictions kvreplay made while the setup rows
// ran (a precondition that fills a bounded Tier-2) are counted apart from
// the measured run's (setup_capacity_evictions), and its warning says
// both. They were counted with the measured run's.
func TestSetupEvictionsSaid(t *testing.T) {
	var recs []schema.Record
	for i := range 4 {
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("pre", i), schema.PhasePrefill, 0))
	}
	recs = append(recs, rec(1500*time.Millisecond, schema.OpWrite, 1<<20, schema.TierNVMe, "k", schema.PhasePrefill, 0))
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed, cfg.Capacity, cfg.Workers = 0, 2<<20, 1
	src := memTrace(t, recs)
	src.Meta = &trace.Meta{MeasuredFrom: 1}
	res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Replay; r.SetupRows != 4 || r.CapacityEvictions != 1 || r.SetupCapacityEvictions != 2 {
		t.Fatalf("setup rows %d, evictions %d, setup evictions %d; want 4, 1 and 2", r.SetupRows, r.CapacityEvictions, r.SetupCapacityEvictions)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "evicted 1 least recently used objects itself in the measured run (0 read again were rewritten untimed first); 2 more while the setup rows ran")
	}
	if !found {
		t.Errorf("warnings %q: want the evictions during setup said", res.Warnings)
	}
}

// syncing is a backend whose objects take a Sync (a no-op), as a file's
// fdatasync under --fsync.
type syncing struct{ backend.Backend }

func (b syncing) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return syncObject{o}, nil
}

type syncObject struct{ backend.Object }

func (syncObject) Sync() error { return nil }

// TestSetupCountsNotMeasured: what the setup rows did (capacity
// evictions on a bounded Tier-2, a rematerialised read, synced writes,
// verified bytes) is in no count of the measured run, whose one read of a
// live object evicts, rewrites and syncs nothing and verifies its own
// bytes; the setup's evictions are said apart. They were counted with the
// measured run's: 3 evictions, 1 rematerialised, 4 syncs, 2 MiB verified.
func TestSetupCountsNotMeasured(t *testing.T) {
	var recs []schema.Record
	for i := range 4 {
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("pre", i), schema.PhasePrefill, 0))
	}
	recs = append(recs,
		// pre0 was evicted: rewritten untimed for its read, evicting pre2.
		rec(0, schema.OpRead, 1<<20, schema.TierNVMe, "pre0", schema.PhaseDecode, 0),
		rec(1500*time.Millisecond, schema.OpRead, 1<<20, schema.TierNVMe, "pre3", schema.PhaseDecode, 0))
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed, cfg.Capacity, cfg.Workers = 0, 2<<20, 1
	cfg.Fsync, cfg.Verify = true, true
	src := memTrace(t, recs)
	src.Meta = &trace.Meta{MeasuredFrom: 1}
	res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": syncing{newRAM(t, 16<<20)}})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Replay
	if r.SetupRows != 5 || r.RowsDone != 1 {
		t.Fatalf("setup rows %d, rows done %d; want 5 and 1", r.SetupRows, r.RowsDone)
	}
	if r.CapacityEvictions != 0 || r.Rematerialised != 0 || r.Syncs != 0 || r.VerifiedBytes != 1<<20 {
		t.Errorf("evictions %d, rematerialised %d, syncs %d, verified %d bytes; want 0, 0, 0 and 1 MiB: the measured run's",
			r.CapacityEvictions, r.Rematerialised, r.Syncs, r.VerifiedBytes)
	}
	if r.SetupCapacityEvictions != 3 {
		t.Errorf("setup evictions %d, want 3", r.SetupCapacityEvictions)
	}
}
