package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
)

// ExitBrokenPipe is the status MainQuietPipe returns where the process
// outlives its last write to a stdout whose reader went away: a shell's
// status of a process that SIGPIPE ended (128 + 13).
const ExitBrokenPipe = 128 + int(syscall.SIGPIPE)

// MainQuietPipe is Main for a tool that must clean up (a run directory,
// an output's temporary) when the reader of its stdout goes away before
// it is done (tool ... | head -1), and that then ends as Unix tools do
// there: quietly, killed by SIGPIPE (status 141 in a shell), not with
// "write /dev/stdout: broken pipe" and status 1. SIGPIPE is caught while
// run runs, so that a write to the closed pipe fails with EPIPE and run
// removes what it made as after any error; when run's error is such a
// write to os.Stdout (StdoutClosed), or the print of --help or --version
// meets one, the default SIGPIPE is restored and one more write to stdout
// ends the process. Any other error is Main's, printed, with its status.
func MainQuietPipe(tool string, args []string, stdout, stderr io.Writer,
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) int {
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGPIPE)
	closed := false
	code := Main(tool, args, stdout, stderr, func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		err := run(ctx, args, stdout, stderr)
		// --help and --version are printed here, not by Main, which
		// would say that the pipe broke.
		if he, ok := errors.AsType[*HelpError](err); ok {
			if _, err = io.WriteString(stdout, he.Text); err == nil {
				return nil
			}
		} else if errors.Is(err, ErrVersion) {
			if _, err = fmt.Fprintln(stdout, tool, Version()); err == nil {
				return nil
			}
		}
		if StdoutClosed(err) {
			closed = true
			return nil
		}
		return err
	})
	signal.Stop(caught)
	if !closed {
		return code
	}
	// Not ignored, not caught: the runtime ends a process whose write to
	// fd 1 fails with EPIPE by SIGPIPE (os/signal's "SIGPIPE").
	_, _ = os.Stdout.Write([]byte{'\n'})
	return ExitBrokenPipe
}

// StdoutClosed reports whether err is a write to os.Stdout that failed
// because its reader went away (EPIPE): the consumer of a tool's output
// chose to stop reading (head -1), which is no failure of the tool.
func StdoutClosed(err error) bool {
	pe, ok := errors.AsType[*fs.PathError](err)
	return ok && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}
