package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
)

// stopAt is a context cancelled at its at-th check (Err), which counts
// every check.
type stopAt struct {
	context.Context
	cancel context.CancelFunc
	at     int64
	n      atomic.Int64
}

func newStopAt(at int64) *stopAt {
	ctx, cancel := context.WithCancel(context.Background())
	return &stopAt{Context: ctx, cancel: cancel, at: at}
}

func (c *stopAt) Err() error {
	if c.n.Add(1) == c.at {
		c.cancel()
	}
	return c.Context.Err()
}

// TestCancelLeavesNoOutput: kvreport --aggregate mlperf -o FILE
// cancelled at any point, while it reads the ranks, aggregates them,
// renders or before the file is renamed into place, stops with
// context.Canceled (exit status 1) and leaves nothing at -o, not even
// its temporary file: the rendering did not look at the context, and a
// signal during it left a whole report and exit status 0.
func TestCancelLeavesNoOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kvbench_mlperf_20261126_210554")
	for r, src := range shard3 {
		rd := filepath.Join(dir, "option_1", "trial_0", fmt.Sprintf("rank_%d", r))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		edited(t, rd, src, "kvbench_result.json", func(map[string]any) {})
	}
	for _, format := range []string{"text", "json"} {
		outDir := t.TempDir()
		out := filepath.Join(outDir, "summary."+format)
		args := []string{"--aggregate", "mlperf", "--format", format, "-o", out, dir}
		full := newStopAt(-1)
		var stdout, stderr bytes.Buffer
		if err := run(full, args, nil, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		checks := full.n.Load()
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
		// Checks as it reads, aggregates and renders; the last ones
		// those of the rendering's writes and the one before the
		// rename.
		for _, at := range []int64{1, checks / 4, checks / 2, 3 * checks / 4, checks - 2, checks - 1, checks} {
			ctx := newStopAt(at)
			err := run(ctx, args, nil, &stdout, &stderr)
			if !errors.Is(err, context.Canceled) || cli.ExitCode(err) != cli.ExitFailure {
				t.Errorf("%s: cancelled at check %d of %d: %v (exit %d), want context.Canceled, exit 1", format, at, checks, err, cli.ExitCode(err))
			}
			if left, _ := os.ReadDir(outDir); len(left) > 0 {
				t.Fatalf("%s: cancelled at check %d of %d: left %s behind", format, at, checks, left[0].Name())
			}
		}
	}
}

// TestSignalStopsRead sends SIGTERM to a real kvreport whose input is a
// named pipe whose writer writes nothing yet (a result still to come
// down a pipe): read as a rank's result (--aggregate mlperf) or after a
// search document, it waited (in open(2) without a writer, in read(2)
// with one), deaf to the signal it had caught, forever; now the wait is
// under the signal context, and it exits 1 at once, naming the signal.
// After a result, it did already.
func TestSignalStopsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build kvreport")
	}
	bin := filepath.Join(t.TempDir(), "kvreport")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	aggregate := func(path string) func(dir string) []string {
		return func(dir string) []string {
			return []string{"--aggregate", "mlperf", "--format", "json", filepath.Join(dir, path)}
		}
	}
	after := func(doc string) func(dir string) []string {
		return func(dir string) []string { return []string{doc, filepath.Join(dir, "b.json")} }
	}
	for _, tc := range []struct {
		name string
		fifo string                    // relative to the test's directory
		args func(dir string) []string // kvreport's arguments but -o
	}{
		{"a rank result named", "r0.json", aggregate("r0.json")},
		{"a rank result in the run's directory", "run/option_1/trial_0/rank_0/kvbench_result.json", aggregate("run")},
		{"a search after another", "b.json", after("../../report/testdata/search_capacity_v1.json")},
		{"a result after another", "b.json", after("../../report/testdata/u10_t1.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, tc.fifo)
			if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			out := filepath.Join(t.TempDir(), "summary.json")
			cmd := exec.Command(bin, append([]string{"-o", out}, tc.args(dir)...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Once kvreport opened the pipe (its signal handler is in place
			// by then), a writer opens it too, and writes nothing: kvreport
			// waits for the document to come.
			var w int
			for deadline := time.Now().Add(5 * time.Second); ; {
				fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK, 0)
				if err == nil {
					w = fd
					break
				}
				if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("kvreport did not open %s: %v: %s", fifo, err, stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			defer syscall.Close(w)
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "terminated") {
					t.Errorf("after SIGTERM: %v, stderr %q; want exit status 1 naming the signal", err, stderr.String())
				}
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still waiting for the FIFO's writer 5 s after SIGTERM: %s", stderr.String())
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("-o %s: %v; want nothing there", out, err)
			}
		})
	}
}
