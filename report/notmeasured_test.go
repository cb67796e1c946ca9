package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestNotAMeasurementCompared: a kvreplay run cut short by ENOSPC (complete
// false, 1 operation failed) and one that failed before its clock (no
// measured window, wall_s 0) are shown as what they are in every format,
// "not a measurement" beside their label as kvtrace's simulations are,
// and compared with nothing: kvreport good.json enospc.json computed
// ratios and win rates against the cut-short run, and the unclocked one
// read "elapsed ... ratio 0.00x wins 100%", its elapsed time a 0 it never
// measured. Its elapsed time is missing, not 0.
func TestNotAMeasurementCompared(t *testing.T) {
	good := loadOne(t, "testdata/u10_t1.json", "good")
	enospc := loadOne(t, "testdata/u10_t1.json", "enospc")
	enospc.Result.Complete = false
	enospc.Result.IncompleteReason = "replay: write Tier-2 Prefill: no space left on device"
	enospc.Result.Errors.Count = 1
	unclocked := loadOne(t, "testdata/u10_t1.json", "unclocked")
	u := unclocked.Result
	u.Complete, u.IncompleteReason = false, "replay: before the clock: making the tiers: extent: preallocate: no space left on device"
	u.WallS, u.Cells, u.Tiers, u.Device = 0, nil, nil, nil
	u.Requests.Count, u.Requests.ByQoS = 0, nil

	rep, err := Build([]*Doc{good, enospc, unclocked}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comparison.Baseline != "good" {
		t.Fatalf("baseline %q", rep.Comparison.Baseline)
	}
	for _, g := range rep.Groups[1:] {
		if g.measurement() || !strings.Contains(g.NotMeasured[1], "an incomplete run") {
			t.Errorf("%s: NotMeasured %v", g.Label, g.NotMeasured)
		}
	}
	if !rep.Groups[0].measurement() {
		t.Errorf("good: NotMeasured %v", rep.Groups[0].NotMeasured)
	}
	for _, row := range rep.Comparison.Rows {
		for _, l := range []string{"enospc", "unclocked"} {
			if _, ok := row.Ratios[l]; ok {
				t.Errorf("%s: a ratio of %s, not a measurement: %v", row.Metric.Name, l, row.Ratios[l])
			}
			if _, ok := row.WinRate[l]; ok {
				t.Errorf("%s: a win rate of %s, not a measurement: %v", row.Metric.Name, l, row.WinRate[l])
			}
		}
	}
	if v, ok := rep.Groups[2].TrialValues[0][MetricElapsed]; ok {
		t.Errorf("unclocked run: elapsed %v, want missing", v)
	}
	if _, ok := rep.Groups[0].TrialValues[0][MetricElapsed]; !ok {
		t.Error("the measured run has no elapsed time")
	}

	for _, f := range []string{"text", "md", "json", "html", "bench"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"enospc (not a measurement: trial 1)", "unclocked (not a measurement: trial 1)",
			"NOT A MEASUREMENT: trial 1: an incomplete run (replay: write Tier-2 Prefill: no space left on device); 1 operation(s) failed"} {
			switch f {
			case "json":
				if strings.Contains(want, " (not a measurement") {
					continue // the field below
				}
			case "text", "md": // the group's title
				if !strings.HasPrefix(want, "NOT") {
					want = strings.Replace(want, " (", ": 1 trial (", 1)
				}
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%.4000s", f, want, out)
			}
		}
		if strings.Contains(out, "good (not a measurement") {
			t.Errorf("%s: the measured run is marked", f)
		}
		if f == "html" && !strings.Contains(out, "enospc is not a measurement: trial 1: no ratio or win rate is computed for it") {
			t.Errorf("html: the comparison does not say why enospc has no ratio")
		}
		if f == "text" {
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), MetricElapsed+" ") && strings.Contains(line, "0.00x") {
					t.Errorf("text: elapsed compared with a run that measured none: %q", line)
				}
			}
			if !strings.Contains(out, "enospc is not a measurement: trial 1: no ratio or win rate is computed for it") {
				t.Errorf("text: the comparison does not say why enospc has no ratio:\n%s", out)
			}
		}
		if f == "json" {
			var doc struct {
				Groups []struct {
					Label           string   `json:"label"`
					NotAMeasurement []string `json:"not_a_measurement"`
					Trials          []struct {
						Metrics map[string]float64 `json:"metrics"`
					} `json:"trials"`
				} `json:"groups"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Groups) != 3 || len(doc.Groups[0].NotAMeasurement) != 0 || len(doc.Groups[1].NotAMeasurement) != 1 ||
				!strings.HasPrefix(doc.Groups[2].NotAMeasurement[0], "trial 1: an incomplete run (replay: before the clock") {
				t.Errorf("json groups: %+v", doc.Groups)
			}
			if _, ok := doc.Groups[2].Trials[0].Metrics[MetricElapsed]; ok {
				t.Errorf("json: the unclocked run's elapsed: %v", doc.Groups[2].Trials[0].Metrics)
			}
		}
	}

	// xlsx: the Summary sheet's group column (row 1 is the header).
	f := renderXLSXFile(t, rep)
	for cell, want := range map[string]string{"A2": "good", "A3": "enospc (not a measurement: trial 1)", "A4": "unclocked (not a measurement: trial 1)"} {
		if got := xlsxCell(t, f, xlsxSummary, cell); got != want {
			t.Errorf("xlsx Summary!%s = %q, want %q", cell, got, want)
		}
	}

	// The cut-short run named as the baseline: shown, and nothing is
	// compared against it.
	rep, err = Build([]*Doc{good, enospc}, BuildOptions{Baseline: "enospc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Comparison.Rows {
		if len(row.Ratios) > 1 || len(row.WinRate) > 0 {
			t.Errorf("%s: compared against a baseline that is not a measurement: ratios %v, wins %v", row.Metric.Name, row.Ratios, row.WinRate)
		}
		if m, ok := row.Medians["good"]; ok && math.IsNaN(m) {
			t.Errorf("%s: good's median NaN", row.Metric.Name)
		}
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "the baseline enospc is not a measurement: trial 1: no ratio or win rate is computed against it") {
		t.Errorf("text: a baseline that is not a measurement, unsaid:\n%s", b.String())
	}
}
