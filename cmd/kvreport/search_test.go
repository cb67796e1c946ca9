package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestSearchDocuments renders search documents from files and stdin,
// compares two systems, and refuses a search beside a result.
func TestSearchDocuments(t *testing.T) {
	dir := t.TempDir()
	write := func(name, system string, users int) string {
		d := schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: system},
			Kind: schema.SearchUsers, Users: users, TotalUsers: 20, Confidence: 1, Resolution: 1, Done: true, Reason: "found",
			Probes: []schema.SearchProbe{{Users: users, Pass: true, RequestsPerSecond: 10}}}
		b, _ := json.Marshal(d)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.json", "A", 5), write("b.json", "B", 9)
	code, out, errs := kvreport(t, "", a, b)
	if code != 0 || !strings.Contains(out, "B serves 1.80x the users of A (9 vs 5)") {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
	raw, _ := os.ReadFile(b)
	if code, out, _ := kvreport(t, string(raw), "-"); code != 0 || !strings.Contains(out, "9 of 20 users") {
		t.Errorf("stdin: exit %d:\n%s", code, out)
	}
	if code, _, errs := kvreport(t, "", a, docA); code != 2 || !strings.Contains(errs, "search") {
		t.Errorf("search beside a result: exit %d: %s", code, errs)
	}
	// Every format --format names that a search has: md (the flag's name
	// for Markdown), json and csv; xlsx, bench are refused as input errors.
	for f, want := range map[string]string{"md": "| probe |", "json": `"comparisons": [`, "csv": "search,kind,answer,probe,"} {
		if code, out, errs := kvreport(t, "", "--format", f, a, b); code != 0 || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, stdout:\n%s\nstderr: %s", f, code, out, errs)
		}
	}
	if code, _, errs := kvreport(t, "", "--format", "xlsx", "-o", filepath.Join(dir, "x.xlsx"), a); code != 2 || !strings.Contains(errs, "search documents render as") {
		t.Errorf("--format xlsx of a search: exit %d: %s", code, errs)
	}
	// --baseline picks the search the others are compared with; the
	// report's options for results, which a search has no use for, are
	// refused rather than ignored.
	if code, out, errs := kvreport(t, "", "--baseline", "B", a, b); code != 0 || !strings.Contains(out, "A serves 0.56x the users of B (5 vs 9)") {
		t.Errorf("--baseline B: exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
	if code, _, errs := kvreport(t, "", "--baseline", "C", a, b); code != 2 || !strings.Contains(errs, `--baseline C: no such search (searches: "A", "B"): name one as listed`) {
		t.Errorf("--baseline C: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{{"--metrics", "bogus"}, {"--label", "x"}, {"--group-by", "file"}} {
		if code, _, errs := kvreport(t, "", append(args, a, b)...); code != 2 || !strings.Contains(errs, "options of a report on results") {
			t.Errorf("%q on searches: exit %d: %s", args, code, errs)
		}
	}
	// A glob names them as Load's globs do.
	if code, out, errs := kvreport(t, "", filepath.Join(dir, "*.json")); code != 0 || !strings.Contains(out, "B serves 1.80x the users of A") {
		t.Errorf("glob: exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
}

// TestSearchBaselineOfTrials: --baseline A names the search of system A
// when it has one, whatever its trial ("A trial 2", SearchName's); it
// named none, and the error listed "A trial 2" without saying that was
// the name to give. Where A has several searches (its trials), which is
// the baseline is the user's to say: the error lists them and how to name
// one, and the name it suggests works.
func TestSearchBaselineOfTrials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, system string, trial, users int) string {
		d := schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: system},
			Trial: trial, Kind: schema.SearchUsers, Users: users, TotalUsers: 20, Confidence: 1, Resolution: 1, Done: true, Reason: "found",
			Probes: []schema.SearchProbe{{Users: users, Pass: true, RequestsPerSecond: 10}}}
		b, _ := json.Marshal(d)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a2, b1 := write("a2.json", "A", 2, 5), write("b1.json", "B", 1, 9)
	if code, out, errs := kvreport(t, "", "--baseline", "A", b1, a2); code != 0 || !strings.Contains(out, "B trial 1 serves 1.80x the users of A trial 2 (9 vs 5)") {
		t.Errorf("--baseline A of one search of A: exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
	a1 := write("a1.json", "A", 1, 6)
	code, _, errs := kvreport(t, "", "--baseline", "A", b1, a1, a2)
	if want := `--baseline A: 2 searches are of A ("A trial 1", "A trial 2"): name the one to compare with, as --baseline "A trial 1", or by its file`; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("--baseline A of two searches of A: exit %d: %s\nwant %s", code, errs, want)
	}
	if code, out, errs := kvreport(t, "", "--baseline", "A trial 1", b1, a1, a2); code != 0 || !strings.Contains(out, "B trial 1 serves 1.50x the users of A trial 1 (9 vs 6)") {
		t.Errorf("--baseline \"A trial 1\": exit %d, stdout:\n%s\nstderr: %s", code, out, errs)
	}
}
