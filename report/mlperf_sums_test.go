package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMLPerfSums: the rule's sums and means are mlpstorage's to the last
// bit: a trial's ranks are added as Python 3.12's sum() adds floats
// (Neumaier's compensated sum) and the trials averaged as
// statistics.fmean (math.fsum over n). The expected values are CPython
// 3.12.1's sum, math.fsum and statistics.fmean of the same lists
// (mlpstorage requires Python 3.12). A plain loop gave fmean([0.1, 0.2,
// 0.3]) 0.20000000000000004 and a trial of ten ranks of 0.1 GB/s
// 0.9999999999999999.
func TestMLPerfSums(t *testing.T) {
	tenth := slices.Repeat([]float64{0.1}, 10)
	for _, tc := range []struct {
		xs                []float64
		sum, fsum, fmeanV float64
	}{
		{nil, 0, 0, 0},
		{tenth, 1, 1, 0.1},
		{[]float64{0.1, 0.2, 0.3}, 0.6, 0.6, 0.19999999999999998},
		{[]float64{1e16, 1, -1e16}, 1, 1, 0.3333333333333333},
		{[]float64{1e-16, 1, 1e16}, 1e16, 1.0000000000000002e16, 3333333333333334},
		{[]float64{1e100, 1, -1e100, 1e-100, 1e50, -1, -1e50}, 0, 1e-100, 1.4285714285714286e-101},
		{[]float64{0.02354918688571421, 0.0115, 0.0123456789}, 0.04739486578571421, 0.04739486578571421, 0.01579828859523807},
		{[]float64{2.5, 1e-300, 3.3333333333333335}, 5.833333333333334, 5.833333333333334, 1.9444444444444446},
	} {
		if got := fsum(tc.xs); got != tc.fsum {
			t.Errorf("fsum(%v) = %v, want %v", tc.xs, got, tc.fsum)
		}
		if got := fmean(tc.xs); got != tc.fmeanV {
			t.Errorf("fmean(%v) = %v, want %v", tc.xs, got, tc.fmeanV)
		}
		if got := pysum(tc.xs); got != tc.sum {
			t.Errorf("pysum(%v) = %v, want %v", tc.xs, got, tc.sum)
		}
	}
	if got := fsum([]float64{1, math.Inf(1)}); !math.IsInf(got, 1) {
		t.Errorf("fsum of +Inf: %v", got)
	}
}

// TestMLPerfSumsAggregate: kv-cache.py ranks' figures go through the
// rule as mlpstorage's Python 3.12 takes them: ten ranks of 0.1 GiB/s in
// one trial are 1.0 (sum), three trials of 0.1, 0.2 and 0.3 average
// 0.19999999999999998 (fmean); they were 0.9999999999999999 and
// 0.20000000000000004.
func TestMLPerfSumsAggregate(t *testing.T) {
	lay := func(reads map[[2]int]float64) string {
		dir := t.TempDir()
		for place, read := range reads {
			p := filepath.Join(dir, "option_1", fmt.Sprintf("trial_%d", place[0]), fmt.Sprintf("rank_%d", place[1]), "kvcache_results_1.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			doc := `{"requests_completed": 1, "summary": {"total_requests": 1, "cache_stats": {"storage_entries": 1,
"tier_storage_read_bandwidth_gbps": ` + ftoa(read) + `}}}`
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	ranks := map[[2]int]float64{}
	for r := range 10 {
		ranks[[2]int{0, r}] = 0.1
	}
	if got := aggregateDir(t, lay(ranks)).Options["1"].AggregatedReadBandwidthGBps; got != 1 {
		t.Errorf("ten ranks of 0.1: %v, want 1 (Python 3.12's sum)", got)
	}
	trials := map[[2]int]float64{{0, 0}: 0.1, {1, 0}: 0.2, {2, 0}: 0.3}
	if got := aggregateDir(t, lay(trials)).Options["1"].AggregatedReadBandwidthGBps; got != 0.19999999999999998 {
		t.Errorf("trials of 0.1, 0.2, 0.3: %v, want 0.19999999999999998 (statistics.fmean)", got)
	}
}
