package cli

import (
	"math"
	"testing"
)

func TestFormatCount(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {2890, "2,890"}, {-1234567, "-1,234,567"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := FormatCount(tt.n); got != tt.want {
			t.Errorf("FormatCount(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
