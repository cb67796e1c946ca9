package hist

import (
	"testing"
	"time"
)

// TestPercentileNearestRank: a percentile is the value at or below which
// at least p percent of the values lie (the nearest rank, ceil(p/100*n),
// as HdrHistogram's Java reference reads it): of 11 values, one late,
// 10 of 11 (90.9 %) are fast, so p95 is the late one. A rank rounded to
// the nearest (p/100*n + 0.5: 10) read it as the fast one, and a P95
// criterion passed with a tenth of the operations past its limit.
func TestPercentileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		fast, slow int
		p95Slow    bool
	}{
		{10, 1, true},  // 90.9 % fast
		{19, 1, false}, // 95 % fast: p95 is the 19th value
		{21, 2, true},  // 91.3 %
		{60, 3, false}, // 95.2 %
		{100, 6, true}, // 94.3 %
		{29, 2, true},  // 93.5 %
		{48, 3, true},  // 94.1 %
	} {
		h := New()
		for range tc.fast {
			h.Record(100 * time.Microsecond)
		}
		for range tc.slow {
			h.Record(time.Second)
		}
		l := h.Latency()
		if got := l.P95US > 1000; got != tc.p95Slow {
			t.Errorf("%d fast, %d slow: p95 %g µs, want the slow ones' %v", tc.fast, tc.slow, l.P95US, tc.p95Slow)
		}
		if got := h.ValueAtPercentile(95) > 1000; got != tc.p95Slow {
			t.Errorf("%d fast, %d slow: ValueAtPercentile(95) %d µs, want the slow ones' %v", tc.fast, tc.slow, h.ValueAtPercentile(95), tc.p95Slow)
		}
	}
}
