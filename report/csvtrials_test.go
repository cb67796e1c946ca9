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
// the group's statistics, each trial's own figures (its value of every
// metric as the median of n = 1, then its SLA rows), trial by trial, in
// the columns it always had; the statistics are those of the trials' rows.
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
	slas := slaRows(r)
	perTrialSLA := len(slas) / 3
	if len(slas) == 0 || len(rows) != nm+3*nm+3*perTrialSLA*3 {
		t.Fatalf("%d rows for %d metrics and %d QoS classes x trials: want the statistics, then each trial's metrics and SLA figures",
			len(rows), nm, len(slas))
	}
	for i, m := range r.Metrics {
		if rows[i][colTrial] != "" || rows[i][colMetric] != m.Name {
			t.Fatalf("row %d: %q, want the statistics of %s", i, rows[i], m.Name)
		}
	}
	at := nm
	sums := map[string]float64{}
	for i := range g.Trials {
		id := strconv.Itoa(g.TrialID(i))
		for _, m := range r.Metrics {
			row := rows[at]
			at++
			if row[colTrial] != id || row[colMetric] != m.Name {
				t.Fatalf("row %d: trial %q metric %q, want trial %s's %s", at, row[colTrial], row[colMetric], id, m.Name)
			}
			v, ok := g.TrialValues[i][m.Name]
			if !ok {
				if row[colN] != "0" || row[colMedian] != "" {
					t.Errorf("trial %s %s: n %s median %q, want it empty: the trial has none", id, m.Name, row[colN], row[colMedian])
				}
				continue
			}
			if row[colN] != "1" || row[colMedian] != strconv.FormatFloat(v, 'g', -1, 64) {
				t.Errorf("trial %s %s: n %s median %q, want 1 and the trial's %v", id, m.Name, row[colN], row[colMedian], v)
			}
			sums[m.Name] += v
		}
		for range perTrialSLA * 3 {
			if rows[at][colTrial] != id {
				t.Fatalf("row %d: trial %q, want trial %s's SLA rows after its metrics", at, rows[at][colTrial], id)
			}
			at++
		}
	}
	// The statistics rows are those of the trials' values.
	for i, m := range r.Metrics {
		mean, err := strconv.ParseFloat(rows[i][colMean], 64)
		if err != nil {
			continue // a metric no trial has
		}
		if want := sums[m.Name] / 3; math.Abs(mean-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: mean %v, the trials' rows average %v", m.Name, mean, want)
		}
	}
}
