package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestCancelWhileOpening: a run whose context is cancelled while its trace
// is being opened (a pipe waiting for its writer) is incomplete, stopped by
// the cancellation, whichever of the reader's end and the cancellation
// reaches the loop first: never complete with no rows read. The two race
// (before, one run in a hundred or so was complete), hence the repeats.
func TestCancelWhileOpening(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed = 0
	// RAM's engine alone: the race is the loop's, and 600 io_uring rings
	// set up and torn down took 13 of the test's 15 s (2 cores).
	cfg.Engine = "psync"
	backends := map[string]backend.Backend{"ram": newRAM(t, 1<<20)}
	for i := range 600 {
		ctx, cancel := context.WithCancel(context.Background())
		opening := make(chan struct{})
		src := replay.Source{Name: "pipe", Open: func() (*trace.Reader, error) {
			close(opening)
			<-ctx.Done()
			return nil, fmt.Errorf("trace: pipe: %w", ctx.Err())
		}}
		go func() {
			<-opening
			cancel()
		}()
		plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, backends, replay.Hooks{})
		if res == nil || res.Complete || !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: error %v, result complete %v", i, err, res != nil && res.Complete)
		}
		cancel()
	}
}
