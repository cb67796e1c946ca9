package results_test

import (
	"testing"

	"github.com/kvbench/kvbench/results"
)

func TestCacheHitRate(t *testing.T) {
	for _, tt := range []struct {
		rate   float64
		passed bool
		reason string
	}{
		{0.9, true, ""},
		{0.3, false, "cache hit rate 0.300 <= 0.3 (simulated)"}, // strictly above
		{0.1234, false, "cache hit rate 0.123 <= 0.3 (simulated)"},
	} {
		c := results.CacheHitRate(tt.rate)
		if c.Passed != tt.passed || c.Reason != tt.reason || c.Name != "Cache Hit Rate > 30%" || c.Target != 0.3 || c.Actual != tt.rate {
			t.Errorf("CacheHitRate(%g) = %+v, want passed %v, reason %q", tt.rate, c, tt.passed, tt.reason)
		}
	}
}
