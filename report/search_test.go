package report_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

func writeDoc(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func usersSearch(system string, users int) *schema.SearchResult {
	return &schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: system},
		Kind: schema.SearchUsers, Users: users, TotalUsers: 40, Confidence: 1, Resolution: 1, Done: true, WindowS: 20,
		Reason: "x users passed", Warnings: []string{"SCALED RUN: test"},
		Probes: []schema.SearchProbe{
			{Users: 10, Pass: true, RequestsPerSecond: 50, P95MSByQoS: map[string]float64{"interactive": 20}},
			{Users: 20, Pass: false, Reason: "interactive: 80% within 50 ms", RequestsPerSecond: 60, P95MSByQoS: map[string]float64{"interactive": 90}},
		}}
}

// TestRenderSearches renders users searches of two systems in every
// format searches have: the answers, every probe, the warnings, and the
// comparison with the first.
func TestRenderSearches(t *testing.T) {
	dir := t.TempDir()
	a := writeDoc(t, dir, "a.json", usersSearch("A", 10))
	b := writeDoc(t, dir, "b.json", usersSearch("B", 18))
	docs, names, err := report.LoadSearches(context.Background(), []string{a, b}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "html", "json", "csv"} {
		var out strings.Builder
		if err := report.RenderSearches(&out, docs, names, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := out.String()
		wants := []string{"B serves 1.80x the users of A (18 vs 10)", "10 of 40 users", "FAIL: interactive: 80% within 50 ms", "SCALED RUN"}
		switch f {
		case "json":
			checkSearchJSON(t, s)
			wants = wants[:2] // a probe's verdict is its pass and reason
		case "csv":
			checkSearchCSV(t, s)
		default:
			wants = append(wants, "20 users")
		}
		for _, want := range wants {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q in\n%s", f, want, s)
			}
		}
		if f == "html" && !strings.Contains(s, "<svg") {
			t.Errorf("html: no probe curve")
		}
		// The page's warnings, all at its top, say whose each is.
		if f == "html" && (!strings.Contains(s, "<li>WARNING: A: SCALED RUN: test</li>") || !strings.Contains(s, "<li>WARNING: B: SCALED RUN: test</li>")) {
			t.Errorf("html: the warnings do not name their searches:\n%s", s)
		}
	}
	if err := report.RenderSearches(&strings.Builder{}, docs, names, "xlsx"); err == nil {
		t.Errorf("xlsx of a search: no error")
	}
	// A result beside a search, and searches of two kinds, are refused.
	res := writeDoc(t, dir, "r.json", &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion}})
	if _, _, err := report.LoadSearches(context.Background(), []string{a, res}, nil, nil); !errors.Is(err, report.ErrFormat) {
		t.Errorf("search and result: %v", err)
	}
	c := usersSearch("C", 3)
	c.Kind = schema.SearchCapacity
	if _, _, err := report.LoadSearches(context.Background(), []string{a, writeDoc(t, dir, "c.json", c)}, nil, nil); err == nil {
		t.Errorf("two kinds of search: no error")
	}
}

// TestLoadSearchStream reads searches as Load reads results: a stream of
// documents on stdin, or several in one file, each named by its place
// (name#N); a result among them is refused by its place.
func TestLoadSearchStream(t *testing.T) {
	var stream strings.Builder
	for _, d := range []*schema.SearchResult{usersSearch("A", 10), usersSearch("B", 18)} {
		b, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
		stream.WriteString("\n")
	}
	docs, names, err := report.LoadSearches(context.Background(), []string{"-"}, strings.NewReader(stream.String()), nil)
	if err != nil {
		t.Fatalf("stdin: %v", err)
	}
	if len(docs) != 2 || docs[0].System != "A" || docs[1].System != "B" || strings.Join(names, " ") != "-#1 -#2" {
		t.Fatalf("stdin: %d documents named %q", len(docs), names)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "both.json")
	if err := os.WriteFile(file, []byte(stream.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if docs, names, err = report.LoadSearches(context.Background(), []string{file}, nil, nil); err != nil || len(docs) != 2 || names[0] != file || names[1] != file+"#2" {
		t.Fatalf("a file of two: %d documents named %q, %v", len(docs), names, err)
	}
	res, err := json.Marshal(&schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = report.LoadSearches(context.Background(), []string{"-"}, strings.NewReader(stream.String()+string(res)), nil)
	if !errors.Is(err, report.ErrFormat) || !strings.Contains(err.Error(), "-#3") {
		t.Errorf("a result third on stdin: %v", err)
	}
}

// TestSearchNamesApart: two searches of one system (two runs of it) are
// named by system and file in every format, so that the comparison says
// which is which; searches of distinct systems keep their plain names.
func TestSearchNamesApart(t *testing.T) {
	dir := t.TempDir()
	a := writeDoc(t, dir, "monday.json", usersSearch("A", 10))
	b := writeDoc(t, dir, "tuesday.json", usersSearch("A", 15))
	docs, names, err := report.LoadSearches(context.Background(), []string{a, b}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range report.SearchFormats {
		var out strings.Builder
		if err := report.RenderSearches(&out, docs, names, f); err != nil {
			t.Fatal(err)
		}
		want := "A (" + b + ") serves 1.50x the users of A (" + a + ") (15 vs 10)"
		if f == "csv" {
			want = "A (" + b + "),users"
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s: no %q in\n%s", f, want, out.String())
		}
	}
}

// TestSniffFormat reads a document's format without reading past it, and
// finds it after other members too.
func TestSniffFormat(t *testing.T) {
	past := iotest.ErrReader(errors.New("read past the format"))
	if got := report.SniffFormat(io.MultiReader(strings.NewReader(`{"format": "kvbench-search", "probes": [`), past)); got != schema.SearchFormat {
		t.Errorf("format first: %q", got)
	}
	for doc, want := range map[string]string{
		`{"tool": "kvreplay", "n": {"a": [1, 2]}, "format": "kvbench-result"}`: "kvbench-result",
		`{"format": 3}`:               "",
		`[{"format": "x"}]`:           "",
		`not json`:                    "",
		`{"other": "kvbench-search"}`: "",
		// A null member changes nothing, as in the documents' decode.
		`{"format": "kvbench-search", "format": null}`: "kvbench-search",
		`{"format": null}`: "",
	} {
		if got := report.SniffFormat(strings.NewReader(doc)); got != want {
			t.Errorf("%s: %q, want %q", doc, got, want)
		}
	}
}

// TestRenderSearchHTML renders searches of both kinds as the report's
// page: its styling, charts whose axes are labelled with their units,
// the answers (a lower bound, a search saturated from its first probe)
// and each probe's verdict and users by class.
func TestRenderSearchHTML(t *testing.T) {
	users := usersSearch("A", 10)
	users.UserSelection = "stratified by QoS class"
	users.Probes[0].UsersByQoS = map[string]int{"interactive": 3, "batch": 7}
	capacity := &schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: "B"},
		Kind: schema.SearchCapacity, PeakOfferedBps: 2e9, PeakSpeed: 0.25, Plateau: true, SaturatedFromFirstProbe: true, Done: true, WindowS: 30,
		Reason: "saturated from the first probe: ...",
		Probes: []schema.SearchProbe{
			{Speed: 0.25, Pass: true, Reason: "storage_health PASS", OfferedBps: 2e9, P95MSByQoS: map[string]float64{"batch": 30}},
			{Speed: 0.5, Pass: false, Reason: "storage_health FAIL: Storage Tier Read Total P95 < 200ms failed at 312.0 ms", OfferedBps: 1.99e9},
		}}
	stopped := usersSearch("C", 3)
	stopped.Done, stopped.AnswerIsLowerBound = false, true
	stopped.Probes = append(stopped.Probes, schema.SearchProbe{Users: 40, NotMeasured: "the run did not complete: no space left on device"})
	for _, tt := range []struct {
		doc  *schema.SearchResult
		want []string
	}{
		{users, []string{"users (probe)", ">requests/s<", "p95 latency (ms)", "Throughput by users", "10 users (interactive 3, batch 7)",
			`<td class="fail">FAIL: interactive: 80% within 50 ms</td>`, "stratified by QoS class"}},
		{capacity, []string{"--speed (× the trace&#39;s pace)", "offered load (GB/s)", "peak offered load 2.00 GB/s at --speed 0.25, saturated from the first probe",
			`<td class="pass">PASS: storage_health PASS</td>`, "FAIL: storage_health FAIL: Storage Tier Read Total P95 &lt; 200ms failed at 312.0 ms"}},
		{stopped, []string{"at least 3 of 40 users", "a lower bound", "NOT A MEASUREMENT: the run did not complete: no space left on device"}},
	} {
		var out strings.Builder
		if err := report.RenderSearches(&out, []*schema.SearchResult{tt.doc}, []string{"x.json"}, "html"); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		// The report's styling, and labelled axes with ticks.
		for _, w := range append(tt.want, "<style>", "svg .axis { font-size: 12px", `class="axis"`, `class="tick"`, `<svg class="chart"`) {
			if !strings.Contains(s, w) {
				t.Errorf("%s search: no %q in\n%s", tt.doc.Kind, w, s)
			}
		}
	}
}

// checkSearchJSON checks that --format json of the two searches of
// TestRenderSearches holds each document whole, with its name and answer.
func checkSearchJSON(t *testing.T, s string) {
	t.Helper()
	var got struct {
		Searches []struct {
			Name   string
			Answer string
			Search schema.SearchResult
		}
		Comparisons []string
	}
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("json: %v", err)
	}
	if len(got.Searches) != 2 || got.Searches[0].Name != "A" || got.Searches[1].Search.Users != 18 ||
		got.Searches[1].Search.Format != schema.SearchFormat || len(got.Searches[1].Search.Probes) != 2 ||
		got.Searches[1].Search.Probes[1].Reason != "interactive: 80% within 50 ms" || len(got.Comparisons) != 1 {
		t.Errorf("json: %+v", got)
	}
}

// checkSearchCSV checks that --format csv of the two searches of
// TestRenderSearches has a row a probe, its figures as numbers.
func checkSearchCSV(t *testing.T, s string) {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v", err)
	}
	if len(rows) != 5 {
		t.Fatalf("csv: %d rows, want a header and 4 probes", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	last := rows[4]
	for k, want := range map[string]string{"search": "B", "users": "20", "speed": "", "pass": "false",
		"requests_per_second": "60", "p95_ms_interactive": "90", "verdict": "FAIL: interactive: 80% within 50 ms"} {
		if i, ok := col[k]; !ok || last[i] != want {
			t.Errorf("csv: column %q of the last probe: want %q in %v", k, want, last)
		}
	}
}

// TestSearchNamesItsTrial: searches of one system with --trial are named
// by it, so that their comparison says which trial is which.
func TestSearchNamesItsTrial(t *testing.T) {
	dir := t.TempDir()
	one, two := usersSearch("A", 10), usersSearch("A", 15)
	one.Trial, two.Trial = 1, 2
	docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "1.json", one), writeDoc(t, dir, "2.json", two)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report.RenderSearches(&out, docs, names, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "A trial 2 serves 1.50x the users of A trial 1 (15 vs 10)"; !strings.Contains(out.String(), want) {
		t.Errorf("no %q in\n%s", want, out.String())
	}
}
