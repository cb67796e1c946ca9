package report

import "testing"

// TestSLAWithinRoundsDown: the share within target is shown rounded down
// to a tenth, as storage_health's criteria show it (results.SharePct):
// 189 of 199 requests (94.97 %) read "95.0%" beside "NOT met", and 21 of
// 22 read 95.5% in the SLA table beside 95.4 % in the same run's
// storage_health criterion.
func TestSLAWithinRoundsDown(t *testing.T) {
	for _, tt := range []struct {
		within, requests int
		want             string
	}{
		{189, 199, "94.9%"},
		{21, 22, "95.4%"},
		{19, 20, "95.0%"},
		{22, 22, "100.0%"},
		{0, 5, "0.0%"},
		{2, 3, "66.6%"},
		{957, 1000, "95.7%"}, // 100*0.957 is 95.69999..., whose tenths round down to 95.6
	} {
		s := slaRow{Share: float64(tt.within) / float64(tt.requests)}
		if got := s.within(); got != tt.want {
			t.Errorf("%d of %d: %s, want %s", tt.within, tt.requests, got, tt.want)
		}
	}
}
