package replay_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// slowRemove is a backend whose objects take d to remove (a file system's
// unlink of a large file).
type slowRemove struct {
	backend.Backend
	d time.Duration
}

func (b slowRemove) Caps() backend.Caps {
	c := b.Backend.Caps()
	c.FastMeta = false // its removes sleep: off the loop
	return c
}

func (b slowRemove) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return slowRemoveObject{o, b.d}, nil
}

type slowRemoveObject struct {
	backend.Object
	d time.Duration
}

func (o slowRemoveObject) Remove() error {
	time.Sleep(o.d)
	return o.Object.Remove()
}

// TestDemotionSourceRemoveNotTier2Busy replays a demotion, Tier-1 ->
// Tier-2, whose Tier-1 copy takes 100 ms to remove and whose Tier-2 write
// takes 10 ms: the removal is Tier-1's work, so Tier-2's write busy time
// (and the device rate over it) and its Evict write's latency are the
// write's 10 ms. Before, the write's interval ran until the source copy on
// the other tier was gone, and Tier-2 read as busy for 110 ms.
func TestDemotionSourceRemoveNotTier2Busy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := demoteK(t, map[string]backend.Backend{
			"cpu":  slowRemove{newRAM(t, 16<<20), 100 * time.Millisecond},
			"disk": fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond),
		})
		if err != nil || res.Replay.RowsDone != 3 {
			t.Fatalf("%v; %d of 3 rows", err, res.Replay.RowsDone)
		}
		nv := tierOf(t, res, schema.TierNVMe)
		if nv.WriteBusyS != 0.01 || nv.BusyS != 0.01 {
			t.Errorf("Tier-2 busy %g s, writing %g s; want 0.01 s, its write's: the Tier-1 copy's removal is not Tier-2's", nv.BusyS, nv.WriteBusyS)
		}
		if want := float64(demoteKSize) / 0.01; nv.WriteDeviceBps != want {
			t.Errorf("Tier-2 write device rate %g bytes/s, want %g", nv.WriteDeviceBps, want)
		}
		for _, c := range res.Cells {
			if c.Tier == schema.TierNVMe.String() && c.Op == schema.OpWrite.String() && c.Latency.MaxUS > 10_500 {
				t.Errorf("Tier-2 Evict write latency max %g us, want its 10 ms write", c.Latency.MaxUS)
			}
		}
	})
}

// TestDemotionSourceRemoveFailureFailsMove replays a demotion, Tier-1 ->
// Tier-2, whose Tier-1 copy cannot be removed (EIO): the move is one
// operation, which failed: counted once, as an error, and in no figure of
// Tier-2, as any failed operation. Before, its write counted as a
// success (an op, its bytes and latency on Tier-2) and its error as a
// failed operation too: one row in both.
func TestDemotionSourceRemoveFailureFailsMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := demoteK(t, map[string]backend.Backend{
			"cpu":  fault.Fail(newRAM(t, 16<<20), fault.IOError(fault.OpRemove)),
			"disk": fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond),
		})
		if err == nil || !errors.Is(err, syscall.EIO) {
			t.Fatalf("replay: %v; want the removal's EIO", err)
		}
		if res == nil {
			t.Fatal("no partial result")
		}
		if res.Errors.Count != 1 || len(res.Errors.First) != 1 || !strings.Contains(res.Errors.First[0], "removing its copy on Tier-1") {
			t.Errorf("errors %+v; want one, the removal of the Tier-1 copy", res.Errors)
		}
		for _, tt := range res.Tiers {
			if tt.Tier == schema.TierNVMe.String() && (tt.WriteOps != 0 || tt.WriteBytes != 0) {
				t.Errorf("Tier-2 counts %d writes of %d bytes; want none: the move failed", tt.WriteOps, tt.WriteBytes)
			}
		}
		for _, c := range res.Cells {
			if c.Tier == schema.TierNVMe.String() && c.Ops != 0 {
				t.Errorf("Tier-2 %s %s cell counts %d ops; want none", c.Op, c.Phase, c.Ops)
			}
		}
		if cpu := tierOf(t, res, schema.TierCPU); cpu.WriteOps != 1 || cpu.ReadOps != 1 {
			t.Errorf("Tier-1 counts %d writes and %d reads; want 1 and 1 (the Prefill write, the Evict read)", cpu.WriteOps, cpu.ReadOps)
		}
	})
}

// demoteKSize is the size of the object demoteK moves.
const demoteKSize = 256 << 10

// demoteK replays, at --speed max, a write of k to Tier-1 ("cpu") and its
// demotion to Tier-2 ("disk"), on the backends given.
func demoteK(t *testing.T, backends map[string]backend.Backend) (*schema.Result, error) {
	t.Helper()
	recs := []schema.Record{
		rec(0, schema.OpWrite, demoteKSize, schema.TierCPU, "k", schema.PhasePrefill, 1),
		rec(0, schema.OpRead, demoteKSize, schema.TierCPU, "k", schema.PhaseEvict, 2),
		rec(0, schema.OpWrite, demoteKSize, schema.TierNVMe, "k", schema.PhaseEvict, 2),
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "cpu", "disk"}
	cfg.Speed = 0
	return runReplay(t, cfg, memTrace(t, recs), backends)
}
