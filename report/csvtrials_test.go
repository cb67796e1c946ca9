package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"slices"
	"strconv"
	"testing"
)

// trials3 are three real trials of one system (testdata/trials3/README.md).
var trials3 = []string{"testdata/trials3/sysA_t1.json", "testdata/trials3/sysA_t2.json", "testdata/trials3/sysA_t3.json"}

// TestCSVTrialRows: the csv view of a group of three trials holds, after
// the group's statistics, each trial's own figures, trial by trial: its
// value of every metric as the median of n = 1, then its SLA rows, each
// (trial, metric) once, in the columns it always had; the statistics are
// those of the trials' rows.
func TestCSVTrialRows(t *testing.T) {
	r := build(t, trials3, LoadOptions{}, BuildOptions{})
	var out bytes.Buffer
	if err := Render(&out, r, "csv"); err != nil {
		t.Fatal(err)
	}
	golden(t, "trials3.csv", out.Bytes())
	recs, err := csv.NewReader(bytes.NewReader(out.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The columns, in their order: new ones go at the end.
	header := []string{"group", "metric", "unit", "target", "better", "n", "median", "mean", "min", "max", "stddev", "cv", "p95",
		"baseline", "ratio", "win_rate", "warnings", "trial"}
	if !slices.Equal(recs[0], header) {
		t.Fatalf("header %q, want %q", recs[0], header)
	}
	const colMetric, colN, colMedian, colMean, colTrial = 1, 5, 6, 7, 17
	g := r.Groups[0]
	if len(r.Groups) != 1 || len(g.Trials) != 3 {
		t.Fatalf("%d groups, %d trials: want one group of 3", len(r.Groups), len(g.Trials))
	}
	rows := recs[1:]
	nm := len(r.Metrics)
	for i, m := range r.Metrics {
		if i >= len(rows) || rows[i][colTrial] != "" || rows[i][colMetric] != m.Name {
			t.Fatalf("row %d: want the statistics of %s first", i, m.Name)
		}
	}
	// The trials' rows: in trial order, each trial's metrics in the
	// report's order, then its SLA rows; each (trial, metric) once.
	seen := map[[2]string]bool{}
	isSLA := map[string]bool{}
	for _, s := range slaRows(r) {
		for _, what := range []string{"p95", "within_target", "sla_met"} {
			isSLA[qosMetric(s.QoS, what)] = true
		}
	}
	sums := map[string]float64{}
	last, inSLA := 0, false
	for _, row := range rows[nm:] {
		id, name := row[colTrial], row[colMetric]
		trial, err := strconv.Atoi(id)
		if err != nil || trial < last {
			t.Fatalf("trial %q after trial %d: want the trials' rows in trial order", id, last)
		}
		if trial > last {
			last, inSLA = trial, false
		}
		if seen[[2]string{id, name}] {
			t.Errorf("trial %s %s: twice", id, name)
		}
		seen[[2]string{id, name}] = true
		if isSLA[name] {
			inSLA = true
			continue
		}
		if inSLA {
			t.Errorf("trial %s %s: after the trial's SLA rows, want its metrics first", id, name)
		}
		i := slices.Index(g.TrialIDs, trial)
		v, ok := g.TrialValues[i][name]
		switch {
		case !ok && (row[colN] != "0" || row[colMedian] != ""):
			t.Errorf("trial %s %s: n %s median %q, want it empty: the trial has none", id, name, row[colN], row[colMedian])
		case ok && (row[colN] != "1" || row[colMedian] != strconv.FormatFloat(v, 'g', -1, 64)):
			t.Errorf("trial %s %s: n %s median %q, want 1 and the trial's %v", id, name, row[colN], row[colMedian], v)
		}
		sums[name] += v
	}
	for _, id := range g.TrialIDs {
		for _, m := range r.Metrics {
			if !seen[[2]string{strconv.Itoa(id), m.Name}] {
				t.Errorf("trial %d: no row of %s", id, m.Name)
			}
		}
	}
	// The statistics rows are those of the trials' values.
	for i, m := range r.Metrics {
		mean, err := strconv.ParseFloat(rows[i][colMean], 64)
		if err != nil || isSLA[m.Name] {
			continue // a metric no trial has, or one the SLA rows hold
		}
		if want := sums[m.Name] / 3; math.Abs(mean-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: mean %v, the trials' rows average %v", m.Name, mean, want)
		}
	}
}
