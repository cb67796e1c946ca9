package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for _, want := range []string{"## comparison", "tier2_read_bw", "| storage_health_pass |"} {
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
	if n := strings.Count(out, "/tier1_read_bw 1 "); n != 2 {
		t.Errorf("want 2 trials' tier1_read_bw lines, got %d:\n%s", n, out)
	}
}

// TestMerge writes a merged document that kvreport reads back.
func TestMerge(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.json")
	if code, _, errs := kvreport(t, "", "merge", docA, docB, "-o", all); code != 0 {
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
	if r.Format != schema.ResultFormat || r.Ranks != 2 || len(r.Cells) == 0 {
		t.Errorf("merged document: format %q ranks %d cells %d", r.Format, r.Ranks, len(r.Cells))
	}
	if code, _, errs := kvreport(t, "", all); code != 0 {
		t.Errorf("reading the merged document back: exit %d: %s", code, errs)
	}
}
