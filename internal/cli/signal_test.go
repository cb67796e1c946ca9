package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
)

// signalChild is the environment variable that makes this test binary the
// tool of TestSignalAfterGrace: "grace,mode,dir".
const signalChild = "KVBENCH_CLI_SIGNAL_CHILD"

// signalTool is a tool whose clean-up hangs: it writes -o DIR/r.json and
// a file in a run directory in DIR, says "ready" on stdout, and once a
// signal stops it says "stopping" and waits for its stdin to end before it
// cleans up and returns. In mode "cleaned" it cleans up first, says
// "cleaned", and then waits (as kvreplay drains a piped trace).
func signalTool(spec string) {
	graceS, rest, _ := strings.Cut(spec, ",")
	mode, dir, _ := strings.Cut(rest, ",")
	grace, err := time.ParseDuration(graceS)
	if err != nil {
		panic(err)
	}
	os.Exit(cli.MainGrace("tool", nil, os.Stdout, os.Stderr, func(ctx context.Context, _ []string, stdout, _ io.Writer) error {
		out, err := cli.CreateFile(ctx, filepath.Join(dir, "r.json"))
		if err != nil {
			return err
		}
		defer out.Abort()
		rd, err := cli.MakeRunDir(ctx, "--dir", dir, "tool")
		if err != nil {
			return err
		}
		obj := filepath.Join(rd.Path(), "object")
		if err := os.WriteFile(obj, []byte("data"), 0o644); err != nil {
			return err
		}
		cleanup := func() error {
			if err := os.Remove(obj); err != nil {
				return err
			}
			if err := rd.Remove(); err != nil {
				return err
			}
			return out.Abort()
		}
		fmt.Fprintln(stdout, "ready")
		<-ctx.Done()
		fmt.Fprintln(stdout, "stopping")
		if mode == "cleaned" {
			if err := cleanup(); err != nil {
				return err
			}
			fmt.Fprintln(stdout, "cleaned")
		}
		io.Copy(io.Discard, os.Stdin) // the clean-up hangs until stdin ends
		if mode != "cleaned" {
			if err := cleanup(); err != nil {
				return err
			}
		}
		return ctx.Err()
	}, grace))
}

// signalRun is a running signalTool: its stdout's and stderr's lines as
// they come, its stdin, and its end.
type signalRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout chan string
	stderr chan string
	lines  []string // of stderr, read by now
	exited chan struct{}
}

func startSignalTool(t *testing.T, grace time.Duration, mode, dir string) *signalRun {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no path to this test binary:", err)
	}
	cmd := exec.Command(exe, "-test.run=^TestSignalAfterGrace$")
	cmd.Env = append(os.Environ(), signalChild+"="+grace.String()+","+mode+","+dir)
	r := &signalRun{cmd: cmd, stdout: make(chan string, 64), stderr: make(chan string, 256), exited: make(chan struct{})}
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	so, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	se, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var read sync.WaitGroup
	for _, p := range []struct {
		rd io.Reader
		ch chan string
	}{{so, r.stdout}, {se, r.stderr}} {
		read.Go(func() {
			s := bufio.NewScanner(p.rd)
			for s.Scan() {
				p.ch <- s.Text()
			}
			close(p.ch)
		})
	}
	go func() {
		read.Wait() // Wait closes the pipes: read them to their end first
		cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stdin.Close()
		cmd.Process.Kill()
		<-r.exited
	})
	return r
}

// expect waits for the line want on stdout.
func (r *signalRun) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got, ok := <-r.stdout:
		if !ok || got != want {
			t.Fatalf("stdout: %q (open %v), want %q; stderr so far: %q", got, ok, want, r.lines)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q on stdout in 10 s; stderr so far: %q", want, r.lines)
	}
}

// expectStderr waits for a line on stderr that holds want.
func (r *signalRun) expectStderr(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-r.stderr:
			if !ok {
				t.Fatalf("stderr ended without %q: %q", want, r.lines)
			}
			r.lines = append(r.lines, l)
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on stderr in 10 s: %q", want, r.lines)
		}
	}
}

// signal sends sig to the tool.
func (r *signalRun) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// end waits for the tool's end and returns all of its stderr.
func (r *signalRun) end(t *testing.T) string {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10 s later; stderr so far: %q", r.lines)
	}
	for l := range r.stderr {
		r.lines = append(r.lines, l)
	}
	return strings.Join(r.lines, "\n")
}

// TestSignalAfterGrace: a signal that comes SignalGrace or more after the
// first, while the clean-up the first one started hangs, ends the tool at
// once, killed by that signal (a shell's status 128+signal), and its last
// words on stderr name what it leaves and where: the run directory, and
// the temporary file of its output, which it did not write. (It died of
// the restored default action, without a word, leaving both unnamed.) One
// within the grace gets a note, and the clean-up goes on to its end.
func TestSignalAfterGrace(t *testing.T) {
	if spec := os.Getenv(signalChild); spec != "" {
		signalTool(spec)
		return
	}
	t.Parallel()
	t.Run("after the grace", func(t *testing.T) {
		t.Parallel()
		for _, second := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			dir := t.TempDir()
			r := startSignalTool(t, 0, "hangs", dir)
			r.expect(t, "ready")
			runDirs, _ := filepath.Glob(filepath.Join(dir, "tool-*"))
			temps, _ := filepath.Glob(filepath.Join(dir, ".r.json.tmp*"))
			if len(runDirs) != 1 || len(temps) != 1 {
				t.Fatalf("run directories %q, temporary files %q: want one of each", runDirs, temps)
			}
			r.signal(t, syscall.SIGINT)
			r.expect(t, "stopping")
			r.signal(t, second)
			stderr := r.end(t)
			ws, _ := r.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != second {
				t.Errorf("after %v: %v, want killed by %v", second, r.cmd.ProcessState, second)
			}
			for _, want := range []string{
				"tool: " + second.String() + " signal received again, 0 s after the first: stopped at once, before its clean-up finished; it leaves (remove what nothing needs):",
				"tool:   " + runDirs[0] + ": the run directory of tool, with what the run wrote in it",
				"tool:   " + temps[0] + ": the temporary file of " + filepath.Join(dir, "r.json") + ", which was not written",
			} {
				if !strings.Contains(stderr, want+"\n") && !strings.HasSuffix(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "r.json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("r.json: %v, want none", err)
			}
		}
	})
	t.Run("after the clean-up", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := startSignalTool(t, 0, "cleaned", dir)
		r.expect(t, "ready")
		r.signal(t, syscall.SIGINT)
		r.expect(t, "stopping")
		r.expect(t, "cleaned")
		r.signal(t, syscall.SIGINT)
		stderr := r.end(t)
		if ws, _ := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Errorf("%v, want killed by SIGINT", r.cmd.ProcessState)
		}
		if want := "tool: interrupt signal received again, 0 s after the first: stopped at once, before its clean-up finished; it leaves no file of its own"; stderr != want {
			t.Errorf("stderr %q, want %q", stderr, want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("left in the directory: %v", ents)
		}
	})
	t.Run("within the grace", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		r := startSignalTool(t, time.Hour, "hangs", dir)
		r.expect(t, "ready")
		r.signal(t, syscall.SIGINT)
		r.expect(t, "stopping")
		r.signal(t, syscall.SIGINT)
		r.expectStderr(t, "tool: interrupt signal received again: still stopping (writing its partial result, removing its files); another one 3600 s or more after the first stops it at once, leaving them")
		r.stdin.Close() // the clean-up goes on
		stderr := r.end(t)
		if code := r.cmd.ProcessState.ExitCode(); code != cli.ExitFailure {
			t.Errorf("exit status %d, want %d", code, cli.ExitFailure)
		}
		if !strings.HasSuffix(stderr, "tool: context canceled (interrupt signal received)") {
			t.Errorf("stderr:\n%s\nwant it to end with the run's error", stderr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("left in the directory: %v", ents)
		}
	})
}
