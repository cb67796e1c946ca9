package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/outfile"
)

// OpenInput opens the input named on the command line: "-" is standard
// input (OpenStdin: a pipe there is read until ctx is done), and anything
// else is a file opened with OpenRead, so that a named pipe with no writer
// yet waits only until ctx is done (a signal), never in open(2). A file
// that cannot be opened is an input error (see Input).
func OpenInput(ctx context.Context, name string) (io.ReadCloser, error) {
	if name == "-" {
		return OpenStdin(ctx), nil
	}
	if name == "" {
		return nil, Usagef("input: empty file name (want a file or - for standard input)")
	}
	f, err := OpenRead(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, Input(err)
	}
	return f, nil
}

// OutputFile is an output file of a tool: written atomically where the path
// holds nothing or a regular file, in place where it holds a device, FIFO,
// socket or one of the process's descriptors (see internal/outfile). Close
// completes it and Abort discards it; Abort after Close does nothing.
type OutputFile = outfile.File

// CreateFile starts writing the output file path (not "-"): see
// OutputFile. A path that cannot be written is an input error (see Input),
// naming the path. A FIFO waits for its reader until ctx is done.
func CreateFile(ctx context.Context, path string) (*OutputFile, error) {
	if path == "" {
		return nil, Usagef("output: empty file name (want a file or - for standard output)")
	}
	f, err := outfile.Create(ctx, path)
	if err != nil {
		return nil, Input(err)
	}
	return f, nil
}

// CreateOutput creates the output named on the command line: "-" is
// standard output, whose Close does nothing, and anything else a file
// (CreateFile). Both have an Abort() error method, which discards an
// unfinished file and does nothing on standard output; a caller that gives
// up calls it through interface{ Abort() error }.
func CreateOutput(ctx context.Context, name string) (io.WriteCloser, error) {
	if name == "-" {
		return stdout{os.Stdout}, nil
	}
	f, err := CreateFile(ctx, name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// stdout is standard output as an output: Close and Abort leave it open.
type stdout struct{ io.Writer }

func (stdout) Close() error { return nil }
func (stdout) Abort() error { return nil }

// WriteFile writes the output file path through fn: the output is complete,
// with everything fn wrote, only if fn and the write succeed; otherwise an
// atomic file's path is left as it was and the error is returned.
func WriteFile(ctx context.Context, path string, fn func(io.Writer) error) error {
	f, err := CreateFile(ctx, path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		_ = f.Abort()
		return err
	}
	return f.Close()
}

// WriteOutput writes the output named on the command line by flag (-o,
// --output) through fn: "-" is stdout, anything else a file (WriteFile),
// whose errors name the flag and the path: one that cannot be created is
// an input error.
func WriteOutput(ctx context.Context, flag, name string, stdout io.Writer, fn func(io.Writer) error) error {
	if name == "-" {
		return fn(stdout)
	}
	f, err := CreateFile(ctx, name)
	if err != nil {
		return Input(fmt.Errorf("%s %s: %w", flag, name, UnwrapPath(err)))
	}
	if err := fn(f); err != nil {
		_ = f.Abort()
		return fmt.Errorf("%s %s: %w", flag, name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s %s: %w", flag, name, err)
	}
	return nil
}

// IsTerminal reports whether w is a terminal: a character device that
// answers the terminal ioctls where the system has them (so /dev/null is
// not one).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0 && isTTY(f)
}
