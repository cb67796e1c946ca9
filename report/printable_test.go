package report

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

func TestPrintable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"sysA fast-nvme/1", "sysA fast-nvme/1"},
		{"x\nPASS 6/6", `x\nPASS 6/6`},
		{"a\tb\r\n", `a\tb\r\n`},
		{"\x1b[2Jred", `\x1b[2Jred`},
		{"évian ✓ 東京", "évian ✓ 東京"},
		{"right\u202eleft", `right\u202eleft`},
		{"line\u2028sep", `line\u2028sep`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"\x00", `\x00`},
		{"back\\slash", `back\slash`},
		{"\ufffd", "\ufffd"},
	} {
		if got := parsemsg.Printable(tc.in); got != tc.want {
			t.Errorf("parsemsg.Printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHostileText: the text a document holds (its label, system,
// warnings, tier paths) and a label made of a file name are shown
// escaped, alike in every format, so that none breaks its format or
// forges a line: a label "x\nPASS 6/6" wrote a line "PASS 6/6" of its
// own in the text and bench formats, a tab split the text tables' columns
// and a newline the Markdown rows, and an escape sequence reached the
// terminal. A label that begins as a spreadsheet formula is led by an
// apostrophe in csv; HTML escapes markup.
func TestHostileText(t *testing.T) {
	dir := t.TempDir()
	edit := func(src, dst string, change func(d map[string]any)) string {
		t.Helper()
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		change(d)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, dst)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := edit(closedResult, "a.json", func(d map[string]any) {
		d["label"] = "x\nPASS 6/6"
		d["system"] = "<script>alert(1)</script>"
		d["warnings"] = append(d["warnings"].([]any), "w\r\nWARNING: all clear\tat|once\x1b[2J\u202e")
		d["host"].(map[string]any)["tier_paths"].([]any)[1].(map[string]any)["path"] = "/mnt/a\nb|c"
	})
	b := edit("testdata/u10_t1.json", "=2+3\nPASS.json", func(d map[string]any) { delete(d, "label") })
	r := build(t, []string{a, b}, LoadOptions{}, BuildOptions{})
	out := renderAll(t, r)
	for f, s := range out {
		if i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != ' ' && !strconv.IsPrint(r) }); i >= 0 && f != "xlsx" {
			t.Errorf("%s: a character that is not printable: %q", f, s[max(i-40, 0):min(i+40, len(s))])
		}
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "PASS") || strings.HasPrefix(line, "WARNING: all clear") {
				t.Errorf("%s: a line forged by a document's text: %q", f, line)
			}
		}
		for _, want := range []string{`x\nPASS 6/6`, `=2+3\nPASS`} {
			if f != "json" && !strings.Contains(s, want) { // json's is below, decoded
				t.Errorf("%s: no %q", f, want)
			}
		}
	}
	if s := out["xlsx"]; strings.ContainsAny(s, "\r\x1b\u202e") || strings.Contains(s, "x\nPASS") {
		t.Errorf("xlsx: a document's text unescaped:\n%s", s)
	}
	for _, line := range strings.Split(out["bench"], "\n") {
		if line != "" && !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "group: ") && !strings.HasPrefix(line, "BenchmarkKV/") {
			t.Errorf("bench: a line benchstat would misread: %q", line)
		}
	}
	// Each Markdown table's rows have its header's cells.
	cells := func(line string) int { return strings.Count(line, "|") - strings.Count(line, `\|`) - 1 }
	width := 0
	for _, line := range strings.Split(out["md"], "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			width = 0
		case width == 0:
			width = cells(line)
		case cells(line) != width:
			t.Errorf("md: a row of %d cells under a header of %d: %s", cells(line), width, line)
		}
	}
	if h := out["html"]; strings.Contains(h, "<script") || !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("html: the system's markup is not escaped")
	}
	recs, err := csv.NewReader(strings.NewReader(out["csv"])).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	groups := map[string]bool{}
	for _, rec := range recs[1:] {
		groups[rec[0]] = true
	}
	if !groups[`x\nPASS 6/6`] || !groups[`'=2+3\nPASS`] {
		t.Errorf("csv: groups %v, want x\\nPASS 6/6 and '=2+3\\nPASS (a formula's text, not a formula)", groups)
	}
	var doc struct{ Groups []struct{ Label string } }
	if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 2 || doc.Groups[0].Label != `x\nPASS 6/6` || doc.Groups[1].Label != `=2+3\nPASS` {
		t.Errorf("json: groups %+v, want the labels as every format shows them", doc.Groups)
	}
}

// TestHostileSearchText: a search document's text is shown escaped, as a
// result's is (TestHostileText), and its csv fields that begin as a
// formula are led by an apostrophe.
func TestHostileSearchText(t *testing.T) {
	raw, err := os.ReadFile("testdata/search_capacity_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	d["label"] = "=1+2\nPASS: 6 users"
	d["warnings"] = []any{"@SUM(A1)\r\nWARNING: all clear"}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	docs, names, err := LoadSearches(t.Context(), []string{p}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range SearchFormats {
		var out strings.Builder
		if err := RenderSearches(&out, docs, names, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "PASS: 6 users") || strings.HasPrefix(line, "WARNING: all clear") {
				t.Errorf("%s: a line forged by the document's text: %q", f, line)
			}
		}
		if f != "csv" {
			continue
		}
		recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs[1:] {
			if rec[0] != `'=1+2\nPASS: 6 users` || rec[len(rec)-1] != `'@SUM(A1)\r\nWARNING: all clear` {
				t.Errorf("csv: search %q, warnings %q: want them escaped, led by an apostrophe", rec[0], rec[len(rec)-1])
			}
		}
	}
}

// TestReplaySummaryPrintable: kvreplay's summary on a terminal prints the
// text of its result (a reason, a warning, an error an S3 server sent)
// escaped: an escape sequence in a server's error reached the terminal,
// and a newline in a warning forged a line of the summary.
func TestReplaySummaryPrintable(t *testing.T) {
	r := &schema.Result{Complete: false, IncompleteReason: "stopped\n\x1b[2J",
		Warnings: []string{"w\nstorage_health: PASS"},
		Errors:   schema.ErrorStats{Count: 1, First: []string{"503 SlowDown\x1b]0;owned\x07"}}}
	r.Summary.StorageHealth = results.Judge(nil, []string{"1 operation(s) failed\nPASS"}, r.IncompleteReason)
	var b strings.Builder
	WriteReplaySummary(&b, r)
	s := b.String()
	if i := strings.IndexFunc(s, func(r rune) bool { return r != '\n' && r != ' ' && !strconv.IsPrint(r) }); i >= 0 {
		t.Errorf("a character that is not printable: %q", s[max(i-40, 0):min(i+40, len(s))])
	}
	for _, line := range strings.Split(s, "\n") {
		if line == "storage_health: PASS" || line == "PASS" || strings.HasPrefix(line, "PASS") {
			t.Errorf("a line forged by the result's text: %q", line)
		}
	}
}
