package cli_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestFileError: a file's error names the path and the reason as a user
// reads them, the path escaped, the system call only where it is not an
// open or a stat; errors.Is and errors.As still see through it.
func TestFileError(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "run\n.csv")
	_, openErr := os.Open(missing)
	for _, tt := range []struct {
		err  error
		want string
	}{
		{openErr, filepath.Join(dir, `run\n.csv`) + ": no such file or directory"},
		{&fs.PathError{Op: "stat", Path: "a.csv", Err: syscall.EACCES}, "a.csv: permission denied"},
		{&fs.PathError{Op: "read", Path: "a.csv", Err: syscall.EIO}, "a.csv: read: input/output error"},
		{errors.New("other"), "other"},
	} {
		got := cli.FileError(tt.err)
		if got.Error() != tt.want {
			t.Errorf("FileError(%q) = %q, want %q", tt.err, got, tt.want)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("FileError(%q): errors.Is does not find the error it wraps", tt.err)
		}
	}
	if !errors.Is(cli.FileError(openErr), fs.ErrNotExist) {
		t.Errorf("FileError of a missing file: not fs.ErrNotExist")
	}
	if _, ok := errors.AsType[*fs.PathError](cli.FileError(openErr)); !ok {
		t.Errorf("FileError: errors.As finds no *fs.PathError")
	}
}
