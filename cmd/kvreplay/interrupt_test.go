package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestSIGTERMDuringPrewrite stops a real kvreplay with SIGTERM while it
// writes a new extent file of several GiB once before the replay: it stops
// within a second or two (not after the whole prewrite), exits 1 naming the
// signal, and leaves nothing: neither the file nor its run directory in
// --dir, nor a --device file it created itself. A second SIGTERM right
// after the first (kill twice) does not cut that cleanup short.
func TestSIGTERMDuringPrewrite(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	for _, tc := range []struct {
		where   string
		signals int
	}{{"dir", 1}, {"device", 1}, {"dir", 2}} {
		where := tc.where
		t.Run(fmt.Sprintf("%s-%d", where, tc.signals), func(t *testing.T) {
			dir := t.TempDir()
			if free := cli.FreeBytes(dir); free < 8<<30 {
				t.Skipf("%s has %d bytes free: the extent file needs 4.6 GiB", dir, free)
			}
			// One object of 512 MiB: an extent file of 4.6 GiB, prewritten.
			tr := writeTrace(t, dir, "big.csv",
				"0.000000,Write,536870912,Tier-2,a,Prefill",
				"60.000000,Read,536870912,Tier-2,a,Decode")
			nv := filepath.Join(dir, "nvme")
			if err := os.Mkdir(nv, 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"--layout", "extent", "--mkdir", "--dir", nv, "-o", filepath.Join(dir, "r.json"), tr}
			if where == "device" {
				args = append(args, "--device", filepath.Join(nv, "my.extent"))
			}
			cmd := exec.Command(kvreplay, args...)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			writing := make(chan struct{})
			var said strings.Builder
			copied := make(chan struct{})
			go func() {
				defer close(copied)
				sc := bufio.NewScanner(stderr)
				for sc.Scan() {
					said.WriteString(sc.Text() + "\n")
					if strings.Contains(sc.Text(), "once before the replay") {
						close(writing)
					}
				}
				io.Copy(io.Discard, stderr)
			}()
			select {
			case <-writing:
			case <-copied:
				cmd.Wait()
				t.Fatalf("kvreplay ended before its prewrite:\n%s", said.String())
			}
			signalled := time.Now()
			for range tc.signals {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			<-copied
			err = cmd.Wait()
			took := time.Since(signalled)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(said.String(), "terminated") {
				t.Errorf("exit %v, want status 1 naming the signal; stderr:\n%s", err, said.String())
			}
			// It stops within the chunks in flight: the prewrite says where
			// it stopped, short of the file's end. Only a hang is judged by
			// the clock (a loaded disk can take seconds for 16 MiB).
			if !prewriteCut.MatchString(said.String()) {
				t.Errorf("kvreplay did not say that its prewrite stopped short (it took %v after SIGTERM); stderr:\n%s", took, said.String())
			}
			if took > 60*time.Second {
				t.Errorf("kvreplay took %v to stop after SIGTERM in its prewrite", took)
			}
			if entries, _ := os.ReadDir(nv); len(entries) != 0 {
				t.Errorf("left in --dir: %v", entries)
			}
		})
	}
}

// prewriteCut is the error of a prewrite stopped before the end of its
// file.
var prewriteCut = regexp.MustCompile(`prewrite .*: stopped before offset \d+ of \d+`)

// mkfifo makes a named pipe in dir.
func mkfifo(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "trace.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

// TestSIGINTWaitingForFIFO: a named pipe given as the trace, with no
// writer, does not hold kvreplay in open(2) where no signal reaches it: a
// real SIGINT stops it (exit 1, naming the signal), its result, if any,
// marked incomplete.
func TestSIGINTWaitingForFIFO(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	dir := t.TempDir()
	fifo := mkfifo(t, dir)
	out := filepath.Join(dir, "r.json")
	cmd := exec.Command(kvreplay, "--speed", "max", "-o", out, fifo)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// kvreplay holds the pipe open (non-blocking) while it waits for a
	// writer: then its signal handler is in place too.
	fds := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	opened := func() bool {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if l, _ := os.Readlink(filepath.Join(fds, e.Name())); l == fifo {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(20 * time.Second); !opened(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("kvreplay never opened %s (blocked in open(2)?); stderr:\n%s", fifo, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupt") {
			t.Errorf("exit %v, want status 1 naming the signal; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("SIGINT did not stop kvreplay waiting for a writer of %s", fifo)
	}
	if _, err := os.Stat(out); err == nil {
		if r := readResult(t, out); r.Complete || r.Replay.RowsDone != 0 {
			t.Errorf("the result of the interrupted run: complete %v, rows done %d", r.Complete, r.Replay.RowsDone)
		}
	}
}

// TestFIFOTraceReadOnce: a named pipe is read once, as stdin is (no
// prescan, which would leave nothing for the replay, whose second open
// would wait for a writer that never comes), and its rows are replayed.
func TestFIFOTraceReadOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir)
	src, err := os.ReadFile(nvmeTrace(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		w.Write(src)
		w.Close()
	}()
	out := filepath.Join(dir, "r.json")
	done := make(chan struct{})
	var code int
	var stderr string
	go func() {
		defer close(done)
		code, _, stderr = kvreplay("--speed", "max", "-o", out, fifo)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("kvreplay of a named pipe still runs (a second open of the pipe waits for a writer)")
	}
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if r := readResult(t, out); !r.Complete || r.Replay.RowsDone != 4 {
		t.Errorf("complete %v, rows done %d, want 4", r.Complete, r.Replay.RowsDone)
	}
}

// TestStderrReaderGone runs a real kvreplay whose stderr is a pipe nobody
// reads any more (kvreplay ... 2>&1 | head -1, once head has exited): its
// first warning must not kill it with SIGPIPE, which left the -o file's
// temporary beside it and the run's directory in --dir; the replay runs,
// writes its result and leaves nothing else.
func TestStderrReaderGone(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	nv := filepath.Join(dir, "nvme")
	out := filepath.Join(dir, "r.json")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	// --buffered warns on stderr once the run's directory exists.
	cmd := exec.Command(kvreplay, "--buffered", "--mkdir", "--dir", nv, "-o", out, tr)
	cmd.Stderr = w
	err = cmd.Run()
	w.Close()
	if err != nil {
		t.Fatalf("kvreplay with its stderr's reader gone: %v, want exit 0", err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no result: %v", err)
	}
	for _, d := range []string{dir, nv} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if n := e.Name(); n != "t.csv" && n != "r.json" && n != "nvme" {
				t.Errorf("%s left in %s", n, d)
			}
		}
	}
}
