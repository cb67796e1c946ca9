package report

import "testing"

// TestComputeStatsEqualTrials: trials that measured one figure exactly
// (bytes a trace reads, a count) have that mean, a standard deviation and
// CV of exactly 0, and a mean between the least and the most: the plain
// sum's rounding made 0.1 x 3 a mean of 0.10000000000000002 and a
// standard deviation of 1.7e-17, which the text showed as "1.7e-17"
// beside a CV of "0.000".
func TestComputeStatsEqualTrials(t *testing.T) {
	for _, x := range []float64{0.1, 0.19718400000000001, 1e-300, 3} {
		for n := 2; n <= 7; n++ {
			in := make([]float64, n)
			for i := range in {
				in[i] = x
			}
			s := ComputeStats(in)
			if s.Mean != x || s.StdDev != 0 || s.CV != 0 || s.Median != x || s.P95 != x {
				t.Errorf("%d x %v: mean %v stddev %v cv %v median %v p95 %v", n, x, s.Mean, s.StdDev, s.CV, s.Median, s.P95)
			}
		}
	}
	for _, in := range [][]float64{{0.1, 0.1, 0.1 + 1e-17}, {1e16, 1, -1e16}, {0.3, 0.1, 0.2}} {
		if s := ComputeStats(in); s.Mean < s.Min || s.Mean > s.Max {
			t.Errorf("%v: mean %v outside [%v, %v]", in, s.Mean, s.Min, s.Max)
		}
	}
}
