package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// stalledPipe is a trace on a pipe whose producer stalls once its bytes
// are read: the signal (stop) comes then, and the read fails with ctx's
// error, as cli.OpenStdin's and cli.OpenRead's reads of a pipe do when a
// signal stops them.
type stalledPipe struct {
	ctx  context.Context
	stop func()
	data *bytes.Reader
}

func (p *stalledPipe) Read(b []byte) (int, error) {
	if p.data.Len() > 0 {
		return p.data.Read(b)
	}
	p.stop()
	return 0, fmt.Errorf("read standard input: %w", p.ctx.Err())
}

func (p *stalledPipe) Close() error { return nil }

// TestStopWhileReadStalls: a run stopped (a signal: its context
// cancelled with the signal as the cause) while its trace's producer
// stalls is incomplete for the signal, whichever of the stopped read and
// the stop itself the loop sees first. The read, stopped by the same
// context, is no failure of the trace's: the reason was at times "trace:
// -:21: read: read standard input: context canceled" (the reader's error
// reached the loop first), so that the result named no signal (kvreplay's
// TestSIGTERMStalledPipe failed one run in a few).
func TestStopWhileReadStalls(t *testing.T) {
	recs := writes(20, 0)
	for i := range recs {
		recs[i].Request, recs[i].User = uint64(i+1), 1 // a user, for the closed loop
	}
	data := traceBytes(t, recs)
	signal := errors.New("terminated signal received")
	for _, closed := range []bool{false, true} {
		for i := range 30 {
			ctx, cancel := context.WithCancelCause(context.Background())
			p := &stalledPipe{ctx: ctx, stop: func() { cancel(signal) }, data: bytes.NewReader(data)}
			src := replay.Source{Name: "-", Stored: func() (io.ReadCloser, error) { return p, nil }}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed, cfg.Prescan = 0, false
			if closed {
				cfg.ClosedLoop = true
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			if err != nil {
				t.Fatal(err)
			}
			res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 1<<20)}, replay.Hooks{})
			if !errors.Is(err, signal) || res == nil || res.Complete || res.IncompleteReason != signal.Error() {
				reason := ""
				if res != nil {
					reason = res.IncompleteReason
				}
				t.Fatalf("closed loop %v, run %d: error %v, reason %q; want the run stopped for %q", closed, i, err, reason, signal)
			}
			cancel(nil)
		}
	}
}
