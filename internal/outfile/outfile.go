// Package outfile owns how kvbench writes an output file without destroying
// what lies at its path (design section 7). What is there decides how:
//
//   - nothing, or a regular file: the output is written under a hidden
//     temporary name in the same directory and renamed into place by Close,
//     so that readers never see a partial file and a failed run leaves the
//     old file as it was. A symbolic link to a regular file stays a link: the
//     file it names is replaced.
//   - a character device (/dev/null), a FIFO, a socket, or a descriptor of
//     this process named through /dev/stdout, /dev/fd/N or /proc/self/fd/N:
//     the output is written in place, as a shell's redirection would, and
//     never renamed over. Such an output is not a file that can have a file
//     beside it (a sidecar): InPlace says so.
//   - a directory, a block device, or anything else: refused.
//
// Which paths a tool may write to at all (the system directories, its own
// inputs) is the command line's to decide (internal/cli); this package only
// writes. It uses the standard library and internal/syspath only.
package outfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/kvbench/kvbench/internal/syspath"
)

// Kind is what writing a path would do.
type Kind int

const (
	// New: nothing is there; the output is created atomically.
	New Kind = iota
	// Replace: a regular file is there; the output replaces it atomically.
	Replace
	// InPlace: a character device, FIFO, socket or descriptor of this
	// process is there; the output is written into it.
	InPlace
)

// String names the kind for messages.
func (k Kind) String() string {
	switch k {
	case New:
		return "new file"
	case Replace:
		return "regular file"
	}
	return "written in place"
}

// Target is what lies at an output path.
type Target struct {
	// Kind says how the output is written.
	Kind Kind
	// Path is where the bytes go: the path with its symbolic links
	// resolved for New and Replace (so a link is not replaced by a file),
	// the special file for InPlace.
	Path string
	// Mode is the type and permissions of what is there (0 for New).
	Mode fs.FileMode
	// FD is the descriptor of this process the path names (/dev/stdout,
	// /dev/fd/N, /proc/self/fd/N), or -1.
	FD int
}

// ErrNotWritable is wrapped by Classify's refusals: a directory, a block
// device, or a file of another type.
var ErrNotWritable = errors.New("not a file kvbench writes over")

// Classify says what writing path would do, without changing anything.
// A directory, a block device and other file types are refused with an
// error wrapping ErrNotWritable; a path whose directory cannot be read is
// refused with the system's error.
func Classify(path string) (Target, error) {
	t := Target{FD: -1}
	if path == "" {
		return t, &fs.PathError{Op: "create", Path: path, Err: errors.New("empty file name")}
	}
	if fd, ok := ownDescriptor(path); ok {
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return t, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("descriptor %d: %w", fd, err)}
		}
		t.Kind, t.Path, t.FD = InPlace, path, fd
		t.Mode = fileMode(st.Mode)
		return t, nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Where the kernel would create it: "nodir/../x" is nowhere,
		// "link/../x" is beside the link's target; filepath.Abs would
		// make either ./x, which may exist (an input of the run).
		abs, err := syspath.Abs(path)
		if err != nil {
			return t, &fs.PathError{Op: "create", Path: path, Err: err}
		}
		if abs, err = syspath.Resolve(abs); err != nil {
			return t, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		t.Kind, t.Path = New, abs
		return t, nil
	case err != nil:
		return t, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
	}
	t.Mode = fi.Mode()
	switch m := fi.Mode(); {
	case m.IsRegular():
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return t, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
		}
		if resolved, err = filepath.Abs(resolved); err != nil {
			return t, &fs.PathError{Op: "create", Path: path, Err: err}
		}
		t.Kind, t.Path = Replace, resolved
	case m.IsDir():
		return t, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("is a directory: %w", ErrNotWritable)}
	case m&fs.ModeDevice != 0 && m&fs.ModeCharDevice == 0:
		return t, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a block device: refusing to write an output over it: %w", ErrNotWritable)}
	case m&(fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0:
		t.Kind, t.Path = InPlace, path
	default:
		return t, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("a %s, not a regular file: %w", TypeName(m), ErrNotWritable)}
	}
	return t, nil
}

// TypeName names the type of a file that is not regular, in words (a
// FileMode prints its type as letters: "L---------"), for messages.
func TypeName(m fs.FileMode) string {
	for _, t := range typeNames {
		if m.Type()&t.bit != 0 {
			return t.name
		}
	}
	return "file of mode " + m.String()
}

// typeNames names the file types, in the order TypeName tests them: a
// character device has ModeDevice set too.
var typeNames = []struct {
	bit  fs.FileMode
	name string
}{
	{fs.ModeSymlink, "symbolic link"},
	{fs.ModeCharDevice, "character device"},
	{fs.ModeDevice, "block device"},
	{fs.ModeNamedPipe, "named pipe"},
	{fs.ModeSocket, "socket"},
	{fs.ModeDir, "directory"},
}

// fileMode converts a stat(2) mode to a FileMode's type bits.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	}
	return mode
}

// ownDescriptor reports whether path names, directly or through symbolic
// links, a descriptor of this process: /dev/stdout, /dev/stderr,
// /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N or /proc/PID/fd/N
// with this process's PID. Such a path is a magic link that a rename would
// replace (as root, /dev/stdout itself), so it is written through the
// descriptor.
func ownDescriptor(path string) (int, bool) {
	p, err := filepath.Abs(path)
	if err != nil {
		return 0, false
	}
	for range 40 { // as the kernel's bound on links followed
		if fd, ok := descriptorName(p); ok {
			return fd, true
		}
		// Resolve the directory, then look at the last element.
		dir, base := filepath.Split(p)
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			p = filepath.Join(d, base)
			if fd, ok := descriptorName(p); ok {
				return fd, true
			}
		}
		target, err := os.Readlink(p)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return 0, false
}

// descriptorName parses the clean absolute path p as the name of one of
// this process's descriptors.
func descriptorName(p string) (int, bool) {
	switch p {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	rest, ok := strings.CutPrefix(p, "/dev/fd/")
	if !ok {
		after, found := strings.CutPrefix(p, "/proc/")
		if !found {
			return 0, false
		}
		proc, fdPart, found := strings.Cut(after, "/fd/")
		if !found || (proc != "self" && proc != "thread-self" && proc != strconv.Itoa(os.Getpid())) {
			return 0, false
		}
		rest = fdPart
	}
	fd, err := strconv.Atoi(rest)
	if err != nil || fd < 0 {
		return 0, false
	}
	return fd, true
}

// File is an output being written: atomically (a temporary file renamed
// into place by Close) or in place (see the package doc). A File is not
// safe for concurrent use. Either Close or Abort must be called; calling
// Abort after Close is harmless, so
//
//	f, err := outfile.Create(ctx, path)
//	...
//	defer f.Abort()
//	... write ...
//	return f.Close()
//
// is the usual pattern.
type File struct {
	path   string // as given, for messages
	target Target
	tmp    *os.File       // atomic: the temporary file
	w      io.WriteCloser // in place
	err    error          // first write error: Close then discards the file
	done   bool           // Close or Abort was called
	cerr   error          // result of Close
	// untrack ends the record of tmp in the run's Leftovers (Track).
	untrack func()
}

// Create starts writing path, as Classify says. An atomic output gets its
// temporary file now; an in-place one is opened now (a FIFO waits for its
// reader until ctx is done).
func Create(ctx context.Context, path string) (*File, error) {
	t, err := Classify(path)
	if err != nil {
		return nil, err
	}
	f := &File{path: path, target: t}
	if t.Kind == InPlace {
		if f.w, err = openInPlace(ctx, t); err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: unwrapPath(err)}
		}
		return f, nil
	}
	dir, base := filepath.Split(t.Path)
	f.tmp, err = os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
	}
	f.untrack = Track(ctx, Leftover{Path: f.tmp.Name(), What: "the temporary file of " + path + ", which was not written"})
	return f, nil
}

// openInPlace opens the special file of t for writing, never creating or
// truncating anything.
func openInPlace(ctx context.Context, t Target) (io.WriteCloser, error) {
	switch {
	case t.FD >= 0:
		fd, err := syscall.Dup(t.FD)
		if err != nil {
			return nil, fmt.Errorf("descriptor %d: %w", t.FD, err)
		}
		syscall.CloseOnExec(fd)
		return os.NewFile(uintptr(fd), t.Path), nil
	case t.Mode&fs.ModeSocket != 0:
		c, err := net.Dial("unix", t.Path)
		if err != nil {
			if c, err2 := net.Dial("unixgram", t.Path); err2 == nil {
				return c, nil
			}
			return nil, err
		}
		return c, nil
	case t.Mode&fs.ModeNamedPipe != 0:
		return openFIFO(ctx, t.Path)
	}
	return os.OpenFile(t.Path, os.O_WRONLY, 0)
}

// openFIFO opens a FIFO for writing, which blocks until a reader opens it;
// when ctx is done first, it opens the read end itself to release the
// blocked open, and returns ctx's error.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		// A reader is there; writes should block as on any file.
		if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	} else if !errors.Is(err, syscall.ENXIO) {
		return nil, err
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
	}
	if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		o := <-ch
		if o.f != nil {
			o.f.Close()
		}
		r.Close()
	}
	return nil, context.Cause(ctx)
}

// Name returns the path as given.
func (f *File) Name() string { return f.path }

// InPlace reports whether the output is written into a special file (a
// device, FIFO, socket or descriptor) rather than a regular file: nothing
// can be written beside it.
func (f *File) InPlace() bool { return f.target.Kind == InPlace }

// Write writes to the temporary file, or in place. After a failed write
// every later Write fails with the same error and Close discards an atomic
// file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, f.pathErr("write", os.ErrClosed)
	}
	if f.err != nil {
		return 0, f.err
	}
	var n int
	var err error
	if f.w != nil {
		n, err = f.w.Write(p)
	} else {
		n, err = f.tmp.Write(p)
	}
	if err != nil {
		f.err = f.pathErr("write", err)
		return n, f.err
	}
	return n, nil
}

// Close completes the output. An atomic file is flushed to stable storage
// and renamed to its final path, keeping the permissions of the file it
// replaces (0644 for a new one); if a write failed, or any step of Close
// fails, the temporary file is removed, the final path is left as it was,
// and Close returns the error. An in-place output is closed. Calling Close
// again returns the same result.
func (f *File) Close() error {
	if f.done {
		return f.cerr
	}
	f.done = true
	defer f.forget()
	switch {
	case f.w != nil:
		err := f.w.Close()
		if f.err != nil {
			f.cerr = f.err
		} else if err != nil {
			f.cerr = f.pathErr("close", err)
		}
	case f.err != nil:
		f.discard()
		f.cerr = f.err
	default:
		f.cerr = f.commit()
	}
	return f.cerr
}

func (f *File) commit() error {
	if err := f.prepare(); err != nil {
		return err
	}
	if err := f.rename(f.tmp.Name()); err != nil {
		_ = os.Remove(f.tmp.Name())
		return f.pathErr("rename", err)
	}
	return nil
}

// prepare flushes the temporary file to stable storage, gives it the
// permissions of the file it replaces (0644 for a new one) and closes it:
// all of commit but the rename. On failure it removes the temporary file.
func (f *File) prepare() error {
	name := f.tmp.Name()
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(f.target.Path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	steps := []struct {
		op string
		fn func() error
	}{
		{"write", f.tmp.Sync},
		{"chmod", func() error { return f.tmp.Chmod(mode) }},
		{"write", f.tmp.Close},
	}
	for i, s := range steps {
		if err := s.fn(); err != nil {
			if i < 2 {
				_ = f.tmp.Close()
			}
			_ = os.Remove(name)
			return f.pathErr(s.op, err)
		}
	}
	return nil
}

// CloseAll completes several outputs as one: every atomic file is
// flushed and closed first, and they are renamed into place only once all
// of them are. So a write, flush or close that fails (a full disk,
// an I/O error) leaves every final path as it was: the temporary files are
// removed and CloseAll returns the error. What can still fail after that
// is a rename itself, after a check of every final path (a device that
// appeared at one since Create stops them all): an I/O error in the
// directory leaves the outputs renamed before it in place, and the error
// names them. In-place outputs are closed before the
// renames, and one that fails to close stops them too. A File
// closed or aborted before is left as it is; each File's Close returns
// CloseAll's result for it afterwards.
func CloseAll(files ...*File) error {
	defer func() {
		for _, f := range files {
			f.forget()
		}
	}()
	var pending []*File
	fail := func(err error) error {
		for _, f := range files {
			if !f.done {
				_ = f.Abort()
			}
		}
		for _, f := range pending {
			_ = os.Remove(f.tmp.Name())
			f.cerr = err
		}
		return err
	}
	for _, f := range files {
		if f.done || f.w != nil {
			continue
		}
		if f.err != nil {
			f.discard()
			f.done, f.cerr = true, f.err
			return fail(f.err)
		}
		f.done = true
		if f.cerr = f.prepare(); f.cerr != nil {
			return fail(f.cerr)
		}
		pending = append(pending, f)
	}
	for _, f := range files {
		if !f.done {
			if err := f.Close(); err != nil {
				return fail(err)
			}
		}
	}
	for _, f := range pending {
		if err := f.changed(); err != nil {
			return fail(f.pathErr("rename", err))
		}
	}
	var renamed []string
	for i, f := range pending {
		if err := f.rename(f.tmp.Name()); err != nil {
			err = f.pathErr("rename", err)
			if len(renamed) > 0 {
				err = fmt.Errorf("%w (already in place: %s)", err, strings.Join(renamed, ", "))
			}
			pending = pending[i:]
			return fail(err)
		}
		renamed = append(renamed, f.path)
	}
	return nil
}

// rename moves the temporary file into place, unless what is at the final
// path changed kind since Create (a device or FIFO appeared there): that is
// never renamed over.
func (f *File) rename(tmp string) error {
	if err := f.changed(); err != nil {
		return err
	}
	return os.Rename(tmp, f.target.Path)
}

// changed fails where something other than a regular file is now at the
// final path.
func (f *File) changed() error {
	if fi, err := os.Lstat(f.target.Path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("a %s appeared at the path: %w", TypeName(fi.Mode()), ErrNotWritable)
	}
	return nil
}

// Abort discards an unfinished atomic file, leaving the final path as it
// was, or closes an in-place output. It does nothing after Close or a
// previous Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	defer f.forget()
	f.cerr = errors.New("output " + f.path + " aborted")
	if f.w != nil {
		return f.w.Close()
	}
	return f.discard()
}

// forget ends the record of the temporary file in the run's Leftovers:
// it is renamed into place or removed by now.
func (f *File) forget() {
	if f.untrack != nil {
		f.untrack()
		f.untrack = nil
	}
}

func (f *File) discard() error {
	_ = f.tmp.Close()
	if err := os.Remove(f.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// pathErr names the path as given, not the temporary one, in err, keeping
// the underlying error for errors.Is (for example syscall.ENOSPC).
func (f *File) pathErr(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.path, Err: unwrapPath(err)}
}

// unwrapPath returns the error inside a *fs.PathError or *os.LinkError, so
// that a message names the path once, as kvbench gives it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
