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
