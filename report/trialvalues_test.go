package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestTrialValuesText: the text and Markdown views of a group show, beside
// the statistics over its trials, each trial's own value in trial order
// (the column headed by the trials' numbers), "-" for a trial without it;
// the values are those the csv and json views hold.
func TestTrialValuesText(t *testing.T) {
	r := build(t, trials3, LoadOptions{}, BuildOptions{})
	g := r.Groups[0]
	for _, f := range []string{"text", "md"} {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		golden(t, "trials3."+f, b.Bytes())
		lines := strings.Split(b.String(), "\n")
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasSuffix(strings.TrimRight(l, " |"), "trials 1, 2, 3") }) {
			t.Errorf("%s: no column headed trials 1, 2, 3", f)
		}
		for _, m := range r.Metrics {
			var want []string
			for i := range g.Trials {
				v, ok := g.TrialValues[i][m.Name]
				if !ok {
					want = append(want, "-")
					continue
				}
				want = append(want, num(v))
			}
			cell := strings.Join(want, ", ")
			if !slices.ContainsFunc(lines, func(l string) bool {
				l = strings.TrimRight(l, " |")
				return strings.HasPrefix(strings.TrimLeft(l, " |"), m.Name+" ") && strings.HasSuffix(l, " "+cell)
			}) {
				t.Errorf("%s: the row of %s does not end with its trials' values %q", f, m.Name, cell)
			}
		}
	}
}
