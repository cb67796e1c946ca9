package results_test

import (
	"math"
	"testing"

	"github.com/kvbench/kvbench/results"
)

func TestFormatDecimal(t *testing.T) {
	rates := []struct {
		bps  float64
		want string
	}{
		{0, "0 GB/s"},
		{276e6, "0.276 GB/s"},
		{2799.3e6, "2.80 GB/s"},
		{4e9, "4.00 GB/s"},
		{10.64e9, "10.6 GB/s"},
		{1130e9, "1130 GB/s"},
		{math.Inf(1), "+Inf GB/s"},
	}
	for _, tt := range rates {
		if got := results.FormatRate(tt.bps); got != tt.want {
			t.Errorf("FormatRate(%v) = %q, want %q", tt.bps, got, tt.want)
		}
	}
	data := []struct {
		n    int64
		want string
	}{
		{0, "0 GB"},
		{10_500_000, "0.0105 GB"},
		{1 << 30, "1.07 GB"}, // a GiB is 1.07 GB, not 1.00
		{50_200_000_000, "50.2 GB"},
	}
	for _, tt := range data {
		if got := results.FormatData(tt.n); got != tt.want {
			t.Errorf("FormatData(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := results.FormatGB(2.5e9); got != "2.50" {
		t.Errorf("FormatGB(2.5e9) = %q, want 2.50", got)
	}
}
