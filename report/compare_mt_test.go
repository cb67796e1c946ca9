package report

import (
	"testing"
)

// The tests of this file close gaps that mutation testing found in
// Compare: each fails on a small change to the code under it (named in
// its comment) that the rest of the package's tests let through.

// cmpGroup is a group of one metric's trials, by trial number.
func cmpGroup(label string, simulated bool, ids []int, vals []float64) *Group {
	const m = "tier1_read_offered"
	g := &Group{Label: label, Simulated: simulated, Values: map[string][]float64{}}
	for i, v := range vals {
		g.TrialIDs = append(g.TrialIDs, ids[i])
		g.TrialValues = append(g.TrialValues, map[string]float64{m: v})
		g.Values[m] = append(g.Values[m], v)
	}
	return g
}

// rowOf is Compare's row of tier1_read_offered.
func rowOf(t *testing.T, c *Comparison) ComparisonRow {
	t.Helper()
	for _, r := range c.Rows {
		if r.Metric.Name == "tier1_read_offered" {
			return r
		}
	}
	t.Fatalf("no tier1_read_offered row in %+v", c.Rows)
	return ComparisonRow{}
}

// TestCompareSimulatedApart: a simulated group (kvtrace's statistics) is
// not compared with a measured baseline: no median, ratio or win rate
// beside it.
func TestCompareSimulatedApart(t *testing.T) {
	c := Compare([]*Group{cmpGroup("measured", false, []int{1}, []float64{10}), cmpGroup("sim", true, []int{1}, []float64{40})}, "measured")
	r := rowOf(t, c)
	if _, ok := r.Medians["sim"]; ok {
		t.Errorf("simulated group compared with a measured baseline: %+v", r)
	}
	if _, ok := r.Ratios["sim"]; ok {
		t.Errorf("simulated group has a ratio to a measured baseline: %+v", r)
	}
}

// TestCompareUnknownBaseline: a baseline that names no group is the
// first group, so the others still have ratios to it.
func TestCompareUnknownBaseline(t *testing.T) {
	c := Compare([]*Group{cmpGroup("a", false, []int{1}, []float64{10}), cmpGroup("b", false, []int{1}, []float64{20})}, "nosuch")
	if c.Baseline != "a" {
		t.Errorf("baseline %q, want the first group a", c.Baseline)
	}
	if r := rowOf(t, c); r.Ratios["b"] != 2 {
		t.Errorf("ratio of b %v, want 2", r.Ratios["b"])
	}
}

// TestCompareWinRateByTrialNumber: trials are matched by number where
// any number matches, not by position: trial 2 (25) against the
// baseline's trial 2 (20) wins, and trial 3 has no match: a win rate of
// 1, where matching by position (25 against 10, 5 against 20) gives 0.5.
func TestCompareWinRateByTrialNumber(t *testing.T) {
	c := Compare([]*Group{cmpGroup("base", false, []int{1, 2}, []float64{10, 20}), cmpGroup("new", false, []int{2, 3}, []float64{25, 5})}, "base")
	if r := rowOf(t, c); r.WinRate["new"] != 1 {
		t.Errorf("win rate %v, want 1 (trial 2 against trial 2)", r.WinRate["new"])
	}
}
