package report

import (
	"math"
	"slices"
)

// Compare compares every group with the baseline group (the first group
// when baseline is empty or names none) over the metrics of the catalogue
// that any group has: the ratio of medians over trials, and the win rate
// over matched trials (trial i of a group against trial i of the
// baseline, by number or else by position; a tie counts half; a pair
// with the metric 0 on both sides, nothing against nothing, is no tie and
// is not compared, nor is one where either side lacks it). A
// simulated group (kvtrace's statistics) is compared only with a
// simulated baseline, and a measured one only with a measured baseline:
// a simulation's figures are not a measurement's. A group of a run cut
// short or with failed operations (Group.NotMeasured) has its medians
// but no ratio or win rate, nor has any group against it as the
// baseline. Groups must have been built (Build).
func Compare(groups []*Group, baseline string) *Comparison {
	var ms []Metric
	for _, m := range Metrics() {
		if slices.ContainsFunc(groups, func(g *Group) bool { return len(g.Values[m.Name]) > 0 }) {
			ms = append(ms, m)
		}
	}
	if !slices.ContainsFunc(groups, func(g *Group) bool { return g.Label == baseline }) && len(groups) > 0 {
		baseline = groups[0].Label
	}
	return compare(groups, baseline, ms)
}

func compare(groups []*Group, baseline string, ms []Metric) *Comparison {
	c := &Comparison{Baseline: baseline}
	var base *Group
	for _, g := range groups {
		if g.Label == baseline {
			base = g
		}
	}
	for _, m := range ms {
		row := ComparisonRow{Metric: m, Baseline: math.NaN(), Medians: map[string]float64{},
			Ratios: map[string]float64{}, WinRate: map[string]float64{}}
		if base != nil {
			if vs := base.Values[m.Name]; len(vs) > 0 {
				row.Baseline = ComputeStats(vs).Median
			}
		}
		for _, g := range groups {
			vs := g.Values[m.Name]
			if len(vs) == 0 || (base != nil && g.Simulated != base.Simulated) {
				continue
			}
			med := ComputeStats(vs).Median
			row.Medians[g.Label] = med
			if g != base && (g.cutShort() || (base != nil && base.cutShort())) {
				// A run that is not a measurement is shown, not
				// compared: a ratio to it, or of it, would read as one
				// system against another. (Simulations, paired above,
				// are compared with each other.)
				continue
			}
			if !math.IsNaN(row.Baseline) && row.Baseline != 0 {
				row.Ratios[g.Label] = med / row.Baseline
			}
			if base != nil && g != base {
				if w, ok := winRate(g, base, m); ok {
					row.WinRate[g.Label] = w
				}
			}
		}
		c.Rows = append(c.Rows, row)
	}
	return c
}

// winRate is the share of trials of g better than the baseline's trial of
// the same number (or, when no trial numbers match, of the same position);
// false when no trial matches. A pair that lacks the metric on either
// side, or has 0 on both (no bytes against no bytes, a FAIL against a
// FAIL), compares nothing: it is left out, not counted a tie.
func winRate(g, base *Group, m Metric) (float64, bool) {
	byNumber := slices.ContainsFunc(g.TrialIDs, func(id int) bool { return slices.Contains(base.TrialIDs, id) })
	var n, wins float64
	for i, id := range g.TrialIDs {
		j := i
		if byNumber {
			j = slices.Index(base.TrialIDs, id)
		}
		if j < 0 || j >= len(base.TrialIDs) {
			continue
		}
		a, ok1 := g.TrialValues[i][m.Name]
		b, ok2 := base.TrialValues[j][m.Name]
		if !ok1 || !ok2 || (a == 0 && b == 0) {
			continue
		}
		n++
		switch {
		case a == b:
			wins += 0.5
		case (a > b) == (m.Better == "higher"):
			wins++
		}
	}
	if n == 0 {
		return 0, false
	}
	return wins / n, true
}
