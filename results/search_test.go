package results_test

import (
	"testing"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestProbesDisagreed: the counts of users whose measured probes both
// passed and failed, in order, each with its tally; a count whose probes
// agree, and a probe that is not a measurement, say nothing.
func TestProbesDisagreed(t *testing.T) {
	p := func(users int, pass bool) schema.SearchProbe { return schema.SearchProbe{Users: users, Pass: pass} }
	unmeasured := schema.SearchProbe{Users: 5, NotMeasured: "the run did not complete: signal"}
	for _, tt := range []struct {
		name   string
		probes []schema.SearchProbe
		want   string
	}{
		{"none", nil, ""},
		{"agreeing", []schema.SearchProbe{p(5, true), p(5, true), p(6, false), p(6, false)}, ""},
		{"one count", []schema.SearchProbe{p(5, true), p(6, false), p(5, false)}, "probes disagreed at 5 users (1 of 2 passed)"},
		{"one user", []schema.SearchProbe{p(1, false), p(1, true), p(1, true)}, "probes disagreed at 1 user (2 of 3 passed)"},
		{"in order", []schema.SearchProbe{p(12, true), p(10, false), p(12, false), p(10, true), p(12, true)},
			"probes disagreed at 10 users (1 of 2 passed), 12 users (2 of 3 passed)"},
		{"not a measurement", []schema.SearchProbe{p(5, true), unmeasured}, ""},
	} {
		if got := results.ProbesDisagreed(tt.probes); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestOfferedLoadFell: a capacity search's probes whose offered load fell
// below what a probe at a lower --speed delivered, by more than a
// plateau's noise, each named with the figure it fell from; a rise, a
// plateau's noise, and a probe that is not a measurement say nothing.
// The falls are those of a search run on this VM (0.166 GB/s at --speed
// 2, then 0.0849 at 4; 0.484 at 8, then 0.205 and 0.234).
func TestOfferedLoadFell(t *testing.T) {
	p := func(speed, gbps float64) schema.SearchProbe {
		return schema.SearchProbe{Speed: speed, OfferedBps: gbps * 1e9}
	}
	burst := schema.SearchProbe{Speed: 16, OfferedBps: 1e8, NotMeasured: "an incomplete run (no space left on device)"}
	for _, tt := range []struct {
		name   string
		probes []schema.SearchProbe
		want   string
	}{
		{"none", nil, ""},
		{"rising", []schema.SearchProbe{p(1, 0.1), p(2, 0.2), p(4, 0.4)}, ""},
		{"a plateau's noise", []schema.SearchProbe{p(1, 0.1), p(2, 0.4), p(4, 0.37), p(8, 0.41)}, ""},
		{"not a measurement", []schema.SearchProbe{p(8, 0.4), burst}, ""},
		{"fell", []schema.SearchProbe{p(0.25, 0.00871), p(0.5, 0.0245), p(1, 0.0673), p(2, 0.166), p(4, 0.0849), p(8, 0.484), p(16, 0.205), p(32, 0.234)},
			"the offered load fell as --speed rose, by more than the 10 % a plateau's noise moves it: " +
				"0.0849 GB/s at --speed 4 (-49 % from 0.166 GB/s at --speed 2), 0.205 GB/s at --speed 16 (-58 % from 0.484 GB/s at --speed 8), " +
				"0.234 GB/s at --speed 32 (-52 % from 0.484 GB/s at --speed 8)"},
	} {
		if got := results.OfferedLoadFell(tt.probes); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
