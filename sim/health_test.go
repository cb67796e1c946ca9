package sim

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestLatencyKeysFollowSamples: cache_stats' per-tier latency keys and
// storage_health's criteria are where the reference has them. Its latency
// samples are taken of new objects' writes and of hits' reads in the
// measured run (a demotion takes none, and reset_stats drops what
// preconditioning and decode-only pre-population wrote), and its
// throughput profile checks Tier-2's bytes of the run. The trace says
// which samples there are: a Write or Read row that is not an Evict row,
// in the measured window. kvtrace took them from every row: a Tier-2 that
// only demotions wrote had a write criterion, and a decode-only run's
// throughput profile failed on the write bandwidth of the pre-population
// it does not measure. What the criteria pass is NO_DATA, not PASS: they
// judged latencies of virtual time, zeros no device earned (kvtrace's
// --output had said PASS, as kv-cache.py's trace mode does).
func TestLatencyKeysFollowSamples(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*Config)
		criteria []string
		status   schema.HealthStatus
	}{
		{"tier-2 written only by demotions", func(c *Config) { c.GPUMemGB, c.CPUMemGB = 0, 4 },
			[]string{"Storage Tier Read Device P95 < 200ms", "CPU RAM P95 < 150ms", "Cache Hit Rate > 30%"}, "NO_DATA"},
		{"all on tier-2", func(c *Config) { c.GPUMemGB, c.CPUMemGB = 0, 0 },
			[]string{"Storage Tier Write Device P95 < 500ms", "Storage Tier Read Device P95 < 200ms", "Cache Hit Rate > 30%"}, "NO_DATA"},
		{"decode-only on tier-2", func(c *Config) { c.GPUMemGB, c.CPUMemGB, c.DecodeOnly = 0, 0, true },
			[]string{"Storage Tier Read Device P95 < 200ms", "Cache Hit Rate > 30%"}, "NO_DATA"},
		{"throughput, decode-only on tier-2", func(c *Config) {
			c.GPUMemGB, c.CPUMemGB, c.DecodeOnly, c.PerformanceProfile = 0, 0, true, "throughput"
		}, []string{"Storage KV Read Bandwidth"}, "NO_DATA"},
		{"throughput, tier-2 written only by demotions", func(c *Config) {
			c.GPUMemGB, c.CPUMemGB, c.PerformanceProfile = 0, 4, "throughput"
		}, []string{"Storage KV Read Bandwidth", "Storage KV Write Bandwidth"}, "NO_DATA"},
		{"throughput, nothing on tier-2", func(c *Config) {
			c.GPUMemGB, c.CPUMemGB, c.PerformanceProfile = 0, 4096, "throughput"
		}, []string{"Storage KV Read Bandwidth", "Storage KV Write Bandwidth"}, "FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.Seed = 10, 20*time.Second, "none", 42
			tt.edit(&cfg)
			type row struct {
				at    time.Duration
				op    schema.Op
				tier  schema.Tier
				phase schema.Phase
			}
			var rows []row
			res, err := Run(context.Background(), &cfg, func(r *schema.Record) error {
				rows = append(rows, row{r.Time, r.Op, r.Tier, r.Phase})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			from := time.Duration(res.Kvbench.MeasuredFromS * float64(time.Second))
			var sampled [schema.NumTiers][schema.NumOps]bool
			for _, r := range rows {
				if r.at >= from && r.phase != schema.PhaseEvict {
					sampled[r.tier][r.op] = true
				}
			}
			c := res.Summary.CacheStats
			for tier, name := range [...]string{"gpu", "cpu", "storage"} {
				for op, opName := range map[schema.Op]string{schema.OpRead: "read", schema.OpWrite: "write"} {
					key := name + "_" + opName + "_p95_ms"
					if _, got := c.TierLatencyMS[key]; got != sampled[tier][op] {
						t.Errorf("%s present %v, want %v (the trace's non-Evict %s rows on %s in the run)", key, got, sampled[tier][op], opName, schema.Tier(tier))
					}
				}
			}
			var names []string
			for _, cr := range c.StorageHealth.Criteria {
				names = append(names, cr.Name)
			}
			if !slices.Equal(names, tt.criteria) {
				t.Errorf("criteria:\n  %s\nwant:\n  %s", strings.Join(names, "\n  "), strings.Join(tt.criteria, "\n  "))
			}
			if got := c.StorageHealth.OverallStatus; got != tt.status {
				t.Errorf("storage_health %s, want %s (%v)", got, tt.status, c.StorageHealth.Reasons)
			}
		})
	}
}

// TestPrefixCacheStatsBlock: summary.prefix_cache_stats is the reference's
// counters with prefix caching on, and {} with it off, as the reference
// writes it (kvtrace wrote null, which a script reading the reference's
// document with .get() fails on).
func TestPrefixCacheStatsBlock(t *testing.T) {
	for _, disabled := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.NumUsers, cfg.Duration, cfg.GenerationMode, cfg.Seed = 4, 10*time.Second, "none", 42
		cfg.DisablePrefixCaching = disabled
		res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Summary struct {
				Prefix json.RawMessage `json:"prefix_cache_stats"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		var block map[string]float64
		if err := json.Unmarshal(doc.Summary.Prefix, &block); err != nil || block == nil {
			t.Fatalf("disabled %v: prefix_cache_stats %s: want an object (%v)", disabled, doc.Summary.Prefix, err)
		}
		keys := slices.Sorted(maps.Keys(block))
		want := []string{"bytes_saved", "common_phrase_reuse", "prefix_hits", "prefix_misses", "system_prompt_reuse"}
		if disabled {
			want = []string{}
		}
		if !slices.Equal(keys, want) {
			t.Errorf("disabled %v: prefix_cache_stats keys %v, want %v", disabled, keys, want)
		}
		if !disabled && block["prefix_hits"]+block["prefix_misses"] == 0 {
			t.Errorf("prefix_cache_stats %s: no request counted", doc.Summary.Prefix)
		}
	}
}
