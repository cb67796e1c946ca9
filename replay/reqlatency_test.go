package replay_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestOpenLoopRequestLatency: an open loop learns that a request has all
// its rows only when the next request's first row is released, but the
// request completed when its last row did: its latency is its rows' 10 ms
// on the device, not the 500 ms until the next request arrives (issue 23:
// at --speed 0.25 a tmpfs showed interactive p95 156 ms, its operations
// taking under 3 ms, and failed its SLA). Both speeds give 10 ms.
func TestOpenLoopRequestLatency(t *testing.T) {
	for _, speed := range []float64{1, 0.25} {
		synctest.Test(t, func(t *testing.T) {
			const delay = 10 * time.Millisecond
			recs := []schema.Record{
				rec(0, schema.OpWrite, 4096, schema.TierCPU, "a", schema.PhasePrefill, 1),
				rec(0, schema.OpRead, 4096, schema.TierCPU, "a", schema.PhaseDecode, 1),
				rec(500*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, "b", schema.PhasePrefill, 2),
				rec(time.Second, schema.OpWrite, 4096, schema.TierCPU, "c", schema.PhasePrefill, 3),
			}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed = speed
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), delay)})
			if err != nil {
				t.Fatal(err)
			}
			// Request 1: a write then a read of its object, 20 ms; 2 and 3:
			// one write, 10 ms.
			l := res.Requests.Latency
			if res.Requests.Count != 3 || l.MaxUS < 19_900 || l.MaxUS > 20_100 || l.MinUS < 9_900 || l.MinUS > 10_100 {
				t.Errorf("--speed %g: %d requests, latency min %.0f us, max %.0f us; want 3, 10 ms and 20 ms", speed, res.Requests.Count, l.MinUS, l.MaxUS)
			}
		})
	}
}
