package cli

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// OpenInput opens the input named on the command line: "-" is standard
// input, whose Close does nothing, and anything else is a file opened with
// os.Open. A file that cannot be opened is an input error (see Input).
func OpenInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	if name == "" {
		return nil, Usagef("input: empty file name (want a file or - for standard input)")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, Input(err)
	}
	return f, nil
}

// CreateOutput creates the output named on the command line: "-" is
// standard output, whose Close does nothing, and anything else is an
// *AtomicFile (see CreateAtomic), so that the file appears complete or not
// at all. Both have an Abort() error method, which discards an unfinished
// file and does nothing on standard output; a caller that gives up calls it
// through interface{ Abort() error }. A file that cannot be created is an
// input error (see Input).
func CreateOutput(name string) (io.WriteCloser, error) {
	if name == "-" {
		return stdout{os.Stdout}, nil
	}
	a, err := CreateAtomic(name)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// stdout is standard output as an output: Close and Abort leave it open.
type stdout struct{ io.Writer }

func (stdout) Close() error { return nil }
func (stdout) Abort() error { return nil }

// AtomicFile is a file written under a temporary name in the directory of
// its final path and renamed into place by Close, so that readers never see
// a partial file: the path holds the old file (or nothing) until Close
// returns nil. An AtomicFile is not safe for concurrent use. Either Close or
// Abort must be called; calling Abort after Close is harmless, so
//
//	f, err := cli.CreateAtomic(path)
//	...
//	defer f.Abort()
//	... write ...
//	return f.Close()
//
// is the usual pattern.
type AtomicFile struct {
	path string
	tmp  *os.File
	err  error // first write error: Close then discards the file
	done bool  // Close or Abort was called
	cerr error // result of Close
}

// CreateAtomic starts writing path: it creates a hidden temporary file next
// to it. A path that cannot be created is an input error (see Input).
func CreateAtomic(path string) (*AtomicFile, error) {
	if path == "" {
		return nil, Usagef("output: empty file name (want a file or - for standard output)")
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, Input(&fs.PathError{Op: "create", Path: path, Err: errors.New("is a directory")})
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, Input(&fs.PathError{Op: "create", Path: path, Err: UnwrapPath(err)})
	}
	return &AtomicFile{path: path, tmp: tmp}, nil
}

// Name returns the final path of the file.
func (a *AtomicFile) Name() string { return a.path }

// Write writes to the temporary file. After a failed write every later
// Write fails with the same error and Close discards the file.
func (a *AtomicFile) Write(p []byte) (int, error) {
	if a.done {
		return 0, a.pathErr("write", os.ErrClosed)
	}
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.tmp.Write(p)
	if err != nil {
		a.err = a.pathErr("write", err)
		return n, a.err
	}
	return n, nil
}

// Close flushes the temporary file to stable storage and renames it to the
// final path, replacing any file there and keeping that file's permissions
// (0644 for a new file). If a write failed, or any step of Close fails, the
// temporary file is removed, the final path is left as it was, and Close
// returns the error. Calling Close again returns the same result.
func (a *AtomicFile) Close() error {
	if a.done {
		return a.cerr
	}
	a.done = true
	if a.err != nil {
		a.discard()
		a.cerr = a.err
		return a.cerr
	}
	a.cerr = a.commit()
	return a.cerr
}

func (a *AtomicFile) commit() error {
	name := a.tmp.Name()
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(a.path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	steps := []struct {
		op string
		fn func() error
	}{
		{"write", a.tmp.Sync},
		{"chmod", func() error { return a.tmp.Chmod(mode) }},
		{"write", a.tmp.Close},
		{"rename", func() error { return os.Rename(name, a.path) }},
	}
	for i, s := range steps {
		if err := s.fn(); err != nil {
			if i < 2 {
				_ = a.tmp.Close()
			}
			_ = os.Remove(name)
			return a.pathErr(s.op, err)
		}
	}
	return nil
}

// Abort discards the temporary file and leaves the final path as it was. It
// does nothing after Close or a previous Abort.
func (a *AtomicFile) Abort() error {
	if a.done {
		return nil
	}
	a.done = true
	a.cerr = errors.New("output " + a.path + " aborted")
	return a.discard()
}

func (a *AtomicFile) discard() error {
	_ = a.tmp.Close()
	if err := os.Remove(a.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// pathErr names the final path, not the temporary one, in err, keeping the
// underlying error for errors.Is (for example syscall.ENOSPC).
func (a *AtomicFile) pathErr(op string, err error) error {
	err = UnwrapPath(err)
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: a.path, Err: err}
}

// WriteFileAtomic writes path through fn atomically: the file appears, with
// everything fn wrote, only if fn and the write succeed; otherwise the path
// is left as it was and the error is returned.
func WriteFileAtomic(path string, fn func(io.Writer) error) error {
	a, err := CreateAtomic(path)
	if err != nil {
		return err
	}
	if err := fn(a); err != nil {
		_ = a.Abort()
		return err
	}
	return a.Close()
}

// WriteOutput writes the output named on the command line through fn: "-"
// is stdout, anything else a file written atomically (WriteFileAtomic).
func WriteOutput(name string, stdout io.Writer, fn func(io.Writer) error) error {
	if name == "-" {
		return fn(stdout)
	}
	return WriteFileAtomic(name, fn)
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
