package report

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/kvbench/kvbench/schema"
)

func renderXLSXFile(tb testing.TB, r *Report) *excelize.File {
	tb.Helper()
	var buf bytes.Buffer
	if err := renderXLSX(&buf, r); err != nil {
		tb.Fatal(err)
	}
	// Keep a copy where a person can open it after a failure.
	path := filepath.Join(tb.TempDir(), "report.xlsx")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		tb.Fatalf("re-opening the workbook: %v", err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

func xlsxCell(tb testing.TB, f *excelize.File, sheet, cell string) string {
	tb.Helper()
	v, err := f.GetCellValue(sheet, cell)
	if err != nil {
		tb.Fatalf("%s!%s: %v", sheet, cell, err)
	}
	return v
}

func xlsxFloat(tb testing.TB, f *excelize.File, sheet, cell string) float64 {
	tb.Helper()
	s := xlsxCell(tb, f, sheet, cell)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		tb.Fatalf("%s!%s = %q: not a number", sheet, cell, s)
	}
	return v
}

func TestXLSX(t *testing.T) {
	r := testReport(t)
	f := renderXLSXFile(t, r)

	want := []string{"Summary", "Stats", "Trials", "Comparison", "Health", "SLA", "Cells", "Warnings", "Metrics"}
	if got := f.GetSheetList(); !slices.Equal(got, want) {
		t.Fatalf("sheets %v, want %v", got, want)
	}
	near := func(sheet, cell string, want float64) {
		t.Helper()
		if got := xlsxFloat(t, f, sheet, cell); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s!%s = %v, want %v", sheet, cell, got, want)
		}
	}
	a, b := r.Groups[0], r.Groups[1]

	// Summary: groups down, metric medians across.
	for cell, want := range map[string]string{"A1": "group", "C1": "storage_read_p95 (ms)", "A2": a.Label, "B2": "2", "A3": b.Label} {
		if got := xlsxCell(t, f, "Summary", cell); got != want {
			t.Errorf("Summary!%s = %q, want %q", cell, got, want)
		}
	}
	near("Summary", "C2", a.Stats["storage_read_p95"].Median)
	near("Summary", "F3", b.Stats["lag_p99"].Median)

	// Trials: one row per trial, metrics after the run facts.
	rows, err := f.GetRows("Trials")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+3 {
		t.Errorf("Trials has %d rows, want a header and 3 trials", len(rows))
	}
	near("Trials", "M3", a.Values["storage_read_p95"][1])
	if got := xlsxCell(t, f, "Trials", "L2"); got != "PASS" {
		t.Errorf("Trials!L2 (storage_health) = %q, want PASS", got)
	}

	// Comparison: the ratio and win rate of the second group.
	if got := xlsxCell(t, f, "Comparison", "F1"); got != b.Label+" ratio" {
		t.Errorf("Comparison!F1 = %q", got)
	}
	near("Comparison", "D2", r.Comparison.Rows[0].Baseline)
	near("Comparison", "F2", r.Comparison.Rows[0].Ratios[b.Label])
	near("Comparison", "G2", r.Comparison.Rows[0].WinRate[b.Label])

	// Health: one row per trial and criterion as kvreport judges them,
	// and one per reason that is not a criterion's.
	rows, err = f.GetRows("Health")
	if err != nil {
		t.Fatal(err)
	}
	var criteria int
	for _, g := range r.Groups {
		for _, tr := range g.Trials {
			h := judgedHealth(tr)
			if len(h.Criteria) == 0 {
				criteria++ // one row, its reasons joined
				continue
			}
			criteria += len(h.Criteria) + len(h.Reasons) - countFailed(h.Criteria)
		}
	}
	if len(rows) != 1+criteria {
		t.Errorf("Health has %d rows, want %d", len(rows), 1+criteria)
	}
	if got := xlsxCell(t, f, "Health", "C2"); got != "PASS" {
		t.Errorf("Health!C2 = %q, want PASS", got)
	}

	// Cells: every trial's tier x op x phase with its percentiles.
	rows, err = f.GetRows("Cells")
	if err != nil {
		t.Fatal(err)
	}
	var cells int
	for _, g := range r.Groups {
		for _, tr := range g.Trials {
			cells += len(tr.Cells)
		}
	}
	if len(rows) != 1+cells {
		t.Errorf("Cells has %d rows, want %d", len(rows), 1+cells)
	}
	c0 := a.Trials[0].Cells[0]
	for cell, want := range map[string]string{"C2": c0.Tier, "E2": c0.Op, "F2": c0.Phase, "G1": "ops", "H1": "failed_ops", "T1": "p99_us"} {
		if got := xlsxCell(t, f, "Cells", cell); got != want {
			t.Errorf("Cells!%s = %q, want %q", cell, got, want)
		}
	}
	near("Cells", "T2", c0.Latency.P99US)

	if got := xlsxCell(t, f, "Warnings", "A2"); !strings.HasPrefix(got, "ram+nvme: SCALED RUN") {
		t.Errorf("Warnings!A2 = %q, want the SCALED RUN warning naming its group", got)
	}
}

func TestXLSXMissingFigures(t *testing.T) {
	r := testReport(t)
	r.Comparison = nil
	r.Groups[1].Stats = map[string]Stats{}
	r.Groups[1].Values["storage_read_p95"] = []float64{math.NaN()}
	r.Groups[1].TrialValues[0]["storage_read_p95"] = math.NaN() // the Trials sheet's source
	f := renderXLSXFile(t, r)
	for _, cell := range []string{"C3", "D3"} {
		if got := xlsxCell(t, f, "Summary", cell); got != "" {
			t.Errorf("Summary!%s = %q, want empty for a missing median", cell, got)
		}
	}
	if got := xlsxCell(t, f, "Trials", "M4"); got != "" {
		t.Errorf("Trials!M4 = %q, want empty for NaN", got)
	}
	if rows, err := f.GetRows("Comparison"); err != nil || len(rows) != 1 {
		t.Errorf("Comparison without a comparison: %d rows (%v), want the header alone", len(rows), err)
	}
}

// TestXLSXTrialNumbers: the workbook names trials by their numbers
// (kvreplay --trial), as the other formats do, and places each trial's
// own values on its row: an incomplete first trial has no
// storage_health_pass, and the second's is not moved onto it.
func TestXLSXTrialNumbers(t *testing.T) {
	var docs []*Doc
	for _, trial := range []int{5, 7} {
		r := loadTestResult(t, "a1.json")
		r.Trial = trial
		if trial == 5 {
			r.Complete, r.IncompleteReason = false, "interrupted"
		}
		docs = append(docs, &Doc{Path: "a" + strconv.Itoa(trial) + ".json", Kind: KindKVReplay, Label: "a", Trial: trial, Result: r})
	}
	rep, err := Build(docs, BuildOptions{Metrics: []string{MetricHealth}})
	if err != nil {
		t.Fatal(err)
	}
	f := renderXLSXFile(t, rep)
	for _, sheet := range []string{"Trials", "Health", "Cells"} {
		rows, err := f.GetRows(sheet)
		if err != nil || len(rows) < 3 {
			t.Fatalf("%s: %d rows, %v", sheet, len(rows), err)
		}
		if rows[1][1] != "5" || rows[len(rows)-1][1] != "7" {
			t.Errorf("%s: trials %q to %q, want 5 to 7", sheet, rows[1][1], rows[len(rows)-1][1])
		}
	}
	rows, _ := f.GetRows("Trials")
	col := slices.Index(rows[0], xlsxMetricName(Metric{Name: MetricHealth, Unit: "pass"}))
	if col < 0 {
		t.Fatalf("Trials: no %s column in %q", MetricHealth, rows[0])
	}
	cell := func(row int) string {
		if col < len(rows[row]) {
			return rows[row][col]
		}
		return ""
	}
	if cell(1) != "" || cell(2) != "1" {
		t.Errorf("Trials: storage_health_pass %q (incomplete trial 5) and %q (trial 7), want empty and 1", cell(1), cell(2))
	}
	var page strings.Builder
	if err := Render(&page, rep, "html"); err != nil {
		t.Fatal(err)
	}
	if s := page.String(); !strings.Contains(s, "a trial 7: 1.000") || strings.Contains(s, "a trial 1:") || strings.Contains(s, "a trial 5: 1") {
		t.Errorf("html: the storage_health_pass dot is not trial 7's alone")
	}
}

func TestRenderWriteError(t *testing.T) {
	boom := errors.New("boom")
	if err := renderXLSX(errWriter{boom}, testReport(t)); !errors.Is(err, boom) {
		t.Errorf("renderXLSX to a failing writer: %v, want %v", err, boom)
	}
	if err := renderHTML(errWriter{boom}, testReport(t)); !errors.Is(err, boom) {
		t.Errorf("renderHTML to a failing writer: %v, want %v", err, boom)
	}
}

// errWriter fails every write with its error.
type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// TestRenderFailedOps: the operations that failed (schema.Cell.FailedOps,
// in no other figure) are in the workbook's Cells sheet beside each
// cell's operations, and, per trial, beside its errors in the Trials
// sheet and the HTML page's table of trials, as the text summary shows
// them: no rendering but the text one had them.
func TestRenderFailedOps(t *testing.T) {
	r := loadTestResult(t, "a1.json")
	r.Cells[1].FailedOps = 3
	tier := slices.IndexFunc(r.Tiers, func(tt schema.TierTotals) bool { return tt.Tier == r.Cells[1].Tier })
	if tier < 0 {
		t.Fatalf("no tier %s", r.Cells[1].Tier)
	}
	r.Tiers[tier].FailedOps = 3
	r.Errors.Count = 4
	rep, err := Build([]*Doc{{Path: "a1.json", Kind: KindKVReplay, Label: "a", Trial: 1, Result: r}}, BuildOptions{Metrics: []string{MetricHealth}})
	if err != nil {
		t.Fatal(err)
	}
	f := renderXLSXFile(t, rep)
	column := func(sheet, name string) []string {
		t.Helper()
		rows, err := f.GetRows(sheet)
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s: %d rows, %v", sheet, len(rows), err)
		}
		col := slices.Index(rows[0], name)
		if col < 0 {
			t.Fatalf("%s: no %s column in %q", sheet, name, rows[0])
		}
		var out []string
		for _, row := range rows[1:] {
			v := ""
			if col < len(row) {
				v = row[col]
			}
			out = append(out, v)
		}
		return out
	}
	want := make([]string, len(r.Cells))
	for i, c := range r.Cells {
		want[i] = strconv.FormatInt(c.FailedOps, 10)
	}
	if got := column("Cells", "failed_ops"); !slices.Equal(got, want) {
		t.Errorf("Cells: failed_ops %q, want %q", got, want)
	}
	if got := column("Trials", "failed_ops"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("Trials: failed_ops %q, want [3]", got)
	}
	var page strings.Builder
	if err := Render(&page, rep, "html"); err != nil {
		t.Fatal(err)
	}
	if s := page.String(); !strings.Contains(s, "<th>errors</th><th>failed ops</th>") || !strings.Contains(s, `<td class="bad">4</td><td class="bad">3</td>`) {
		t.Errorf("html: the table of trials has no failed ops column holding 3 beside its 4 errors")
	}
}
