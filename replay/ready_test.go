package replay_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestReadyAfterColdObjects: a rank's wait for the others (Hooks.Ready:
// --start-at, --start-barrier) comes after its untimed preparation, the
// cold objects a decode-only trace reads, and the clock starts when it
// returns: ranks that prepared for different times start their timed
// replays together. Before, the wait came first, and a rank's clock
// started after its own cold writes. A Ready that fails (the barrier's
// timeout, a signal) stops the run before any row, and returns its result
// as a run stopped before its clock does (the cold objects' writes that
// fail, 41351b4): incomplete, the reason naming the wait, nothing
// measured. It returned none when a run stopped before its clock had no
// result at all; a launcher then found no file for the rank.
func TestReadyAfterColdObjects(t *testing.T) {
	recs := []schema.Record{rec(0, schema.OpRead, 64<<10, schema.TierCPU, "cold", schema.PhaseDecode, 1)}
	synctest.Test(t, func(t *testing.T) {
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		ram := fault.Record(fault.Delay(newRAM(t, 16<<20), time.Second))
		src := memTrace(t, recs)
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		var logged int
		var readyAt time.Time
		hooks := replay.Hooks{Ready: func() error {
			logged = len(ram.Log())
			time.Sleep(5 * time.Second) // the others
			readyAt = time.Now()
			return nil
		}}
		res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": ram}, hooks)
		if err != nil {
			t.Fatal(err)
		}
		if logged == 0 || res.Replay.ColdPrepared != 1 {
			t.Errorf("Ready called after %d backend calls, %d cold objects; want it after the cold object's write", logged, res.Replay.ColdPrepared)
		}
		if !res.Started.Equal(readyAt) || res.WallS > 1.5 {
			t.Errorf("started %v, ready at %v, wall %.1f s: want the clock started when Ready returned, the cold write not in it", res.Started, readyAt, res.WallS)
		}
		stop := errors.New("the others never came")
		res, err = replay.Run(context.Background(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": ram},
			replay.Hooks{Ready: func() error { return stop }})
		if !errors.Is(err, stop) || res == nil {
			t.Fatalf("a failed Ready: result %v, error %v; want a result and its error", res != nil, err)
		}
		if want := "replay: before the clock: waiting to start: the others never came"; res.Complete || res.IncompleteReason != want || err.Error() != want {
			t.Errorf("a failed Ready: complete %v, reason %q, error %q; want incomplete, %q", res.Complete, res.IncompleteReason, err, want)
		}
		if res.WallS != 0 || len(res.Cells) != 0 || res.Replay.RowsDone != 0 || res.Replay.ColdPrepared != 1 || len(res.Traces) != 1 {
			t.Errorf("a failed Ready: wall %g s, %d cells, %d rows done, %d cold objects, %d traces; want nothing measured, the cold object written before the wait, the trace named",
				res.WallS, len(res.Cells), res.Replay.RowsDone, res.Replay.ColdPrepared, len(res.Traces))
		}
	})
}
