package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Exit statuses of the kvbench tools (design section 7).
const (
	ExitOK      = 0 // success, or --help
	ExitFailure = 1 // the run failed or was interrupted
	ExitUsage   = 2 // bad usage or bad input: flags, arguments, input files
)

// UsageError marks an error as the user's: a bad flag, argument or input
// file. ExitCode maps it to ExitUsage. Find it with errors.As; it unwraps to
// the error it marks, and its message is that error's message unchanged.
type UsageError struct {
	Err error
}

// Error returns the marked error's message unchanged.
func (e *UsageError) Error() string {
	if e.Err == nil {
		return "usage error"
	}
	return e.Err.Error()
}

// Unwrap returns the marked error.
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a usage error formatted as by fmt.Errorf (%w wraps).
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Input marks err as a usage or input error; it returns nil for nil, and err
// itself when it is already marked.
func Input(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*UsageError](err); ok {
		return err
	}
	return &UsageError{Err: err}
}

// ExitCode maps the error of a run to an exit status: ExitOK for nil and for
// pflag.ErrHelp, ExitUsage for errors marked by Usagef or Input, and
// ExitFailure for everything else, an interrupted run (context.Canceled)
// included.
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp), errors.Is(err, ErrVersion):
		return ExitOK
	}
	if _, ok := errors.AsType[*UsageError](err); ok {
		return ExitUsage
	}
	return ExitFailure
}
