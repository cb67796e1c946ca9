package replay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/schema"
)

// randomTrace is a trace of rows random in kind and interleaving: writes of
// new and existing keys on any tier, reads (some of keys never written:
// cold), Evict pairs moving a key between tiers, deletes, in requests of
// one to four rows, with sizes of one to 40 pages.
func randomTrace(seed uint64, n int) []schema.Record {
	rnd := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	type obj struct {
		tier schema.Tier
		size int64
	}
	live := map[string]*obj{}
	var keys []string
	var recs []schema.Record
	at := time.Duration(0)
	req := uint64(0)
	add := func(op schema.Op, size int64, tier schema.Tier, key string, ph schema.Phase) {
		at += time.Microsecond
		recs = append(recs, schema.Record{Time: at, Op: op, Size: size, Tier: tier, Key: []byte(key), Phase: ph,
			Request: req, QoS: schema.QoS(1 + rnd.IntN(3))})
	}
	pick := func() (string, *obj) {
		for range 4 {
			if len(keys) == 0 {
				break
			}
			k := keys[rnd.IntN(len(keys))]
			if o := live[k]; o != nil {
				return k, o
			}
		}
		return "", nil
	}
	for len(recs) < n {
		if rnd.IntN(3) == 0 {
			req++
		}
		tier := schema.Tier(rnd.IntN(schema.NumTiers))
		switch r := rnd.IntN(100); {
		case r < 35: // a write, of a new key or over an old one
			k := fmt.Sprint("k", len(keys))
			if ok, o := pick(); o != nil && rnd.IntN(3) == 0 {
				k = ok
			} else {
				keys = append(keys, k)
			}
			size := int64(1+rnd.IntN(40)) * 4096
			if rnd.IntN(4) == 0 {
				size -= int64(rnd.IntN(4000)) // not a multiple of a page
			}
			add(schema.OpWrite, size, tier, k, schema.PhasePrefill)
			live[k] = &obj{tier, size}
		case r < 70:
			if k, o := pick(); o != nil {
				add(schema.OpRead, o.size, o.tier, k, schema.PhaseDecode)
			}
		case r < 73: // a cold read
			k := fmt.Sprint("cold", len(keys))
			keys = append(keys, k)
			size := int64(1+rnd.IntN(8)) * 4096
			add(schema.OpRead, size, tier, k, schema.PhaseDecode)
			live[k] = &obj{tier, size}
		case r < 90: // an Evict pair
			if k, o := pick(); o != nil && o.tier != tier {
				add(schema.OpRead, o.size, o.tier, k, schema.PhaseEvict)
				add(schema.OpWrite, o.size, tier, k, schema.PhaseEvict)
				o.tier = tier
			}
		default:
			if k, o := pick(); o != nil {
				add(schema.OpDelete, o.size, o.tier, k, schema.PhaseEvict)
				delete(live, k)
			}
		}
	}
	return recs
}

// checkSpace replays a random trace with every tier on a RAM arena of
// budget times the trace's peak (kvreplay's sizing when budget is 1), with
// --verify: no run may fail for space, and no read may see bytes other
// than the ones its key's last write made (a read before its write, or
// into an object freed under it, fails verification). Under a budget below
// the peak the replay evicts, and says how many.
func checkSpace(t *testing.T, seed uint64, budget float64, workers, qd int) {
	recs := randomTrace(seed, 400)
	src := memTrace(t, recs)
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"ram", "ram", "small", "ram"}
	cfg.Speed, cfg.Verify, cfg.Workers, cfg.QueueDepth, cfg.BlockSize = 0, true, workers, qd, 16<<10
	cfg.Engine = "psync"
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	ramSize := max(int64(float64(plan.Peak["ram"])*budget)/4096*4096, plan.MaxObjectOf["ram"], 4096)
	smallSize := max(int64(float64(plan.Peak["small"])*budget)/4096*4096, plan.MaxObjectOf["small"], 4096)
	rb, err := ram.New(ramSize)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"ram": rb, "small": null.New(null.WithAlign(4096), null.WithCapacity(smallSize))}, replay.Hooks{})
	if err != nil {
		t.Fatalf("seed %d, budget %g, workers %d, qd %d: %v", seed, budget, workers, qd, err)
	}
	if !res.Complete || res.Replay.RowsDone != int64(len(recs)) {
		t.Fatalf("seed %d: %d of %d rows done", seed, res.Replay.RowsDone, len(recs))
	}
	var readPhys int64
	for _, tt := range res.Tiers {
		if tt.Tier != schema.TierNVMe.String() { // the null tier keeps no bytes to check
			readPhys += tt.PhysicalReadBytes
		}
	}
	if res.Replay.VerifiedBytes < readPhys {
		t.Errorf("seed %d: verified %d of %d bytes read from RAM", seed, res.Replay.VerifiedBytes, readPhys)
	}
	if budget >= 1 && res.Replay.CapacityEvictions != 0 {
		t.Errorf("seed %d: %d evictions in tiers of the trace's peak", seed, res.Replay.CapacityEvictions)
	}
}

// TestSpaceProperty: random traces under tight budgets.
func TestSpaceProperty(t *testing.T) {
	n := uint64(20)
	if testing.Short() {
		n = 10
	}
	for seed := range n {
		for _, c := range []struct {
			budget      float64
			workers, qd int
		}{{1, 16, 4}, {1, 1, 1}, {0.5, 8, 2}} {
			checkSpace(t, seed, c.budget, c.workers, c.qd)
		}
	}
}

// FuzzSpace explores more traces: go test -fuzz FuzzSpace ./replay
func FuzzSpace(f *testing.F) {
	f.Add(uint64(1), uint8(100), uint8(16), uint8(4))
	f.Add(uint64(7), uint8(50), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, budgetPct, workers, qd uint8) {
		budget := float64(max(20, min(budgetPct, 100))) / 100
		checkSpace(t, seed, budget, 1+int(workers%32), 1+int(qd%8))
	})
}
