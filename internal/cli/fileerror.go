package cli

import (
	"io/fs"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// FileError is err said as a user reads a file's error: a *fs.PathError
// (os.Open's, os.Stat's) becomes "PATH: REASON", its path made
// printable (parsemsg.Printable) and the system call named only where it
// is not the open or stat a reader expects ("PATH: read: REASON"),
// instead of Go's "open PATH: REASON". errors.Is and errors.As see the *fs.PathError it wraps. Other
// errors are returned as they are.
func FileError(err error) error {
	pe, ok := err.(*fs.PathError)
	if !ok {
		return err
	}
	return &fileError{pe}
}

type fileError struct{ pe *fs.PathError }

func (e *fileError) Error() string {
	switch e.pe.Op {
	case "open", "openat", "stat", "lstat":
		return parsemsg.Printable(e.pe.Path) + ": " + e.pe.Err.Error()
	}
	return parsemsg.Printable(e.pe.Path) + ": " + e.pe.Op + ": " + e.pe.Err.Error()
}

func (e *fileError) Unwrap() error { return e.pe }
