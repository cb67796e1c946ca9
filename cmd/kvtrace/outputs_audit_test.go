package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/trace"
)

// TestSidecarFailsBeforeTheTrace: a sidecar that cannot be created (a
// link at its path into a missing directory) fails the run before the
// simulation, the trace at -o as it was. It failed after it, the old
// trace replaced by the new one (exit 1).
func TestSidecarFailsBeforeTheTrace(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(tr, []byte("an earlier trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nodir", "x.json"), tr+trace.MetaSuffix); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKvtrace(t, append([]string{"-o", tr}, small...)...)
	if code != 2 {
		t.Errorf("exit %d, %q; want 2, before the simulation", code, stderr)
	}
	if b, _ := os.ReadFile(tr); string(b) != "an earlier trace\n" {
		t.Errorf("a failed run replaced the trace: it begins %q", b[:min(len(b), 40)])
	}
}

// TestExportOutputsShareNoFile: two files of one export that are one file
// (the job file a link to an iolog's name) are refused, as kvtrace refuses
// --io-trace-log and --output that share one; the export wrote the job
// file, then the iolog over it, and exited 0 without the job.
func TestExportOutputsShareNoFile(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	if _, stderr, code := runKvtrace(t, append([]string{"-o", tr, "--cpu-mem-gb", "0"}, small...)...); code != 0 {
		t.Fatalf("kvtrace: exit %d, %q", code, stderr)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("t.tier2.iolog", filepath.Join(out, "t.fio")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--dir", dir, "--no-space-check", "-o", out, tr)
	if code != 2 || !strings.Contains(stderr, "cannot share a file") {
		t.Errorf("exit %d, %q; want 2 and a refusal", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "t.tier2.iolog")); err == nil {
		t.Error("written through the link")
	}
}

// TestExportStdinNotAnOutput: a trace on stdin that is the file an output
// of the export would replace (out/stdin.tsv) is refused, as kvtrace and
// kvreplay refuse an output that is the file stdin reads; export replaced
// it and exited 0.
func TestExportStdinNotAnOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := filepath.Join(out, "stdin.tsv")
	if _, stderr, code := runKvtrace(t, append([]string{"-o", tr, "--cpu-mem-gb", "0"}, small...)...); code != 0 {
		t.Fatalf("kvtrace: exit %d, %q", code, stderr)
	}
	before := sum(t, tr)
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	t.Cleanup(func() { os.Stdin = old; f.Close() })
	_, stderr, code := runKvtrace(t, "export", "--to", "sai3", "-o", out, "-")
	if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
		t.Errorf("exit %d, %q; want 2 and a refusal", code, stderr)
	}
	if sum(t, tr) != before {
		t.Error("the trace on stdin was replaced")
	}
}

// TestStdoutNotAnotherOutput: --output - while standard output is the
// trace at -o (kvtrace -o t.csv --output - >> t.csv) is refused, as two
// outputs at one path are; the trace was renamed over the file the
// statistics went into, and the run exited 0 with one of them lost.
func TestStdoutNotAnotherOutput(t *testing.T) {
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte("an earlier trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(tr, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	t.Cleanup(func() { os.Stdout = old; f.Close() })
	_, stderr, code := runKvtrace(t, append([]string{"-o", tr, "--output", "-"}, small...)...)
	if code != 2 || !strings.Contains(stderr, "is --output - (standard output): two outputs cannot share a file") {
		t.Errorf("exit %d, %q; want 2 and a refusal", code, stderr)
	}
	if b, _ := os.ReadFile(tr); string(b) != "an earlier trace\n" {
		t.Errorf("a refused run replaced the trace: it begins %q", b[:min(len(b), 40)])
	}
}
