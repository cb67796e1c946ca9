package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// copyDoc copies the document at from into dir.
func copyDoc(t *testing.T, from, dir string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(from))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOutputNeverAnInput: -o that is one of the documents read (or a link
// to one) is refused with exit 2, the document unchanged; so is a system
// path, unless --allow-system-path.
func TestOutputNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	a, b := copyDoc(t, docA, dir), copyDoc(t, docB, dir)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(a)
	for _, args := range [][]string{
		{a, "-o", a},
		{a, b, "-o", link},
		{filepath.Join(dir, "*.json"), "-o", b},
		{"merge", a, b, "-o", a},
		{"--format", "html", a, "-o", a},
	} {
		code, _, stderr := kvreport(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
			t.Errorf("kvreport %s: exit %d, %q; want 2 and a refusal", strings.Join(args, " "), code, stderr)
		}
	}
	if after, _ := os.ReadFile(a); !bytes.Equal(after, before) {
		t.Error("a document changed")
	}
	out := "/etc/kvbench-test-" + filepath.Base(dir) + ".json"
	if code, _, stderr := kvreport(t, "", a, "-o", out); code != 2 || !strings.Contains(stderr, "system directory /etc") {
		t.Errorf("-o %s: exit %d, %q; want 2", out, code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		os.Remove(out)
		t.Error("written under /etc")
	}
}

// TestOutputSpecialFiles: /dev/null and a FIFO are written in place.
func TestOutputSpecialFiles(t *testing.T) {
	if code, _, stderr := kvreport(t, "", docA, "-o", "/dev/null"); code != 0 {
		t.Fatalf("-o /dev/null: exit %d, %q", code, stderr)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v", fi.Mode())
	}
	fifo, got := clitest.FIFO(t)
	if code, _, stderr := kvreport(t, "", docA, "--format", "md", "-o", fifo); code != 0 {
		t.Fatalf("-o FIFO: exit %d, %q", code, stderr)
	}
	if s := string(<-got); !strings.Contains(s, "|") {
		t.Fatalf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v", fi.Mode())
	}
}

// TestPipeInput: a result named by a path that is a pipe (a FIFO, or a
// shell's <(command)) is read once and reported (it was looked into first
// for a search or run summary document, which took its bytes: "empty
// input", exit 2), and a FIFO with no writer stops with the run's context
// (^C), not in open(2).
func TestPipeInput(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "result.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docA)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{fifo}, {"--format", "csv", fifo}, {"merge", fifo}} {
		written := make(chan error, 1)
		go func() { written <- os.WriteFile(fifo, doc, 0o644) }()
		code, out, errs := kvreport(t, "", args...)
		// Release the writer if kvreport never read the pipe.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		if err := <-written; err != nil {
			t.Errorf("kvreport %v did not read the pipe: %v", args, err)
		}
		if code != 0 || out == "" {
			t.Errorf("kvreport %v: exit %d, stdout %d bytes, stderr %q", args, code, len(out), errs)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err = run(ctx, []string{fifo}, strings.NewReader(""), &out, &errb)
	if !errors.Is(err, context.Canceled) || cli.ExitCode(err) == cli.ExitUsage {
		t.Errorf("kvreport FIFO (no writer) with its context done: %v (exit %d), want context.Canceled, not a usage error", err, cli.ExitCode(err))
	}
}

// TestOutputNotInRankDir: -o FILE.json in a rank_<N> directory is
// refused (exit 2) in every mode, the directory unchanged: the MLPerf
// aggregation reads each .json there as the rank's result, so a report
// or summary written beside a rank's result made the next aggregation of
// the run fail ("2 result files"), or read it as the rank. A file
// elsewhere in the run, or not .json, is written.
func TestOutputNotInRankDir(t *testing.T) {
	dir := writeRefRun(t, 1, 2)
	rank := filepath.Join(dir, "option_1", "trial_0", "rank_1")
	for _, args := range [][]string{
		{"--aggregate", "mlperf", "--format", "json", "-o", filepath.Join(rank, "summary.json"), dir},
		{"--aggregate", "mlperf", "--format", "text", "-o", filepath.Join(rank, "report.json"), dir},
		{"merge", docA, "-o", filepath.Join(rank, "merged.json")},
	} {
		code, _, errs := kvreport(t, "", args...)
		if code != 2 || !strings.Contains(errs, "rank_1 directory") {
			t.Errorf("%v: exit %d, stderr %q: want 2, naming the rank directory", args, code, errs)
		}
	}
	// The same directory through a link, and from inside it.
	link := filepath.Join(t.TempDir(), "r")
	if err := os.Symlink(rank, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(rank)
	for _, out := range []string{filepath.Join(link, "summary.json"), "summary.json"} {
		code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", "-o", out, dir)
		if code != 2 || !strings.Contains(errs, "rank_1 directory") {
			t.Errorf("-o %s: exit %d, stderr %q: want 2, naming the rank directory", out, code, errs)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(rank, "*")); len(files) != 1 {
		t.Errorf("rank_1 holds %q, want its result alone", files)
	}
	for _, out := range []string{filepath.Join(dir, "summary.json"), filepath.Join(rank, "report.md")} {
		if code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "-o", out, dir); code != 0 {
			t.Errorf("-o %s: exit %d %s", out, code, errs)
		}
	}
}
