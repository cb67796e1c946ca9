package replay_test

import (
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestFailedTaskStopsItsBlocks: once a block of an operation failed, the
// operation has failed, and its blocks not yet submitted are not: the
// device is not kept busy moving the rest of an object (here 64 blocks)
// whose operation is already a failure, ahead of the run's stop. Only
// the blocks in flight when the first failed (the engine's queue: twice
// --queue-depth) reach the backend.
func TestFailedTaskStopsItsBlocks(t *testing.T) {
	const block, blocks = 16 << 10, 64
	recs := []schema.Record{rec(0, schema.OpWrite, block*blocks, schema.TierCPU, "k", schema.PhasePrefill, 1)}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.BlockSize, cfg.QueueDepth, cfg.Engine = 0, block, 1, "psync"
	rb := fault.Record(fault.Fail(newRAM(t, 4<<20), fault.IOError(fault.OpWrite)))
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
	if err == nil || res == nil || res.Errors.Count != 1 {
		t.Fatalf("error %v, result %v: want the write's failure", err, res)
	}
	writes := 0
	for _, c := range rb.Log() {
		if c.Op == fault.OpWrite {
			writes++
		}
	}
	if writes > 2*cfg.QueueDepth {
		t.Errorf("%d of the failed write's %d blocks were written; want at most the %d in flight when the first failed", writes, blocks, 2*cfg.QueueDepth)
	}
}
