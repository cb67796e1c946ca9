package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// pipeChild is the environment variable that makes this test binary the
// tool of TestMainQuietPipe: its value is what the tool's run does.
const pipeChild = "KVBENCH_CLI_PIPE_CHILD"

// pipeTool is the tool TestMainQuietPipe runs in a process of its own:
// "stdout" writes to stdout until a write fails, then cleans up (makes
// the file KVBENCH_CLI_PIPE_CLEANED names) and returns the write's error;
// "help" asks for --help; "other" fails with an error of its own.
func pipeTool(what string) {
	os.Exit(cli.MainQuietPipe("tool", nil, os.Stdout, os.Stderr, func(_ context.Context, _ []string, stdout, _ io.Writer) error {
		switch what {
		case "help":
			return &cli.HelpError{Text: "usage\n"}
		case "other":
			return errors.New("boom")
		}
		var err error
		for err == nil {
			_, err = fmt.Fprintln(stdout, "row")
		}
		if werr := os.WriteFile(os.Getenv("KVBENCH_CLI_PIPE_CLEANED"), nil, 0o644); werr != nil {
			return werr
		}
		return err
	}))
}

// TestMainQuietPipe: a tool whose stdout's reader went away (tool | head
// -1) cleans up, then ends quietly, killed by SIGPIPE as Unix tools are;
// kvreplay said "write /dev/stdout: broken pipe" and exited 1. An error
// of the tool's own is printed, with its status, as Main does.
func TestMainQuietPipe(t *testing.T) {
	if what := os.Getenv(pipeChild); what != "" {
		pipeTool(what)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no path to this test binary:", err)
	}
	for _, tc := range []struct {
		what, stderr string
		sigpipe      bool
		code         int
	}{
		{"stdout", "", true, 0},
		{"help", "", true, 0},
		{"other", "tool: boom\n", false, cli.ExitFailure},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cleaned := filepath.Join(t.TempDir(), "cleaned")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader went away before the first write
			var stderr bytes.Buffer
			cmd := exec.Command(exe, "-test.run=^TestMainQuietPipe$")
			cmd.Env = append(os.Environ(), pipeChild+"="+tc.what, "KVBENCH_CLI_PIPE_CLEANED="+cleaned)
			cmd.Stdout, cmd.Stderr = w, &stderr
			err = cmd.Run()
			w.Close()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			killed := ws.Signaled() && ws.Signal() == syscall.SIGPIPE
			if killed != tc.sigpipe || (!tc.sigpipe && cmd.ProcessState.ExitCode() != tc.code) || stderr.String() != tc.stderr {
				t.Errorf("%v, killed by SIGPIPE %v, stderr %q; want killed by SIGPIPE %v, status %d, stderr %q", err, killed, stderr.String(), tc.sigpipe, tc.code, tc.stderr)
			}
			if _, err := os.Stat(cleaned); tc.what == "stdout" && err != nil {
				t.Errorf("the tool did not clean up before it ended: %v", err)
			}
		})
	}
}

// TestStdoutClosed: only a write to os.Stdout that failed with EPIPE,
// however wrapped, is the reader's going away.
func TestStdoutClosed(t *testing.T) {
	epipe := &fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.EPIPE}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{epipe, true},
		{fmt.Errorf("writing the result: %w", epipe), true},
		{&fs.PathError{Op: "write", Path: "/tmp/fifo", Err: syscall.EPIPE}, false},
		{&fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.EIO}, false},
		{syscall.EPIPE, false},
		{nil, false},
	} {
		if got := cli.StdoutClosed(tc.err); got != tc.want {
			t.Errorf("StdoutClosed(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
