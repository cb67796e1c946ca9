package replay_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// abandoning is a backend whose reads of key wait until the test lets
// them go, then fail with context.Canceled, as an object store's request
// does when the run's context ends (replay/s3).
type abandoning struct {
	backend.Backend
	key     string
	reading chan struct{} // closed when a read of key waits
	release chan struct{} // closed by the test: the read fails
	once    sync.Once
}

func (a *abandoning) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := a.Backend.Open(key, size, create)
	if err != nil || !strings.HasSuffix(key, a.key) {
		return o, err
	}
	return &abandoningObject{Object: o, a: a}, nil
}

type abandoningObject struct {
	backend.Object
	a *abandoning
}

// ReadAt of the object the write made (the engine keeps it open for the
// read) waits, then fails.
func (o *abandoningObject) ReadAt(p []byte, off int64) (int, error) {
	o.a.once.Do(func() { close(o.a.reading) })
	<-o.a.release
	return 0, context.Canceled
}

// TestAbandonedNotFailed: an operation that fails with context.Canceled
// because the run was stopped (a signal) is not a storage failure: the
// run is incomplete, stopped by the cancellation, with no failed operation
// in its errors and a warning that counts the abandoned operations. The
// same error from a run that goes on is a failure.
func TestAbandonedNotFailed(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 1<<20, schema.TierCPU, "k", schema.PhasePrefill, 1),
		rec(time.Millisecond, schema.OpRead, 1<<20, schema.TierCPU, "k", schema.PhaseDecode, 1),
	}
	for _, stop := range []bool{true, false} {
		t.Run(map[bool]string{true: "stopped", false: "running"}[stop], func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed = 0
			cfg.Engine = "psync"
			a := &abandoning{Backend: newRAM(t, 4<<20), key: "k", reading: make(chan struct{}), release: make(chan struct{})}
			src := memTrace(t, recs)
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-a.reading
				if stop {
					cancel()
				}
				close(a.release)
			}()
			res, err := replay.Run(ctx, &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": a}, replay.Hooks{})
			if res == nil || res.Complete || err == nil {
				t.Fatalf("error %v, result %v", err, res != nil && res.Complete)
			}
			warned := slicesContains(res.Warnings, "1 operations in flight were abandoned when the run was stopped (context canceled)")
			if stop {
				if !errors.Is(err, context.Canceled) || res.Errors.Count != 0 || !warned {
					t.Errorf("stopped: error %v, %d failed %q, warnings %q", err, res.Errors.Count, res.Errors.First, res.Warnings)
				}
				// The read did not finish: its row is not done, and its
				// request (whose latency would end at the stop) is not a
				// completed one.
				if res.Replay.RowsDone != 1 || res.Requests.Count != 0 {
					t.Errorf("stopped: %d rows done, %d requests completed; want the write's row alone, no request", res.Replay.RowsDone, res.Requests.Count)
				}
				// Nor is its time in flight the tier's busy time: the
				// tier was busy with the write alone, and no cell holds
				// the read.
				for _, tt := range res.Tiers {
					if tt.Tier == "Tier-1" && (tt.ReadBusyS != 0 || tt.WriteBusyS <= 0 || tt.BusyS != tt.WriteBusyS) {
						t.Errorf("stopped: Tier-1 busy %g s, reads %g s, writes %g s; want the write's alone", tt.BusyS, tt.ReadBusyS, tt.WriteBusyS)
					}
				}
				for _, c := range res.Cells {
					if c.Op == "Read" {
						t.Errorf("stopped: a read cell: %d ops, busy %g s", c.Ops, c.BusyS)
					}
				}
				return
			}
			if res.Errors.Count != 1 || warned {
				t.Errorf("running: error %v, %d failed, warnings %q", err, res.Errors.Count, res.Warnings)
			}
		})
	}
}

func slicesContains(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}
