package replay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/schema"
)

// failingClose is a mover that moves nothing and whose Close fails, as
// an engine whose last copies or teardown failed (a device error met
// while it drained) does.
type failingClose struct{ err error }

func (failingClose) Name() string                        { return "failing-close" }
func (failingClose) Serves(backend.Object) bool          { return false }
func (failingClose) Submit(*ioengine.Op)                 {}
func (failingClose) Moves(dst, from backend.Object) bool { return false }
func (f failingClose) Close() error                      { return f.err }

// TestEngineCloseErrorStopsRun: an I/O engine whose Close fails makes the
// run's result incomplete, with that error, not a complete run: what it
// did last is not known to have been done.
func TestEngineCloseErrorStopsRun(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed = 0
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	src := memTrace(t, writes(3, 0))
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	closeErr := errors.New("injected close failure")
	mover := func(ioengine.Params) (ioengine.Engine, error) { return failingClose{closeErr}, nil }
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"ram": newRAM(t, 1<<20)}, replay.Hooks{Movers: []ioengine.Factory{mover}})
	if !errors.Is(err, closeErr) || res == nil || res.Complete {
		t.Fatalf("error %v, complete %v; want the engine's close error and an incomplete result", err, res != nil && res.Complete)
	}
	if res.Summary.StorageHealth.OverallStatus == schema.HealthPass {
		t.Errorf("storage_health %s for a run whose engine failed to close", res.Summary.StorageHealth.OverallStatus)
	}
}
