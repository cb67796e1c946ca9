package sim

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scenario drives a cache with tiny tiers (one byte per token, limits in
// bytes) and records its rows.
type scenario struct {
	c    *cache
	rows strings.Builder
}

func newScenario(gpu, cpu, nvme float64, objectTier bool) *scenario {
	s := &scenario{}
	cfg := DefaultConfig()
	cfg.ObjectTier = objectTier
	s.c = newCache(&cfg, 1, func(op schema.Op, o *object, t schema.Tier, ph schema.Phase) error {
		fmt.Fprintf(&s.rows, "%-6s %s %-7s %s %d\n", op, t, ph, o.key, o.size)
		return nil
	})
	s.c.tiers[0].limit, s.c.tiers[1].limit, s.c.tiers[2].limit = gpu, cpu, nvme
	return s
}

func (s *scenario) write(tb testing.TB, key string, size int) {
	tb.Helper()
	fmt.Fprintf(&s.rows, "# write %s %d\n", key, size)
	if _, err := s.c.allocate(key, size, schema.PhasePrefill); err != nil {
		tb.Fatal(err)
	}
}

func (s *scenario) read(tb testing.TB, key string) {
	tb.Helper()
	fmt.Fprintf(&s.rows, "# read %s\n", key)
	if _, err := s.c.access(key, schema.PhaseDecode, cacheUser); err != nil {
		tb.Fatal(err)
	}
}

// TestEvictionScenarios checks tier placement, watermarks, demotion order
// and deletes against golden row lists (go test -run Scenarios -update to
// rewrite them after a deliberate change).
func TestEvictionScenarios(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name   string
		run    func(t *testing.T, s *scenario)
		gpu    float64
		cpu    float64
		nvme   float64
		object bool // kvtrace --object-tier: Tier-3 below NVMe
	}{
		{"fastest_tier_with_room", func(t *testing.T, s *scenario) {
			s.write(t, "a", 50) // 50 <= 80 % of 100: GPU
			s.write(t, "b", 30) // 80 <= 80: GPU
			s.write(t, "c", 10) // 90 > 80: demote a (LRU) to CPU first
		}, 100, 200, inf, false},
		{"large_object_skips_tier", func(t *testing.T, s *scenario) {
			s.write(t, "big", 96)   // > 95 % of the GPU tier: straight to CPU
			s.write(t, "huge", 191) // > 95 % of CPU too: NVMe
		}, 100, 200, inf, false},
		{"waterfall_deepest_first", func(t *testing.T, s *scenario) {
			s.write(t, "a", 60) // GPU
			s.write(t, "b", 60) // a -> CPU, b on GPU
			s.write(t, "c", 60) // b -> CPU needs room: a -> NVMe first, then b -> CPU
		}, 100, 100, inf, false},
		{"reads_refresh_recency_never_promote", func(t *testing.T, s *scenario) {
			s.write(t, "a", 40)
			s.write(t, "b", 40) // GPU holds a, b (80)
			s.read(t, "a")      // a is now more recent than b
			s.write(t, "c", 40) // evicts b, not a
			s.read(t, "b")      // read on CPU, no promotion
			s.read(t, "zzz")    // miss: no row
		}, 100, 200, inf, false},
		{"bounded_last_tier_deletes_lru", func(t *testing.T, s *scenario) {
			s.write(t, "a", 40) // GPU 0, CPU 0: NVMe
			s.write(t, "b", 40)
			s.read(t, "a")
			s.write(t, "c", 40) // 120 > 100: delete b (LRU), keep a
			s.read(t, "b")      // gone: miss
		}, 0, 0, 100, false},
		{"bounded_nvme_demotes_to_object_tier", func(t *testing.T, s *scenario) {
			s.write(t, "a", 40) // GPU 0, CPU 0: NVMe
			s.write(t, "b", 40)
			s.read(t, "a")
			s.write(t, "c", 40)   // 120 > 100: b (LRU) moves to Tier-3, not deleted
			s.read(t, "b")        // read from Tier-3
			s.write(t, "big", 99) // > 95 % of NVMe: straight to Tier-3
		}, 0, 0, 100, true},
		{"existing_key_writes_nothing", func(t *testing.T, s *scenario) {
			s.write(t, "a", 10)
			s.write(t, "a", 10)
		}, 100, 100, inf, false},
		{"bail_out_little_to_evict", func(t *testing.T, s *scenario) {
			s.write(t, "small", 6) // CPU holds 6 (< 20 % of 100)
			s.write(t, "x", 75)    // 81 > 80 and 75 > 40: skip CPU without evicting
		}, 0, 100, inf, false},
		{"zero_bytes_skip_disabled_tiers", func(t *testing.T, s *scenario) {
			s.write(t, "empty", 0) // GPU and CPU disabled (0 bytes): NVMe, not Tier-0
			s.read(t, "empty")
		}, 0, 0, inf, false},
		{"zero_bytes_fastest_enabled_tier", func(t *testing.T, s *scenario) {
			s.write(t, "empty", 0) // GPU disabled: CPU
		}, 0, 100, inf, false},
		{"near_empty_allowance", func(t *testing.T, s *scenario) {
			s.write(t, "a", 4)  // usage 4 < 5 % of 100 after this? 0 < 5: allowed
			s.write(t, "b", 90) // 94 > 80, usage 4 < 5: allowed over the target
		}, 100, 100, inf, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScenario(tt.gpu, tt.cpu, tt.nvme, tt.object)
			tt.run(t, s)
			got := s.rows.String()
			path := filepath.Join("testdata", "scenarios", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("rows differ from %s\ngot:\n%s\nwant:\n%s", path, got, want)
			}
			// Byte accounting holds whatever happened.
			var sum [schema.NumTiers]int64
			var count [schema.NumTiers]int
			for _, o := range s.c.objects {
				sum[o.tier] += o.size
				count[o.tier]++
			}
			for tier := range schema.Tier(schema.NumTiers) {
				ts := &s.c.tiers[tier]
				if sum[tier] != ts.bytes || count[tier] != ts.count {
					t.Errorf("%s: %d bytes in %d objects, the objects sum to %d in %d", tier, ts.bytes, ts.count, sum[tier], count[tier])
				}
				if bounded := !math.IsInf(ts.limit, 1); bounded && ts.lru.Len() != count[tier] {
					t.Errorf("%s: %d objects in LRU order, %d on the tier", tier, ts.lru.Len(), count[tier])
				}
			}
		})
	}
}

// TestLRUHeapOrder: hits that only advance an object's lastUse, with the
// heap mended at its head, give the least recently used object every time,
// as a scan of all objects does.
func TestLRUHeapOrder(t *testing.T) {
	rng := newPyRand(7)
	var h lruHeap
	live := map[*object]bool{}
	var clock uint64
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 4 || len(live) == 0:
			clock++
			o := &object{lastUse: clock}
			h.push(o)
			live[o] = true
		case op < 8:
			// A hit on some live object.
			n := rng.IntN(len(live))
			for o := range live {
				if n == 0 {
					clock++
					o.lastUse = clock
					break
				}
				n--
			}
		default:
			var want *object
			for o := range live {
				if want == nil || o.lastUse < want.lastUse {
					want = o
				}
			}
			if got := h.head(); got != want {
				t.Fatalf("step %d: head has lastUse %d, the least recent is %d", step, got.lastUse, want.lastUse)
			}
			h.pop()
			delete(live, want)
		}
		if h.Len() != len(live) {
			t.Fatalf("step %d: heap holds %d, %d live", step, h.Len(), len(live))
		}
	}
}
