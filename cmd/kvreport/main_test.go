package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/schema"
)

const (
	docA = "../../report/testdata/u10_t1.json"
	docB = "../../report/testdata/u10_t2.json"
	ref  = "../../testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.json"
)

func kvreport(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main("kvreport", args, &out, &errb, runWith(strings.NewReader(stdin)))
	return code, out.String(), errb.String()
}

// TestExitStatus: --help and --version succeed; bad flags, formats and
// inputs exit 2 with one line on stderr.
func TestExitStatus(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"kvbench-result","format_version":99}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "no RESULT given"},
		{[]string{"--help"}, 0, "kvreport: merge, compare", ""},
		{[]string{"help"}, 0, "kvreport: merge, compare", ""},
		{[]string{"merge", "--help"}, 0, "kvreport merge:", ""},
		{[]string{"help", "merge"}, 0, "kvreport merge:", ""},
		{[]string{"help", "nope"}, 2, "", "help nope: no such command"},
		{[]string{"--version"}, 0, "kvreport ", ""},
		{[]string{"--nope"}, 2, "", "unknown flag: --nope"},
		{[]string{"--format", "pdf", docA}, 2, "", "--format pdf: must be one of"},
		{[]string{"--group-by", "colour", docA}, 2, "", "--group-by colour"},
		{[]string{"--group-by", "system", docA, docB}, 2, "", "--group-by system: none of the 2 documents has a system (kvreplay --system sets one"},
		{[]string{"--label", "x", "--group-by", "system", docA}, 2, "", "--label x and --group-by system: --label puts every document in one group"},
		{[]string{bad}, 2, "", "format_version 99"},
		{[]string{"nonexistent.json"}, 2, "", "nonexistent.json"},
		{[]string{"--baseline", "nobody", docA}, 2, "", "--baseline nobody: no such group"},
		{[]string{"merge", ref}, 2, "", "only kvreplay results merge"},
	}
	for _, tt := range tests {
		code, out, errs := kvreport(t, "", tt.args...)
		if code != tt.code || !strings.HasPrefix(out, tt.stdout) || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%v: exit %d stdout %.80q stderr %q", tt.args, code, out, errs)
		}
		if code == 0 && strings.Contains(out, "Options:") {
			if errs != "" {
				t.Errorf("%v: help printed %q on stderr", tt.args, errs)
			}
			clitest.CheckDefaultsOnce(t, out)
		}
		if code == 2 && strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: want one line on stderr, got %q", tt.args, errs)
		}
	}
}

// TestReport renders two trials and the reference document side by side.
func TestReport(t *testing.T) {
	code, out, errs := kvreport(t, "", "--format", "md", docA, docB, ref)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"## comparison", "tier2_read_offered", "| storage_health_pass |"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestStdinStream reads two concatenated documents from "-".
func TestStdinStream(t *testing.T) {
	a, _ := os.ReadFile(docA)
	b, _ := os.ReadFile(docB)
	code, out, errs := kvreport(t, string(a)+string(b), "--format", "bench", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "/tier1_read_offered 1 "); n != 2 {
		t.Errorf("want 2 trials' tier1_read_offered lines, got %d:\n%s", n, out)
	}
}

// rankOf writes a copy of the document at path as rank of ranks of trial
// 1 (the ranks of one run share its trial), in dir.
func rankOf(t *testing.T, dir, path string, rank, ranks int) string {
	t.Helper()
	name := fmt.Sprintf("%s.rank%d.json", strings.TrimSuffix(filepath.Base(path), ".json"), rank)
	return edited(t, dir, path, name, func(doc map[string]any) {
		doc["rank"], doc["ranks"], doc["trial"] = rank, ranks, 1
	})
}

// shard3 are the three ranks of one real run
// (report/testdata/shard3/README.md).
var shard3 = []string{"../../report/testdata/shard3/r0.json", "../../report/testdata/shard3/r1.json", "../../report/testdata/shard3/r2.json"}

// edited writes a copy of the document at path, changed by edit, to
// dir/name.
func edited(t *testing.T, dir, path, name string, edit func(map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	name = filepath.Join(dir, name)
	if err := os.WriteFile(name, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestMerge writes a merged document of two ranks that kvreport reads
// back.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.json")
	r0, r1 := rankOf(t, dir, docA, 0, 2), rankOf(t, dir, docB, 1, 2)
	if code, _, errs := kvreport(t, "", "merge", r0, r1, "-o", all); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	raw, err := os.ReadFile(all)
	if err != nil {
		t.Fatal(err)
	}
	var r schema.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if r.Format != schema.ResultFormat || r.Ranks != 2 || len(r.Cells) == 0 || !slices.Equal(r.MergedRanks, []int{0, 1}) {
		t.Errorf("merged document: format %q ranks %d %v cells %d", r.Format, r.Ranks, r.MergedRanks, len(r.Cells))
	}
	if code, _, errs := kvreport(t, "", all); code != 0 {
		t.Errorf("reading the merged document back: exit %d: %s", code, errs)
	}
	// The merged document holds ranks 0 and 1: merging rank 1 into it
	// again is refused.
	if code, _, errs := kvreport(t, "", "merge", all, r1, "-o", filepath.Join(dir, "again.json")); code != 2 || !strings.Contains(errs, "rank 1") {
		t.Errorf("merging rank 1 twice: exit %d: %s", code, errs)
	}
}

// TestStdinIsNotOverwritten: -o naming the file stdin is redirected from
// (kvreport - -o run.json < run.json) is refused, exit 2, and the file
// left as it was, for a report and for merge; another -o is written.
func TestStdinIsNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "run.json")
	want, err := os.ReadFile(docA)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-", "-o", doc}, {"merge", "--force", "-", "-o", doc}, {"-", "-o", filepath.Join(dir, "report.txt")}} {
		f, err := os.Open(doc)
		if err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := cli.Main("kvreport", args, &out, &errb, runWith(f))
		f.Close()
		refused := args[len(args)-1] == doc
		switch {
		case refused && (code != 2 || !strings.Contains(errb.String(), "is the document - (standard input): refusing to overwrite an input of the run")):
			t.Errorf("%q: exit %d, stderr %q: want 2, refused", args, code, errb.String())
		case !refused && code != 0:
			t.Errorf("%q: exit %d: %s", args, code, errb.String())
		}
		if got, err := os.ReadFile(doc); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: the document on stdin was changed (%v)", args, err)
		}
	}
}

// TestMergeRefusesReportOptions: kvreport merge refuses, with exit 2, the
// report's options, which it would ignore (its output is one JSON
// document), and takes --format json.
func TestMergeRefusesReportOptions(t *testing.T) {
	dir := t.TempDir()
	r0, r1 := rankOf(t, dir, docA, 0, 2), rankOf(t, dir, docB, 1, 2)
	for _, args := range [][]string{{"--format", "md"}, {"-f", "csv"}, {"--label", "x"}, {"--group-by", "file"},
		{"--metrics", "elapsed"}, {"--baseline", "a"}, {"--aggregate", "mlperf"}} {
		code, out, errs := kvreport(t, "", append(append([]string{"merge"}, args...), r0, r1)...)
		if code != 2 || out != "" || !strings.Contains(errs, "a report option, not merge's") {
			t.Errorf("merge %q: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errs)
		}
	}
	if code, out, errs := kvreport(t, "", "merge", "--format", "json", r0, r1); code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("merge --format json: exit %d: %s", code, errs)
	}
}

// TestMergeRefuses: merge refuses, with exit 2, documents that are not
// distinct ranks of one run, unless --force, which merges them with a
// warning in the merged document.
func TestMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	other := rankOf(t, dir, "../../report/testdata/u50_t1.json", 1, 2)
	for _, tt := range []struct {
		name string
		docs []string
		want string
	}{
		{"the same document twice", []string{docA, docA}, "are the same run (rank 0)"},
		{"two rank 0s", []string{docA, docB}, "both hold rank 0"},
		{"different traces", []string{docA, other}, "replayed different traces"},
		// Ranks of two runs of one trace: the audit's key/out.0.json with
		// a tp/out.1.json, and ranks of runs minutes apart.
		{"sharded differently", []string{shard3[0], edited(t, dir, shard3[1], "tp.json", func(d map[string]any) {
			d["replay"].(map[string]any)["shard"] = "tp"
		})}, "r0.json and " + filepath.Join(dir, "tp.json") + ": incompatible documents: they were sharded differently, --shard key and --shard tp"},
		{"runs minutes apart", []string{shard3[0], shard3[1], edited(t, dir, shard3[2], "later.json", func(d map[string]any) {
			d["started"] = "2026-11-26T21:09:54.78273587Z" // 4 minutes later
		})}, "r1.json and " + filepath.Join(dir, "later.json") + ": incompatible documents: they are of different runs"},
		// Ranks paced apart: the merged document states one --speed
		// (under --force the largest, with the warning that says why).
		{"paced differently", []string{
			edited(t, dir, shard3[0], "s1.json", func(d map[string]any) { d["replay"].(map[string]any)["speed"] = 1.0 }),
			edited(t, dir, shard3[1], "s1b.json", func(d map[string]any) { d["replay"].(map[string]any)["speed"] = 1.0 }),
			edited(t, dir, shard3[2], "s4.json", func(d map[string]any) { d["replay"].(map[string]any)["speed"] = 4.0 }),
		}, "s1.json and " + filepath.Join(dir, "s4.json") + ": incompatible documents: they were replayed differently, --speed 1 and --speed 4"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "m.json")
			os.Remove(out)
			code, _, errs := kvreport(t, "", append([]string{"merge", "-o", out}, tt.docs...)...)
			if code != 2 || !strings.Contains(errs, tt.want) || !strings.Contains(errs, "--force") {
				t.Errorf("exit %d, stderr %q: want 2 and %q", code, errs, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused merge wrote its output")
			}
			code, _, errs = kvreport(t, "", append([]string{"merge", "--force", "-o", out}, tt.docs...)...)
			if code != 0 || !strings.Contains(errs, "warning") {
				t.Fatalf("--force: exit %d, stderr %q", code, errs)
			}
			raw, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var r schema.Result
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "MERGED ANYWAY") }) {
				t.Errorf("--force: the merged document does not say so: %q", r.Warnings)
			}
		})
	}
}

// TestCompareDifferentTraces: comparing groups that replayed different
// traces warns in every format; two ranks of one trial that replayed
// different traces are refused unless --force.
func TestCompareDifferentTraces(t *testing.T) {
	u50 := "../../report/testdata/u50_t1.json"
	for _, f := range []string{"text", "md", "csv", "json", "bench", "html"} {
		code, out, errs := kvreport(t, "", "--format", f, docA, u50)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errs)
		}
		if !strings.Contains(out, "DIFFERENT TRACES") {
			t.Errorf("%s: no DIFFERENT TRACES warning:\n%.2000s", f, out)
		}
	}
	dir := t.TempDir()
	other := rankOf(t, dir, u50, 1, 2)
	if code, _, errs := kvreport(t, "", "--label", "one", docA, other); code != 2 || !strings.Contains(errs, "replayed different traces") {
		t.Errorf("ranks of different traces in one trial: exit %d: %s", code, errs)
	}
	code, out, errs := kvreport(t, "", "--label", "one", "--force", docA, other)
	if code != 0 || !strings.Contains(out, "MERGED ANYWAY") {
		t.Errorf("--force: exit %d: %s\n%s", code, errs, out)
	}
}

// TestMergeMissingRanks: merge refuses, with exit 2 and a message naming
// them, a run's documents that lack some of its ranks, even one document;
// --force merges them into a document that says so and is not complete,
// which merged with the missing rank is whole; kvreport on one rank's
// document alone shows it, never as a complete run.
func TestMergeMissingRanks(t *testing.T) {
	dir := t.TempDir()
	r0, r1 := rankOf(t, dir, docA, 0, 2), rankOf(t, dir, docB, 1, 2)
	part := filepath.Join(dir, "part.json")
	code, _, errs := kvreport(t, "", "merge", "-o", part, r0)
	if code != 2 || !strings.Contains(errs, "has 2 ranks and only rank 0 was given: missing rank 1 (pass --force") || strings.Count(errs, "\n") != 1 {
		t.Errorf("one rank of two: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(part); err == nil {
		t.Error("a refused merge wrote its output")
	}
	code, _, errs = kvreport(t, "", "merge", "--force", "-o", part, r0)
	if code != 0 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "missing rank 1") {
		t.Fatalf("--force: exit %d, stderr %q", code, errs)
	}
	read := func(path string) schema.Result {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var r schema.Result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	p := read(part)
	if p.Complete || p.Ranks != 2 || p.Summary.StorageHealth.OverallStatus == "PASS" ||
		!strings.Contains(p.IncompleteReason, "missing rank 1") ||
		!slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "missing rank 1") }) {
		t.Errorf("--force: complete %v ranks %d health %q reason %q warnings %q", p.Complete, p.Ranks,
			p.Summary.StorageHealth.OverallStatus, p.IncompleteReason, p.Warnings)
	}
	all := filepath.Join(dir, "all.json")
	if code, _, errs := kvreport(t, "", "merge", "-o", all, part, r1); code != 0 {
		t.Fatalf("the partial merge and rank 1: exit %d: %s", code, errs)
	}
	if a := read(all); !a.Complete || a.Ranks != 2 || slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.Contains(w, "missing") }) {
		t.Errorf("the partial merge and rank 1: complete %v ranks %d warnings %q", a.Complete, a.Ranks, a.Warnings)
	}
	for _, doc := range []string{r0, part} {
		code, out, errs := kvreport(t, "", doc)
		if code != 0 || !strings.Contains(out, "PARTIAL RUN: 1 of 2 ranks (missing rank 1)") || strings.Contains(out, "PASS") {
			t.Errorf("kvreport %s: exit %d, stderr %q:\n%s", filepath.Base(doc), code, errs, out)
		}
	}
}

// TestHelpArgs: kvreport help [merge] is the command's --help; help of
// anything else is bad usage (exit 2).
func TestHelpArgs(t *testing.T) {
	for _, c := range []struct {
		args, want []string
		usage      bool
	}{
		{[]string{"help"}, []string{"--help"}, false},
		{[]string{"help", "merge"}, []string{"merge", "--help"}, false},
		{[]string{"help", "merge", "x"}, nil, true},
		{[]string{"help", "report"}, nil, true},
		{[]string{"merge", "help"}, []string{"merge", "help"}, false},
		{[]string{"a.json", "help"}, []string{"a.json", "help"}, false},
		{nil, nil, false},
	} {
		got, err := helpArgs(c.args)
		if _, ok := errors.AsType[*cli.UsageError](err); ok != c.usage || (err != nil && !ok) {
			t.Errorf("helpArgs(%q): error %v, want a usage error: %v", c.args, err, c.usage)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("helpArgs(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestParseFlags: merge is a command of its own, whose operands and
// options the config holds as a report's are.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want config
	}{
		{[]string{"a.json", "b.json"}, config{paths: []string{"a.json", "b.json"}, format: "text", output: "-"}},
		{[]string{"merge", "--force", "-o", "m.json", "a.json"},
			config{merge: true, paths: []string{"a.json"}, format: "text", output: "m.json", force: true}},
		{[]string{"--format", "md", "--baseline", "x", "--label", "y", "--group-by", "system,config", "--metrics", "m1",
			"--aggregate", "mlperf", "--allow-system-path", "-"},
			config{paths: []string{"-"}, format: "md", baseline: "x", label: "y", groupBy: []string{"system", "config"},
				metrics: []string{"m1"}, output: "-", allowSystem: true, aggregate: "mlperf"}},
	} {
		got, err := parseFlags(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if !reflect.DeepEqual(*got, c.want) {
			t.Errorf("%q:\n %+v, want\n %+v", c.args, *got, c.want)
		}
	}
}

// TestReadStdin: stdin is read whole only when "-" is given, and an empty
// one (blank included) is errNoStdin, which fails the pipeline (exit 1).
func TestReadStdin(t *testing.T) {
	in := strings.NewReader("{}")
	if r, err := readStdin([]string{"a.json"}, in); err != nil || r != io.Reader(in) {
		t.Errorf("without -: %v, %v; want stdin untouched", r, err)
	}
	for _, blank := range []string{"", " \n\t\n"} {
		if _, err := readStdin([]string{"a.json", "-"}, strings.NewReader(blank)); !errors.Is(err, errNoStdin) {
			t.Errorf("stdin %q: %v, want errNoStdin", blank, err)
		}
	}
	r, err := readStdin([]string{"-"}, iotest.OneByteReader(strings.NewReader(`{"a":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r); string(b) != `{"a":1}` {
		t.Errorf("read %q", b)
	}
	if _, err := readStdin([]string{"-"}, iotest.ErrReader(os.ErrClosed)); err == nil || errors.Is(err, errNoStdin) ||
		!strings.HasPrefix(err.Error(), "stdin: ") {
		t.Errorf("a failed read: %v, want it named", err)
	}
}
