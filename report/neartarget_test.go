package report

import "testing"

// TestNearTarget: a figure that is not its metric's target never reads as
// it. 94.996 % of interactive requests within target is below the SLA's
// 95 %, and num's four digits wrote it "95" beside a verdict of NOT met;
// 49.9996 ms read as the 50 ms target. Figures away from the target keep
// num's digits.
func TestNearTarget(t *testing.T) {
	within, p95 := qosMetric("interactive", "within_target"), qosMetric("interactive", "p95")
	for _, tt := range []struct {
		name string
		v    float64
		want string
	}{
		{within, 94.996, "94.996"},
		{within, 95.0004, "95.0004"},
		{within, 95, "95"},
		{within, 97.123, "97.12"},
		{p95, 49.9996, "49.9996"},
		{p95, 12.34567, "12.35"},
		{MetricElapsed, 94.996, "95"}, // no target: num's
	} {
		if got := numOf(tt.name, tt.v); got != tt.want {
			t.Errorf("numOf(%s, %v) = %q, want %q", tt.name, tt.v, got, tt.want)
		}
	}
}
