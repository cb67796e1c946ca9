package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestXLSXSummaryWarningsNotCut: a cell holds at most 32767 characters,
// and excelize cuts a longer string without a word. The Summary's
// warnings of a group of many ranks (each rank's own --shard key warning,
// its counts its own) run past that: the cell keeps whole warnings and
// says how many more the Warnings sheet holds, never a warning cut in two
// and the rest silently gone.
func TestXLSXSummaryWarningsNotCut(t *testing.T) {
	r := testReport(t)
	g := r.Groups[0]
	g.Warnings = nil
	for rank := range 160 {
		g.Warnings = append(g.Warnings, fmt.Sprintf("rank %d: --shard key: %d of the %d requests this rank ran have rows on other ranks too "+
			"(their objects' keys hash to several ranks); each rank times its part of a request as a request, so merged request counts and latencies are of parts of requests",
			rank, rank%7, rank%7+3))
	}
	all := groupWarnings(allWarnings(r), g.Label, r.Groups)
	if n := len(strings.Join(all, " | ")); n <= excelize.TotalCellChars {
		t.Fatalf("the group's warnings are %d characters: want more than a cell holds, %d", n, excelize.TotalCellChars)
	}
	f := renderXLSXFile(t, r)
	rows, err := f.GetRows(xlsxSummary)
	if err != nil {
		t.Fatal(err)
	}
	head, row := rows[0], rows[1]
	col := len(head) - 1
	if head[col] != "warnings" || len(row) <= col {
		t.Fatalf("Summary: no warnings cell for %s in %q", g.Label, head)
	}
	cell := row[col]
	kept := 0
	for _, w := range all {
		if strings.Contains(cell, w) {
			kept++
		}
	}
	more := 0
	if m := regexp.MustCompile(`(\d+) more warnings?: see the Warnings sheet$`).FindStringSubmatch(cell); m != nil {
		more, _ = strconv.Atoi(m[1])
	}
	if kept+more != len(all) || kept == 0 {
		t.Errorf("Summary!%s warnings: %d of %d whole, %d said to be on the Warnings sheet (a cell of %d characters ending %q)",
			g.Label, kept, len(all), more, len(cell), cell[max(0, len(cell)-80):])
	}
	warnings, err := f.GetRows(xlsxWarnings)
	if err != nil || len(warnings) < 1+len(all) {
		t.Errorf("Warnings sheet: %d rows (%v), want all %d of the group's", len(warnings), err, len(all))
	}
}

// TestXLSXLabelsAreText: labels and trace names come from the command
// line and file names; one that starts with =, +, - or @ is a string cell,
// never a formula that a spreadsheet would evaluate.
func TestXLSXLabelsAreText(t *testing.T) {
	r := testReport(t)
	r.Groups[0].Label, r.Groups[1].Label = `=HYPERLINK("http://x","y")`, "@SUM(1+1)"
	r.Comparison.Baseline = r.Groups[0].Label
	f := renderXLSXFile(t, r)
	for _, cell := range []struct{ sheet, cell, want string }{
		{xlsxSummary, "A2", r.Groups[0].Label},
		{xlsxSummary, "A3", r.Groups[1].Label},
		{xlsxTrials, "A2", r.Groups[0].Label},
		{xlsxComparison, "D1", r.Groups[0].Label + " median (baseline)"},
	} {
		got := xlsxCell(t, f, cell.sheet, cell.cell)
		typ, _ := f.GetCellType(cell.sheet, cell.cell)
		formula, _ := f.GetCellFormula(cell.sheet, cell.cell)
		if got != cell.want || formula != "" || typ != excelize.CellTypeSharedString {
			t.Errorf("%s!%s = %q (type %v, formula %q), want the string %q", cell.sheet, cell.cell, got, typ, formula, cell.want)
		}
	}
}
