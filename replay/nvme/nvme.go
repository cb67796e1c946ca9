// Package nvme owns the Tier-2 (NVMe) replay backend in its directory
// layout: one file per object in a directory, the reference's layout
// (design section 5), read and written with pread/pwrite, through O_DIRECT
// where the file system allows it.
//
// New probes the directory once: it creates a file with O_DIRECT and
// writes one aligned block to it. Where the file system refuses (EINVAL, as
// tmpfs does), the backend falls back to buffered I/O and says so in
// Caps().Warnings, never silently; on tmpfs and ramfs, whose files are the
// page cache, it does so without trying. Alignment is 4096 bytes, or the larger
// direct-I/O alignment that statx(STATX_DIOALIGN) reports for the
// directory's file system; it is enforced in buffered mode too, so the
// engine issues the same I/Os either way. A misaligned buffer, offset or
// length fails with backend.ErrMisaligned before any system call.
//
// Files are named by FileName. Directories under /, /etc, /usr, /bin,
// /sbin, /lib*, /boot, /proc, /sys and /dev (but /dev/shm) are refused.
package nvme

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/syspath"
	"github.com/kvbench/kvbench/replay/backend"
)

// ErrSystemDir: New was given a system directory, or one under it.
var ErrSystemDir = errors.New("refused: use a directory on the drive under test")

// DefaultAlign is the alignment used where the file system reports none.
const DefaultAlign = 4096

// Options configure New. The zero Options mean buffered I/O in an existing
// directory whose created files are removed on Close: set Direct for a
// measurement.
type Options struct {
	// Direct opens files with O_DIRECT, bypassing the page cache. Where
	// the file system refuses it, I/O is buffered and Caps().Warnings says
	// so. Without Direct, I/O is buffered and Caps().Warnings says that too.
	Direct bool
	// Keep leaves the files (and the directory) in place on Close.
	Keep bool
	// Create makes the directory, and its missing parents, if need be,
	// and gives it to the backend: unless Keep, Close removes it, and the
	// parents New made, once the backend's files are gone, when nothing
	// else is left in them. Without Create the directory must exist, and
	// Close removes only the files the backend created.
	Create bool

	// refuseDirect makes New act as if the file system refused O_DIRECT
	// (tests of the fallback where every file system accepts it).
	refuseDirect bool
}

// Backend is the NVMe directory backend. It is safe for concurrent use;
// so are its Objects, but operations on one key that run at once (a create
// and a Remove of it, say) happen in no defined order: the caller orders
// them, as the engine does. Close must be called.
type Backend struct {
	dir      string
	opt      Options
	direct   bool
	align    int
	warnings []string
	made     []string // directories New made, deepest first

	mu      sync.Mutex
	closed  bool
	created map[string]uint64 // file name -> generation of its create
	gen     uint64
	open    map[*Object]struct{}
}

var _ backend.Backend = (*Backend)(nil)

var _ backend.Rooted = (*Backend)(nil)

// Root is the directory of the object files.
func (b *Backend) Root() string { return b.dir }

// New opens the directory dir as a backend, making it with opt.Create,
// and probes it for O_DIRECT when opt.Direct is set.
func New(dir string, opt Options) (*Backend, error) {
	if dir == "" {
		return nil, errors.New("nvme: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("nvme: %s: %w", dir, err)
	}
	if err := syspath.Check(abs, ErrSystemDir); err != nil {
		return nil, fmt.Errorf("nvme: %w", err)
	}
	resolved, err := syspath.Resolve(abs)
	if err != nil {
		return nil, fmt.Errorf("nvme: %s: %w", abs, err)
	}
	if err := syspath.Check(resolved, ErrSystemDir); err != nil {
		return nil, fmt.Errorf("nvme: %s links to %s: %w", abs, resolved, err)
	}
	b := &Backend{dir: abs, opt: opt, align: DefaultAlign, created: map[string]uint64{}, open: map[*Object]struct{}{}}
	if opt.Create {
		if b.made, err = makeDirs(abs); err != nil {
			return nil, err
		}
	} else {
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("nvme: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("nvme: %s: not a directory", abs)
		}
	}
	if err := b.probe(); err != nil {
		outfile.RemoveDirs(b.made)
		return nil, err
	}
	return b, nil
}

// probe finds the alignment and whether O_DIRECT works, with a dot-file
// (a name FileName never returns).
func (b *Backend) probe() error {
	f, err := os.CreateTemp(b.dir, ".kvbench-probe-*")
	if err != nil {
		return fmt.Errorf("nvme: probe %s: %w", b.dir, err)
	}
	name := f.Name()
	f.Close()
	defer os.Remove(name)

	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, name, 0, unix.STATX_DIOALIGN, &stx) == nil && stx.Mask&unix.STATX_DIOALIGN != 0 {
		for _, a := range []uint32{stx.Dio_mem_align, stx.Dio_offset_align} {
			if a > 0 && a&(a-1) == 0 && int(a) > b.align {
				b.align = int(a)
			}
		}
	}
	fstype := host.FSType(b.dir)
	direct, warning, err := backend.DirectIO("nvme: "+b.dir, fstype, b.opt.Direct, func() (bool, error) {
		if b.opt.refuseDirect {
			return true, nil
		}
		refused, err := probeDirect(name, b.align)
		if err != nil {
			return false, fmt.Errorf("nvme: probe %s: %w", b.dir, err)
		}
		return refused, nil
	})
	if err != nil {
		return err
	}
	if b.direct = direct; !direct {
		b.warnings = append(b.warnings, warning)
	}
	return nil
}

// probeDirect opens name with O_DIRECT and writes one aligned block: it
// reports whether the file system refused either (EINVAL).
func probeDirect(name string, align int) (refused bool, err error) {
	f, err := os.OpenFile(name, os.O_RDWR|unix.O_DIRECT, 0)
	if errors.Is(err, syscall.EINVAL) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.WriteAt(backend.AlignedBuffer(align, align), 0)
	if errors.Is(err, syscall.EINVAL) {
		return true, nil
	}
	return false, err
}

// Dir returns the backend's directory, absolute.
func (b *Backend) Dir() string { return b.dir }

// Caps reports Name "nvme", the alignment, whether I/O is direct, and the
// fallback warning if any. Capacity is 0: the file system's free space is
// not the backend's to promise (the engine's --capacity bounds the tier).
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{
		Name:     "nvme",
		Align:    b.align,
		Direct:   b.direct,
		Warnings: append([]string(nil), b.warnings...),
	}
}

// Open opens the file of key. With create it is created or truncated and
// size bytes are allocated (fallocate; where the file system cannot, the
// file is only extended), so that writes do not allocate; ENOSPC there
// fails the create, leaving no file, with an error that matches both
// backend.ErrNoSpace and syscall.ENOSPC. size must be a multiple of
// Caps().Align (ErrMisaligned). Without create, the file must exist
// (ErrNotFound) and hold size bytes.
func (b *Backend) Open(key string, size int64, create bool) (backend.Object, error) {
	if err := backend.CheckOpen(key, size, b.align, create); err != nil {
		return nil, fmt.Errorf("nvme: %w", err)
	}
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("nvme: open %q: %w", key, backend.ErrClosed)
	}
	name := FileName(key)
	path := filepath.Join(b.dir, name)
	flags := unix.O_RDWR
	if create {
		flags |= unix.O_CREAT | unix.O_TRUNC
	}
	if b.direct {
		flags |= unix.O_DIRECT
	}
	f, err := openFile(path, flags)
	if err != nil {
		if !create && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("nvme: open %q (%s): %w", key, path, backend.ErrNotFound)
		}
		return nil, fmt.Errorf("nvme: open %q: %w", key, sysErr(err))
	}
	if create {
		if err := allocate(f, size); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("nvme: allocate %d bytes for %q (%s): %w", size, key, path, err)
		}
	} else {
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("nvme: open %q: %w", key, sysErr(err))
		}
		if !fi.Mode().IsRegular() || fi.Size() != size {
			f.Close()
			return nil, fmt.Errorf("nvme: open %q of %d bytes: %s is a %s of %d bytes", key, size, path, fileKind(fi), fi.Size())
		}
	}
	o := &Object{b: b, key: key, name: name, path: path, f: f, size: size}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		// Close ran meanwhile and did not see this file.
		f.Close()
		if create && !b.opt.Keep {
			os.Remove(path)
		}
		return nil, fmt.Errorf("nvme: open %q: %w", key, backend.ErrClosed)
	}
	if create {
		b.gen++
		b.created[name] = b.gen
	}
	o.gen = b.created[name]
	b.open[o] = struct{}{}
	return o, nil
}

// openFile opens path as os.OpenFile does, in one system call (and an
// fcntl in os.NewFile) where os.OpenFile makes six: it tries every file it
// opens in the runtime's poller, which refuses regular files, so it sets
// O_NONBLOCK, fails epoll_ctl and clears O_NONBLOCK again, four fcntl and
// an epoll_ctl for nothing on each object's every open.
func openFile(path string, flags int) (*os.File, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != unix.EINTR {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

func fileKind(fi fs.FileInfo) string {
	if fi.Mode().IsRegular() {
		return "file"
	}
	return "non-regular file (" + fi.Mode().Type().String() + ")"
}

// allocate reserves size bytes for f: fallocate, or where the file system
// does not offer it, ftruncate.
func allocate(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Fallocate(int(fd), 0, 0, size)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	switch {
	case ferr == nil:
		return nil
	case errors.Is(ferr, unix.EOPNOTSUPP) || errors.Is(ferr, unix.ENOSYS):
		return sysErr(f.Truncate(size))
	default:
		return sysErr(ferr)
	}
}

// Close closes the backend's open Objects and, unless Keep, removes the
// files it created and, with Create, its directory.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("nvme: close %s: %w", b.dir, backend.ErrClosed)
	}
	b.closed = true
	open, created := b.open, b.created
	b.open, b.created = nil, nil
	b.mu.Unlock()

	for o := range open {
		o.closed.Store(true)
		o.f.Close()
	}
	if b.opt.Keep {
		return nil
	}
	failed, first := removeFiles(b.dir, created)
	if b.opt.Create {
		if len(b.made) == 0 {
			outfile.RemoveDirs([]string{b.dir})
		} else {
			outfile.RemoveDirs(b.made) // b.dir first
		}
	}
	if first != nil {
		return fmt.Errorf("nvme: close %s: %d files left behind, the first: %w", b.dir, failed, first)
	}
	return nil
}

// removeWorkers removes a run's files side by side: a file system's
// unlinks wait on its journal and free the files' blocks, and one after
// another they took 80 s for the 218 k objects of the MLPerf 8B trace on a
// virtual disk; 16 at a time take a fifth of that.
const removeWorkers = 16

// removeFiles removes the files named in dir, and returns how many it
// could not remove (one already gone is removed) and the first error.
func removeFiles(dir string, names map[string]uint64) (failed int, first error) {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	work := make(chan string, removeWorkers)
	for range min(removeWorkers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					mu.Lock()
					if failed++; first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	return failed, first
}

// Object is one open file of a Backend. Its methods are safe for
// concurrent use on different ranges.
//
// Besides backend.Object it is a backend.FdObject, for engines that issue
// I/O themselves (io_uring): an engine finds it by type assertion, so that
// decorators, which hide it, keep their meaning.
type Object struct {
	b      *Backend
	key    string
	name   string
	path   string
	f      *os.File
	size   int64
	gen    uint64 // the create this Object saw; 0 for a file found there
	closed atomic.Bool
}

var (
	_ backend.FdObject = (*Object)(nil)
	_ backend.Locator  = (*Object)(nil)
)

// Fd returns the file descriptor, open O_RDWR (and O_DIRECT when
// Caps().Direct). It stays valid until the Object or its Backend is
// closed; the caller must not close it. I/O through it must follow the
// same alignment rules.
func (o *Object) Fd() uintptr { return o.f.Fd() }

// Offset is 0: the object is the whole file.
func (o *Object) Offset() int64 { return 0 }

// Where names the object's file and the offset off in it, for messages.
func (o *Object) Where(off int64) string { return fmt.Sprintf("%s at offset %d", o.path, off) }

// check validates an I/O of len(p) bytes at off and returns how many of
// them lie inside the object.
func (o *Object) check(op string, p []byte, off int64) (int, error) {
	if o.closed.Load() {
		return 0, fmt.Errorf("nvme: %s %q (%s): %w", op, o.key, o.path, backend.ErrClosed)
	}
	n, err := backend.CheckIO(p, off, o.size, o.b.align, op == "write")
	if err != nil {
		return 0, fmt.Errorf("nvme: %s %q (%s): %w", op, o.key, o.path, err)
	}
	return n, nil
}

// ioErr wraps an error of pread, pwrite or fdatasync with the object, the
// file and the offset.
func (o *Object) ioErr(op string, off int64, err error) error {
	if errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("nvme: %s %q (%s): %w", op, o.key, o.path, backend.ErrClosed)
	}
	return fmt.Errorf("nvme: %s %q at offset %d (%s): %w", op, o.key, off, o.path, sysErr(err))
}

// rw runs pread or pwrite of p at off (repeated on short transfers and
// EINTR). A read that finds the file shorter than it was reads io.EOF.
func (o *Object) rw(op string, p []byte, off int64, write bool) (int, error) {
	var n int
	var err error
	if write {
		n, err = o.f.WriteAt(p, off)
	} else {
		n, err = o.f.ReadAt(p, off)
	}
	if err != nil && err != io.EOF {
		err = o.ioErr(op, off+int64(n), err)
	}
	return n, err
}

// ReadAt reads len(p) bytes at off of the object's own file, with pread
// (repeated on short reads and EINTR): io.EOF past the object's end, or
// where something else has cut the file short.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	return backend.ReadBlocks(p, off, o.check, o.rw)
}

// WriteAt writes p at off of the object's file, with pwrite (repeated on
// short writes and EINTR); it writes nothing and fails if p passes the
// size the object was opened with. ENOSPC matches both backend.ErrNoSpace
// and syscall.ENOSPC.
func (o *Object) WriteAt(p []byte, off int64) (int, error) {
	return backend.WriteBlocks(p, off, o.check, o.rw)
}

var _ backend.Syncer = (*Object)(nil)

// Sync makes the file's data durable (fdatasync).
func (o *Object) Sync() error {
	if o.closed.Load() {
		return fmt.Errorf("nvme: sync %q (%s): %w", o.key, o.path, backend.ErrClosed)
	}
	if err := backend.Fdatasync(o.f.Fd()); err != nil {
		return fmt.Errorf("nvme: sync %q (%s): %w", o.key, o.path, err)
	}
	return nil
}

// Close closes the file.
func (o *Object) Close() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("nvme: close %q (%s): %w", o.key, o.path, backend.ErrClosed)
	}
	b := o.b
	b.mu.Lock()
	delete(b.open, o)
	b.mu.Unlock()
	if err := o.f.Close(); err != nil {
		if errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("nvme: close %q (%s): %w", o.key, o.path, backend.ErrClosed)
		}
		return fmt.Errorf("nvme: close %q (%s): %w", o.key, o.path, sysErr(err))
	}
	return nil
}

// Remove closes and deletes the file, unless a create has replaced it
// since this Object was opened (then it only closes).
func (o *Object) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("nvme: remove %q (%s): %w", o.key, o.path, backend.ErrClosed)
	}
	b := o.b
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("nvme: remove %q (%s): %w", o.key, o.path, backend.ErrClosed)
	}
	delete(b.open, o)
	cur, ours := b.created[o.name]
	unlink := ours && cur == o.gen || !ours && o.gen == 0 // else replaced, or removed through another Object
	if ours && unlink {
		delete(b.created, o.name)
	}
	b.mu.Unlock()
	o.f.Close()
	if !unlink {
		return nil
	}
	// Unlinking a big file frees its extents, which takes a while: outside
	// the lock.
	if err := os.Remove(o.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("nvme: remove %q (%s): %w", o.key, o.path, sysErr(err))
	}
	return nil
}

// sysErr is backend.FileError: ENOSPC and EDQUOT match backend.ErrNoSpace.
func sysErr(err error) error { return backend.FileError(err) }
