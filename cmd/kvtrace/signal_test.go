package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalsStopSimulation sends SIGINT and SIGTERM to a real kvtrace
// process in the middle of a long simulation: it stops within a second,
// exits non-zero and leaves no trace file, finished or temporary.
func TestSignalsStopSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain on PATH to build kvtrace")
	}
	bin := filepath.Join(t.TempDir(), "kvtrace")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			// 2,000 users for 24 h of virtual time: minutes of work.
			cmd := exec.Command(bin, "--num-users", "2000", "--duration", "86400", "--generation-mode", "none",
				"--gpu-mem-gb", "0", "--cpu-mem-gb", "4", "-o", filepath.Join(dir, "long.csv.zst"))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if took := time.Since(sent); took > time.Second {
					t.Errorf("stopped %v after %v, want within a second", took, sig)
				}
				if err == nil {
					t.Errorf("exit status 0 after %v; want non-zero", sig)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 10 s after %v", sig)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("left %d files behind: %v", len(left), left[0].Name())
			}
		})
	}
	// A request trace on a named pipe with no writer waits in open:
	// under the signal context, which ^C ends.
	t.Run("request trace FIFO without a writer", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "requests.jsonl")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		cmd := exec.Command(bin, "--request-trace", fifo, "--request-trace-format", "mooncake", "-o", filepath.Join(dir, "t.csv"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // a wait for the process to reach open: a stop at any point passes
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("exit status 0 after SIGINT; want non-zero")
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("still waiting for the FIFO's writer 5 s after SIGINT: %s", stderr.String())
		}
	})
}
