package replay_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
)

// The tests of this file check that the result counts what succeeded, in
// the phase it happened: a call that failed is an error, not a sync, a
// prepared object or a rewritten one.

// TestFailedSyncNotCounted: under --fsync, a write whose fdatasync fails
// failed, and its sync is not one of the result's syncs. Before, the
// sync was counted as it was made, and a failed one read as done.
func TestFailedSyncNotCounted(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 256<<10, schema.TierNVMe, "a", schema.PhasePrefill, 1),
		rec(0, schema.OpWrite, 256<<10, schema.TierNVMe, "b", schema.PhasePrefill, 1),
	}
	nb, err := nvme.New(filepath.Join(t.TempDir(), "nvme"), nvme.Options{Direct: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	cfg.Speed, cfg.BlockSize, cfg.Fsync = 0, 128<<10, true
	rule := fault.IOError(fault.OpSync)
	rule.AfterCalls = 1 // the first write's sync passes, the second's fails
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": fault.Fail(nb, rule)})
	if !errors.Is(err, syscall.EIO) || res == nil {
		t.Fatalf("replay: %v, result %v; want the sync's EIO and a partial result", err, res != nil)
	}
	if res.Replay.Syncs != 1 || res.Errors.Count != 1 {
		t.Errorf("%d syncs, %d errors; want 1 and 1: the failed sync is an error, not a sync", res.Replay.Syncs, res.Errors.Count)
	}
}

// TestFailedColdCloseNotCounted: a cold object whose write fails (its
// close: the file's last error) is not prepared: cold_prepared and its
// bytes leave it out, and the run stops before its clock with the error.
// Before, it was counted as it was closed, whether the close succeeded or
// not.
func TestFailedColdCloseNotCounted(t *testing.T) {
	recs := []schema.Record{rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "cold", schema.PhaseDecode, 0)}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed = 0
	rb := fault.Fail(newRAM(t, 16<<20), fault.IOError(fault.OpClose))
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
	if !errors.Is(err, syscall.EIO) || res == nil || res.Complete {
		t.Fatalf("replay: %v, result %v; want the close's EIO and an incomplete result", err, res != nil)
	}
	if res.Replay.ColdPrepared != 0 || res.Replay.ColdPreparedBytes != 0 || res.Errors.Count != 1 {
		t.Errorf("cold prepared %d (%d bytes), %d errors; want none prepared and the one error",
			res.Replay.ColdPrepared, res.Replay.ColdPreparedBytes, res.Errors.Count)
	}
}

// TestFailedRematNotCounted: a read of an object kvreplay evicted is
// written again first; when that write fails, nothing was rewritten
// (rematerialised leaves it out) and the read failed: counted in the
// errors and as its cell's failed operation.
func TestFailedRematNotCounted(t *testing.T) {
	var recs []schema.Record
	for i := range 3 {
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("k", i), schema.PhasePrefill, 0))
	}
	recs = append(recs, rec(0, schema.OpRead, 1<<20, schema.TierNVMe, "k0", schema.PhaseDecode, 0))
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed, cfg.Capacity, cfg.Workers = 0, 2<<20, 1
	// k0's first close is its write's; its second, the rewrite's, fails.
	rule := fault.Rule{Op: fault.OpClose, Key: "2_k0", AfterCalls: 1, Err: syscall.EIO}
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Fail(newRAM(t, 16<<20), rule)})
	if !errors.Is(err, syscall.EIO) || res == nil {
		t.Fatalf("replay: %v, result %v; want the rewrite's EIO and a partial result", err, res != nil)
	}
	if res.Replay.CapacityEvictions == 0 {
		t.Fatalf("no capacity eviction: the test does not test what it says")
	}
	if res.Replay.Rematerialised != 0 || res.Errors.Count != 1 {
		t.Errorf("rematerialised %d, %d errors; want none rewritten and the one error", res.Replay.Rematerialised, res.Errors.Count)
	}
	if nv := tierOf(t, res, schema.TierNVMe); nv.ReadOps != 0 || nv.FailedOps != 1 {
		t.Errorf("Tier-2: %d reads, %d failed; want none and the read", nv.ReadOps, nv.FailedOps)
	}
}

// TestFailedOpsInTiers: a tier whose operations all failed stays in the
// result: its tier totals and its cell count them as failed, with their
// busy time, and count them in no operation, byte, bandwidth or latency.
// Before, the tier and its busy time were left out, as if it had not been
// used, and the cell showed 0 operations.
func TestFailedOpsInTiers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const size = 256 << 10
		recs := []schema.Record{
			rec(0, schema.OpWrite, size, schema.TierCPU, "a", schema.PhasePrefill, 1),
			rec(0, schema.OpWrite, size, schema.TierNVMe, "b", schema.PhasePrefill, 2),
		}
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "cpu", "disk"}
		cfg.Speed = 0
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{
			"cpu":  newRAM(t, 16<<20),
			"disk": fault.Delay(fault.Fail(newRAM(t, 16<<20), fault.IOError(fault.OpWrite)), 10*time.Millisecond),
		})
		if !errors.Is(err, syscall.EIO) || res == nil {
			t.Fatalf("replay: %v, result %v; want the write's EIO and a partial result", err, res != nil)
		}
		if res.Errors.Count != 1 {
			t.Errorf("%d errors, want 1", res.Errors.Count)
		}
		nv := tierOf(t, res, schema.TierNVMe)
		if nv.FailedOps != 1 || nv.WriteOps != 0 || nv.WriteBytes != 0 || nv.WriteDeviceBps != 0 || nv.WriteOfferedBps != 0 {
			t.Errorf("Tier-2 %+v; want one failed operation, no write, byte or rate", nv)
		}
		if nv.WriteBusyS != 0.01 || nv.BusyS != 0.01 {
			t.Errorf("Tier-2 busy %g s, writing %g s; want the failed write's 0.01 s", nv.BusyS, nv.WriteBusyS)
		}
		if cpu := tierOf(t, res, schema.TierCPU); cpu.FailedOps != 0 || cpu.WriteOps != 1 {
			t.Errorf("Tier-1: %d writes, %d failed; want 1 and none", cpu.WriteOps, cpu.FailedOps)
		}
		found := false
		for _, c := range res.Cells {
			if c.Tier != schema.TierNVMe.String() {
				continue
			}
			found = true
			if c.Op != "Write" || c.FailedOps != 1 || c.Ops != 0 || c.LogicalBytes != 0 || c.Latency.Count != 0 || c.DeviceBps != 0 {
				t.Errorf("Tier-2 cell %s %s: %d ops, %d failed, %d bytes, %d latencies, %g B/s; want the failed write alone",
					c.Op, c.Phase, c.Ops, c.FailedOps, c.LogicalBytes, c.Latency.Count, c.DeviceBps)
			}
		}
		if !found {
			t.Error("no Tier-2 cell")
		}
	})
}

// TestColdEvictionsNotMeasured: cold objects that do not fit a bounded
// Tier-2 together are evicted while they are written, before the clock:
// those evictions are setup_capacity_evictions, not the measured run's,
// which are the three that its reads' rewrites made. They were counted as
// the measured run's (4).
func TestColdEvictionsNotMeasured(t *testing.T) {
	var recs []schema.Record
	for i := range 3 {
		recs = append(recs, rec(0, schema.OpRead, 1<<20, schema.TierNVMe, fmt.Sprint("c", i), schema.PhaseDecode, 0))
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
	cfg.Speed, cfg.Capacity, cfg.Workers = 0, 2<<20, 1
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
	if err != nil {
		t.Fatal(err)
	}
	// c2's write evicts c0 before the clock; then each read rewrites its
	// object, evicting the oldest.
	if r := res.Replay; r.ColdPrepared != 3 || r.CapacityEvictions != 3 || r.SetupCapacityEvictions != 1 || r.Rematerialised != 3 {
		t.Errorf("cold %d, evictions %d, before the clock %d, rematerialised %d; want 3, 3, 1, 3",
			r.ColdPrepared, r.CapacityEvictions, r.SetupCapacityEvictions, r.Rematerialised)
	}
	if !slicesContains(res.Warnings, "evicted 3 least recently used objects itself in the measured run (3 read again were rewritten untimed first); "+
		"1 more while the cold objects were written, before the clock") {
		t.Errorf("warnings %q: want the evictions before the clock said apart", res.Warnings)
	}
}

// TestFailedLeftOutNotCounted: under --users, an object a left-out user
// wrote, which a replayed user reads, is written before the clock; when
// its write fails (its close), the run stops before the clock and its
// result does not say that the object was written. Before, it was counted
// as written when its write was dispatched.
func TestFailedLeftOutNotCounted(t *testing.T) {
	const mib = 1 << 20
	cfg, src, plan := leftOutSample(t)
	if plan.LeftOut != 1 {
		t.Fatalf("%d objects left out; want x", plan.LeftOut)
	}
	rb := fault.Fail(newRAM(t, 4*mib), fault.Rule{Op: fault.OpClose, Key: "1_x", Err: syscall.EIO})
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": rb}, replay.Hooks{})
	if !errors.Is(err, syscall.EIO) || res == nil || res.Complete {
		t.Fatalf("replay: %v, result %v; want x's EIO and an incomplete result", err, res != nil)
	}
	if slicesContains(res.Warnings, "that users left out wrote and the replayed users read were written untimed before the clock") {
		t.Errorf("warnings %q: x's write failed, but the result says it was written", res.Warnings)
	}
	if res.Replay.ColdPrepared != 1 {
		t.Errorf("cold prepared %d, want z's alone", res.Replay.ColdPrepared)
	}
}
