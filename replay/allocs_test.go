package replay_test

import (
	"encoding/json"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// maxOverlap is the most writes of log in flight at once.
func maxOverlap(log []fault.Call) int {
	type edge struct {
		at time.Time
		d  int
	}
	var es []edge
	for _, c := range log {
		if c.Op == fault.OpWrite {
			es = append(es, edge{c.Start, 1}, edge{c.End, -1})
		}
	}
	slices.SortFunc(es, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // an end before a start at the same instant
	})
	n, most := 0, 0
	for _, e := range es {
		n += e.d
		most = max(most, n)
	}
	return most
}

// TestMaxConcurrentAllocs: writes of new contents wait while the bound
// is in flight, as kv-cache.py's --max-concurrent-allocs holds its
// allocations; the bound comes from the configuration, else from the
// trace's sidecar, and the result records it. Eight writes at once, each
// 10 ms, run two (three) at a time under the bound, all eight without it.
func TestMaxConcurrentAllocs(t *testing.T) {
	var recs []schema.Record
	for i := range 8 {
		recs = append(recs, rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, "w"+string(rune('a'+i)), schema.PhasePrefill, uint64(i+1)))
	}
	meta, _ := json.Marshal(map[string]int{"max_concurrent_allocs": 3})
	for _, tc := range []struct {
		name    string
		cfg     int
		sidecar bool
		want    int
	}{
		{"unbounded", 0, false, 8},
		{"configured", 2, false, 2},
		{"from the sidecar", 0, true, 3},
		{"configured over the sidecar", 2, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := closedConfig()
				cfg.ClosedLoop = false
				cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
				cfg.MaxConcurrentAllocs = tc.cfg
				src := memTrace(t, recs)
				if tc.sidecar {
					src.Meta = &trace.Meta{Config: meta}
				}
				b := fault.Record(fault.Delay(newRAM(t, 64<<20), 10*time.Millisecond))
				res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": b})
				if err != nil {
					t.Fatal(err)
				}
				if got := maxOverlap(b.Log()); got != tc.want {
					t.Errorf("%d writes in flight at most, want %d", got, tc.want)
				}
				if want := tc.want % 8; res.Replay.MaxConcurrentAllocs != want {
					t.Errorf("the result records %d, want %d", res.Replay.MaxConcurrentAllocs, want)
				}
			})
		})
	}
}
