package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestSpreadWarning: a group whose metrics vary over its trials by more
// than highCV (CV) is warned of at any number of trials from 2, with each
// such metric and its CV, MLPerf's headline metrics named first; with
// fewer than 3 trials it is told to run 3; a metric that varies less is
// not named, and one trial has no spread to warn of. trials3 are three
// real trials whose tier2_write_p95 has a CV of 1.63.
func TestSpreadWarning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []string
		warn  bool
		more  bool // "run at least 3"
	}{
		{"3 trials", trials3, true, false},
		{"2 trials", trials3[:2], true, true},
		{"1 trial", trials3[:1], false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, tc.paths, LoadOptions{}, BuildOptions{})
			g := r.Groups[0]
			var w string
			for _, s := range r.Warnings {
				if strings.Contains(s, "VARIES OVER TRIALS") {
					if w != "" {
						t.Errorf("two spread warnings: %q and %q", w, s)
					}
					w = s
				}
			}
			if !tc.warn {
				if w != "" {
					t.Errorf("warning %q over one trial", w)
				}
				return
			}
			if w == "" {
				t.Fatalf("no spread warning over %d trials; warnings %q", len(tc.paths), r.Warnings)
			}
			if !strings.HasPrefix(w, g.Label+": ") || !strings.Contains(w, fmt.Sprintf("over %d trials", len(tc.paths))) {
				t.Errorf("warning %q does not name its group and trials", w)
			}
			if got := strings.Contains(w, "run at least 3"); got != tc.more {
				t.Errorf("warning %q: says to run at least 3 trials: %v, want %v", w, got, tc.more)
			}
			var head, other int
			for _, m := range r.Metrics {
				st := g.Stats[m.Name]
				named := strings.Contains(w, fmt.Sprintf(" %s %.2f", m.Name, st.CV))
				if want := st.N >= 2 && st.CV > highCV; named != want {
					t.Errorf("%s CV %.3f over %d trials: named %v, want %v (%q)", m.Name, st.CV, st.N, named, want, w)
				}
				if !named {
					continue
				}
				i := strings.Index(w, " "+m.Name+" ")
				isHead := strings.Contains(MetricDescription(m.Name), "MLPerf Storage's headline")
				if isHead {
					head++
				} else {
					other++
				}
				if others := strings.Index(w, "; others "); isHead && others >= 0 && i > others {
					t.Errorf("headline metric %s named among the others: %q", m.Name, w)
				}
			}
			if tc.name == "3 trials" && (head == 0 || other == 0 || !strings.Contains(w, " tier2_write_p95 1.63")) {
				t.Errorf("3 real trials: %d headline and %d other metrics named, want both, tier2_write_p95 at 1.63: %q", head, other, w)
			}
		})
	}
}
