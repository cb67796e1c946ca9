package replay_test

import (
	"errors"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestEnginesFailBeforeClock: an I/O engine that cannot start (here a
// mover's, through Hooks.Movers; io_uring or a buffer's mmap refused by
// the kernel's limits) stops the run before its clock, and Run returns its
// result as for any stop there: incomplete, the reason naming the phase,
// nothing measured, storage_health INCOMPLETE. Before, it returned none,
// and kvreplay wrote no document.
func TestEnginesFailBeforeClock(t *testing.T) {
	recs := []schema.Record{rec(0, schema.OpWrite, 64<<10, schema.TierCPU, "a", schema.PhasePrefill, 1)}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	src := memTrace(t, recs)
	plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	refused := errors.New("io_uring_setup: cannot allocate memory")
	hooks := replay.Hooks{Movers: []ioengine.Factory{func(ioengine.Params) (ioengine.Engine, error) { return nil, refused }},
		Ready: func() error { t.Error("Ready called after the engines failed"); return nil }}
	res, err := replay.Run(t.Context(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 16<<20)}, hooks)
	if !errors.Is(err, refused) || res == nil {
		t.Fatalf("result %v, error %v; want a result and the engine's error", res != nil, err)
	}
	const want = "replay: before the clock: starting the I/O engines: io_uring_setup: cannot allocate memory"
	if res.Complete || res.IncompleteReason != want || err.Error() != want {
		t.Errorf("complete %v, reason %q, error %q; want incomplete, %q", res.Complete, res.IncompleteReason, err, want)
	}
	if res.WallS != 0 || len(res.Cells) != 0 || res.Replay.RowsDone != 0 || res.Replay.Engine != "none" || len(res.Traces) != 1 {
		t.Errorf("wall %g s, %d cells, %d rows done, engine %q, %d traces: want nothing measured, no engine, the trace named",
			res.WallS, len(res.Cells), res.Replay.RowsDone, res.Replay.Engine, len(res.Traces))
	}
	if h := res.Summary.StorageHealth.OverallStatus; h != results.HealthIncomplete {
		t.Errorf("storage_health %s, want INCOMPLETE", h)
	}
}
