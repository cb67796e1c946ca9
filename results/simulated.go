package results

import (
	"fmt"

	"github.com/kvbench/kvbench/schema"
)

// CacheHitRateMin is the reference's criterion for a simulation (kvtrace's
// statistics, as kv-cache.py's): the KV cache's hit rate must be above it.
const CacheHitRateMin = 0.3

// CacheHitRate is the simulated criterion of a run whose cache hit rate is
// rate: passed when rate is strictly above CacheHitRateMin. Judge turns it
// into storage_health, as every tool's criteria.
func CacheHitRate(rate float64) schema.Criterion {
	c := schema.Criterion{Name: fmt.Sprintf("Cache Hit Rate > %g%%", 100*CacheHitRateMin), Target: CacheHitRateMin,
		Actual: rate, Unit: "ratio", Passed: rate > CacheHitRateMin}
	if !c.Passed {
		c.Reason = fmt.Sprintf("cache hit rate %.3f <= %g (simulated)", rate, CacheHitRateMin)
	}
	return c
}
