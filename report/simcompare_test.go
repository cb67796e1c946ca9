package report

import "testing"

// TestSimulationsCompared: two kvtrace simulations are compared with each
// other (ratio and win rate), as Compare's rule says: 47b6c0a had left
// every simulated group out, as it leaves out a run that is not a
// measurement, so two simulations' requests per second, 2x apart, had no
// ratio. A simulation is still compared with no measured group.
func TestSimulationsCompared(t *testing.T) {
	a := loadOne(t, "testdata/kvtrace_stats.json", "simA")
	b := loadOne(t, "testdata/kvtrace_stats.json", "simB")
	for k, v := range b.Values {
		b.Values[k] = 2 * v
	}
	b.Result.Summary.RequestsPerSecond *= 2
	rep, err := Build([]*Doc{a, b}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, w := ratioAndWins(rep.Comparison, "simB"); rep.Comparison.Baseline != "simA" || r < 1.99 || r > 2.01 || w != 1 {
		t.Errorf("baseline %q, simB's ratio %v and win rate %v; want simA, 2 and 1", rep.Comparison.Baseline, r, w)
	}
	// Beside a measured run, the measured one is the baseline, and no
	// simulation is compared with it.
	measured := loadOne(t, "testdata/u10_t1.json", "measured")
	rep, err = Build([]*Doc{a, b, measured}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, w := ratioAndWins(rep.Comparison, "simB"); rep.Comparison.Baseline != "measured" || r != -1 || w != -1 {
		t.Errorf("baseline %q, simB's ratio %v and win rate %v; want measured, none and none", rep.Comparison.Baseline, r, w)
	}
}

// ratioAndWins are group's ratio and win rate in c's requests_per_s row,
// -1 where it has none.
func ratioAndWins(c *Comparison, group string) (ratio, wins float64) {
	ratio, wins = -1, -1
	for _, row := range c.Rows {
		if row.Metric.Name != MetricRequestsPerS {
			continue
		}
		if r, ok := row.Ratios[group]; ok {
			ratio = r
		}
		if w, ok := row.WinRate[group]; ok {
			wins = w
		}
	}
	return ratio, wins
}
