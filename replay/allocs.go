package replay

import (
	"encoding/json"

	"github.com/kvbench/kvbench/schema"
)

// allocLimit is the run's bound on allocations in flight:
// cfg.MaxConcurrentAllocs, else the largest config.max_concurrent_allocs
// of the traces' sidecars (kvtrace --max-concurrent-allocs, and its
// --mlperf-option presets, record it); 0 is unbounded.
func allocLimit(cfg *Config, srcs []Source) int {
	if cfg.MaxConcurrentAllocs > 0 {
		return cfg.MaxConcurrentAllocs
	}
	n := 0
	for _, s := range srcs {
		if s.Meta == nil || len(s.Meta.Config) == 0 {
			continue
		}
		var c struct {
			MaxConcurrentAllocs int `json:"max_concurrent_allocs"`
		}
		if json.Unmarshal(s.Meta.Config, &c) == nil {
			n = max(n, c.MaxConcurrentAllocs)
		}
	}
	return n
}

// isAlloc reports whether t is an allocation as kv-cache.py bounds them
// (its allocate_cache, under --max-concurrent-allocs): a row writing new
// contents, not an Evict pair's move.
func (t *task) isAlloc() bool {
	return t.kind == kindRow && t.op == schema.OpWrite && t.phase != schema.PhaseEvict
}
