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
	"github.com/kvbench/kvbench/trace"
)

func runKvtrace(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main("kvtrace", args, &out, &errb, run)
	return out.String(), errb.String(), code
}

// TestInspectJSONMatchesReference checks `kvtrace inspect --json` against
// the reference's own row composition table (docs/reference.md section 8).
func TestInspectJSONMatchesReference(t *testing.T) {
	want := map[string]struct {
		rows, outOfOrder int64
		cells            map[string]int64
	}{
		"llama8b_u10_d30_gpu0_cpu4_s42.csv": {594, 0, map[string]int64{
			"Write/Tier-1/Prefill": 56, "Write/Tier-2/Evict": 53, "Read/Tier-1/Decode": 356,
			"Read/Tier-1/Evict": 53, "Read/Tier-2/Decode": 76}},
		"llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst": {33134, 33, map[string]int64{
			"Write/Tier-0/Prefill": 2353, "Write/Tier-1/Prefill": 61, "Write/Tier-1/Evict": 2345,
			"Write/Tier-2/Prefill": 2, "Write/Tier-2/Evict": 2401, "Read/Tier-0/Decode": 12911,
			"Read/Tier-0/Evict": 2345, "Read/Tier-1/Decode": 44, "Read/Tier-1/Evict": 2401,
			"Read/Tier-2/Decode": 8271}},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runKvtrace(t, "inspect", "--json", filepath.Join("..", "..", "testdata", "reference", name))
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			var s trace.Summary
			if err := json.Unmarshal([]byte(stdout), &s); err != nil {
				t.Fatal(err)
			}
			if s.Rows != w.rows || s.OutOfOrder != w.outOfOrder {
				t.Errorf("rows %d out of order %d, want %d and %d", s.Rows, s.OutOfOrder, w.rows, w.outOfOrder)
			}
			got := map[string]int64{}
			for _, c := range s.ByOpTierPhase {
				got[c.Op+"/"+c.Tier+"/"+c.Phase] = c.Rows
			}
			if len(got) != len(w.cells) {
				t.Errorf("cells %v, want %v", got, w.cells)
			}
			for k, n := range w.cells {
				if got[k] != n {
					t.Errorf("%s: %d rows, want %d", k, got[k], n)
				}
			}
		})
	}
}

func TestInspectShowsSidecar(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := trace.WriteMeta(path, &trace.Meta{FormatVersion: 1, Dialect: "mlperf", Tool: "kv-cache.py", Seed: 42, Model: "llama3.1-8b"}); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runKvtrace(t, "inspect", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, s := range []string{"rows 594", "sidecar: kv-cache.py", "model llama3.1-8b", "Tier-1->Tier-2  53"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
}

// TestInspectShortOfSidecar: a trace with fewer (or more) rows than its
// sidecar counts is said to be so, on stdout and stderr, not summarised as
// if it were the trace the sidecar describes; one that agrees is not.
func TestInspectShortOfSidecar(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	for _, tc := range []struct {
		name  string
		rows  int64 // the sidecar's count; the file holds 594
		wants string
	}{
		{"short", 1000, "INCOMPLETE: 594 of 1000 rows: the trace ended before its sidecar's count"},
		{"long", 500, "INCOMPLETE: 594 rows, 94 more than its sidecar's count of 500"},
		{"whole", 594, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".csv")
			if err := os.WriteFile(path, []byte(strings.Join(lines[:595], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := trace.WriteMeta(path, &trace.Meta{FormatVersion: 1, Dialect: "mlperf", Tool: "kvtrace", Counts: trace.MetaCounts{Rows: tc.rows}}); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := runKvtrace(t, "inspect", path)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if tc.wants == "" {
				if strings.Contains(stdout, "INCOMPLETE") || stderr != "" {
					t.Errorf("a whole trace reported: %q, %q", stdout, stderr)
				}
				return
			}
			warn := "kvtrace: warning: " + path + ": " + strings.TrimPrefix(tc.wants, "INCOMPLETE: ")
			if !strings.Contains(stdout, tc.wants) || !strings.Contains(stderr, warn) {
				t.Errorf("stdout lacks %q or stderr %q lacks %q:\n%s", tc.wants, stderr, warn, stdout)
			}
		})
	}
}

func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n1.0,Read,12a,Tier-1,k,Decode\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"invalid simulation", []string{"--num-users", "0"}, 2, "kvtrace: --num-users 0: must be between 1 and 100000\n"},
		{"unknown flag", []string{"--bogus"}, 2, "unknown flag: --bogus"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"no files", []string{"inspect"}, 2, "no trace given"},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope.csv")}, 2, "no such file"},
		{"bad trace", []string{"inspect", bad}, 2, `bad.csv:2: column 3 (Object_Size_Bytes): "12a": not a valid number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runKvtrace(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d stderr %q, want %d and %q", code, stderr, tt.code, tt.stderr)
			}
			if code == 2 && strings.Count(stderr, "\n") != 1 {
				t.Errorf("want a one-line error, got %q", stderr)
			}
		})
	}
}

// TestHelp: --help, -h and kvtrace help [COMMAND] print the command's help
// on stdout, nothing on stderr, exit 0, and show each default once.
func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--help"}, "kvtrace: simulate"},
		{[]string{"-h"}, "kvtrace: simulate"},
		{[]string{"help"}, "kvtrace: simulate"},
		{[]string{"--num-users", "0", "--help"}, "kvtrace: simulate"},
		{[]string{"inspect", "--help"}, "kvtrace inspect:"},
		{[]string{"help", "inspect"}, "kvtrace inspect:"},
		{[]string{"models", "-h"}, "kvtrace models:"},
		{[]string{"help", "models"}, "kvtrace models:"},
		{[]string{"export", "--help"}, "kvtrace export:"},
		{[]string{"help", "export"}, "kvtrace export:"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runKvtrace(t, tt.args...)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, tt.want) ||
				!strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "Options:") {
				t.Fatalf("exit %d, stderr %q, stdout %.200q", code, stderr, stdout)
			}
			clitest.CheckDefaultsOnce(t, stdout)
		})
	}
	if _, stderr, code := runKvtrace(t, "help", "nope"); code != 2 || !strings.Contains(stderr, "help nope: no such command") {
		t.Errorf("help nope: exit %d, stderr %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	stdout, _, code := runKvtrace(t, "--version")
	if code != 0 || !strings.HasPrefix(stdout, "kvtrace ") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

// runMain runs kvtrace as main does, with the given streams.
func runMain(args []string, stdout, stderr *bytes.Buffer) int {
	return cli.Main("kvtrace", args, stdout, stderr, run)
}
