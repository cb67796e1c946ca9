package cli_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// dirEntries returns the names in dir.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestAtomicFileClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	w, err := cli.CreateOutput(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "partial"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("final path visible before Close: %v", err)
	}
	if names := dirEntries(t, dir); len(names) != 1 || !strings.HasPrefix(names[0], ".out.json.tmp") {
		t.Fatalf("directory holds %v, want one hidden temporary file", names)
	}
	if _, err := io.WriteString(w, " done"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "partial done" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "out.json" {
		t.Fatalf("directory holds %v after Close, want only out.json", names)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644", fi.Mode(), err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.(interface{ Abort() error }).Abort(); err != nil {
		t.Fatalf("Abort after Close: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Abort after Close removed the file: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

func TestAtomicFileReplacesKeepingMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := cli.CreateFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("before Close the path holds %q, want the old file", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after Close: %q mode %v, want new with 0600", got, fi.Mode().Perm())
	}
}

func TestAtomicFileAbort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	a, err := cli.CreateFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != path {
		t.Fatalf("Name() = %q", a.Name())
	}
	if _, err := a.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := a.Abort(); err != nil {
		t.Fatal(err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Fatalf("Abort left %v", names)
	}
	if err := a.Close(); err == nil {
		t.Fatal("Close after Abort succeeded")
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Fatalf("Close after Abort left %v", names)
	}
}

func TestAtomicFileAbortKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := cli.CreateFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = a.Write([]byte("new"))
	if err := a.Abort(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("Abort changed the old file to %q", got)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := cli.WriteFile(context.Background(), path, func(w io.Writer) error {
		_, err := io.WriteString(w, "{}\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{}\n" {
		t.Fatalf("file holds %q", got)
	}

	boom := errors.New("boom")
	failed := filepath.Join(dir, "failed.json")
	err := cli.WriteFile(context.Background(), failed, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if names := dirEntries(t, dir); len(names) != 1 || names[0] != "r.json" {
		t.Fatalf("failed write left %v", names)
	}
}

func TestCreateOutputErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, msg string
	}{
		{"", "output: empty file name"},
		{filepath.Join(dir, "missing", "out.json"), "create " + filepath.Join(dir, "missing", "out.json") + ": no such file or directory"},
		{dir, "create " + dir + ": is a directory"},
	}
	for _, tt := range tests {
		w, err := cli.CreateOutput(context.Background(), tt.name)
		if err == nil {
			w.Close()
			t.Fatalf("CreateOutput(%q) succeeded", tt.name)
		}
		if !strings.HasPrefix(err.Error(), tt.msg) {
			t.Errorf("CreateOutput(%q) error %q, want %q", tt.name, err, tt.msg)
		}
		if cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("CreateOutput(%q) error is not a usage error", tt.name)
		}
	}
}

func TestStdio(t *testing.T) {
	r, err := cli.OpenInput(context.Background(), "-")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stdin.Stat(); err != nil {
		t.Fatalf("closing input - closed stdin: %v", err)
	}
	w, err := cli.CreateOutput(context.Background(), "-")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.(interface{ Abort() error }).Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stdout.Stat(); err != nil {
		t.Fatalf("closing output - closed stdout: %v", err)
	}
}

func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := cli.OpenInput(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if err := r.Close(); err != nil || string(b) != "x" {
		t.Fatalf("read %q, close %v", b, err)
	}
	for _, name := range []string{"", filepath.Join(dir, "missing.csv")} {
		_, err := cli.OpenInput(context.Background(), name)
		if err == nil || cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("OpenInput(%q) = %v, want a usage error", name, err)
		}
	}
	_, err = cli.OpenInput(context.Background(), filepath.Join(dir, "missing.csv"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenInput error %v does not unwrap to fs.ErrNotExist", err)
	}
	// A named pipe with no writer: the open waits for ctx, not in open(2)
	// (kvtrace export FIFO ignored ^C there).
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cli.OpenInput(ctx, fifo)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("OpenInput(a FIFO with no writer) after cancel = %v, want context.Canceled", err)
	}
}

func TestIsTerminal(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if cli.IsTerminal(devnull) || cli.IsTerminal(new(strings.Builder)) {
		t.Error("/dev/null or a buffer taken for a terminal")
	}
	if !cli.IsTerminal(clitest.Terminal(t)) {
		t.Error("a pseudo-terminal not taken for a terminal")
	}
}

func TestWriteOutput(t *testing.T) {
	var out strings.Builder
	if err := cli.WriteOutput(context.Background(), "-o", "-", &out, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil || out.String() != "x" {
		t.Fatalf("-: %v, stdout %q", err, out.String())
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := cli.WriteOutput(context.Background(), "-o", p, &out, func(w io.Writer) error { _, err := io.WriteString(w, "y"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "y" || out.String() != "x" {
		t.Fatalf("file %q, stdout %q", b, out.String())
	}
}

// TestWriteOutputNamesFlag: an output that cannot be created, or whose
// writing fails, names the flag and the path; the first is the user's
// error (exit 2). kvreport's -o into a missing directory said only
// "create nodir/x.json: no such file or directory".
func TestWriteOutputNamesFlag(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nodir", "x.json")
	err := cli.WriteOutput(context.Background(), "-o", missing, io.Discard, func(io.Writer) error { return nil })
	if want := "-o " + missing + ": no such file or directory"; err == nil || err.Error() != want || cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("missing directory: %v (exit %d); want %q, exit 2", err, cli.ExitCode(err), want)
	}
	p := filepath.Join(t.TempDir(), "f")
	boom := errors.New("boom")
	err = cli.WriteOutput(context.Background(), "--output", p, io.Discard, func(io.Writer) error { return boom })
	if want := "--output " + p + ": boom"; !errors.Is(err, boom) || err.Error() != want {
		t.Errorf("failed write: %v; want %q", err, want)
	}
	if _, serr := os.Stat(p); !os.IsNotExist(serr) {
		t.Errorf("a failed write left %s: %v", p, serr)
	}
}
