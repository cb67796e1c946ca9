// Package extent owns the Tier-2 (NVMe) replay backend in its extent
// layout (--layout extent, design section 5): every object lives in one
// preallocated file, or one raw block device, at an extent that an
// internal/extent Allocator places first fit by address. Opening, creating
// and removing an object touch only that map in memory: no file system
// metadata on the hot path, and an io_uring engine can reach every object
// through one file descriptor.
//
// I/O is pread/pwrite at the extent's offset plus the object's, through
// O_DIRECT where the file system allows it. Where it refuses (EINVAL, as
// tmpfs does before Linux 6.6), New falls back to buffered I/O and says so
// in Caps().Warnings, never silently; on tmpfs and ramfs, whose files are
// the page cache, it does so without trying. Alignment is 4096 bytes, or
// the larger direct-I/O alignment of the file system (statx
// STATX_DIOALIGN) or logical block size of the device (BLKSSZGET); it is
// enforced in buffered mode too, and a misaligned buffer, offset or length
// fails with backend.ErrMisaligned before any system call.
//
// Files under /, /etc, /usr, /bin, /sbin, /lib*, /boot, /proc, /sys and
// /dev (but /dev/shm) are refused, as the directory layout refuses them. A
// block device is refused unless Options.AllowDevice is set: its data is
// overwritten. With it, a block device under /dev is the one /dev path
// allowed; the device is opened exclusively (O_EXCL), so a mounted one, or
// one another program holds, fails with EBUSY.
//
// Placement is not persisted: a file kept with Options.Keep and opened
// again holds no objects, only preallocated space.
package extent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	alloc "github.com/kvbench/kvbench/internal/extent"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/syspath"
	"github.com/kvbench/kvbench/replay/backend"
)

// Errors of New; test them with errors.Is.
var (
	// ErrSystemPath: New was given a path in a system directory.
	ErrSystemPath = errors.New("refused: use a file on the drive under test")
	// ErrDevice: New was given a block device without AllowDevice.
	ErrDevice = errors.New("a raw block device: its data will be overwritten: pass --allow-device")
)

// DefaultAlign is the smallest alignment the backend declares.
const DefaultAlign = 4096

// Options configure New.
type Options struct {
	// Size is the bytes of the file: New creates it with Size bytes
	// preallocated (fallocate), rounded up to the alignment. For an
	// existing file, 0 means its size (rounded down to the alignment) and
	// a bigger Size extends it. For a block device, 0 means the whole
	// device (BLKGETSIZE64) and a smaller Size uses only its first Size
	// bytes.
	Size int64
	// Direct opens the file or device with O_DIRECT, bypassing the page
	// cache. Where the file system refuses it, I/O is buffered and
	// Caps().Warnings says so. Without Direct, I/O is buffered and
	// Caps().Warnings says that too.
	Direct bool
	// Keep leaves the file New created in place on Close. A file that
	// existed, and a device, are never removed.
	Keep bool
	// AllowDevice lets the path be a raw block device, whose data the
	// replay overwrites.
	AllowDevice bool
	// Prewrite writes what New preallocates (all of a new file, the
	// extension of a shorter one) once before New returns, with O_DIRECT
	// when Direct, then syncs it: the replay's first write of a block then
	// overwrites written blocks, as every later write does, instead of
	// measuring the file system's conversion of an unwritten extent (or a
	// sparse file's allocation). Without it, Caps().Warnings says so. A
	// device and a file's existing bytes are never prewritten.
	Prewrite bool
	// OnPrewrite, when set, is called once before the prewrite starts,
	// after the path was checked and the file preallocated, with the
	// bytes about to be written: a caller says there what the wait is.
	OnPrewrite func(bytes int64)
	// Objects, when not 0, is about how many objects will be live at
	// once: the object table is made that large up front rather than
	// grown (and rehashed) while the replay runs.
	Objects int

	// refuseDirect makes New act as if the file system refused O_DIRECT
	// (tests of the fallback where every file system accepts it).
	refuseDirect bool
}

// Backend is the extent layout of the NVMe tier. It is safe for
// concurrent use; so are its Objects, but operations on one key that run
// at once (a create and a Remove of it, say) happen in no defined order:
// the caller orders them, as the engine does. Close must be called.
//
// Besides backend.Backend it offers Fd, and its Objects Fd and Offset:
// optional capabilities for engines that issue I/O themselves (io_uring),
// found by type assertion, obj.(interface{ Fd() uintptr; Offset() int64 }),
// so that decorators, which hide them, keep their meaning.
type Backend struct {
	path     string // absolute, as given
	file     string // path for messages: with what it resolves to, when different
	f        *os.File
	fd       uintptr
	device   bool
	created  bool // New created the file: Close removes it unless keep
	keep     bool
	capacity int64
	prealloc int64 // where the range New preallocated starts; capacity when none
	align    int
	direct   bool
	warnings []string
	// grownFrom is the size of an existing file that New extends, which
	// a failed New gives back (-1 when New extends none).
	grownFrom int64

	closed atomic.Bool
	// mu guards objs and alloc. I/O runs outside it.
	mu    sync.Mutex
	objs  map[string]*place
	alloc *alloc.Allocator
}

// place is one object's extent of the file.
type place struct {
	off, size int64
	// io is held for reading by every I/O into the extent and for writing
	// when the object is removed or replaced, so that no I/O of a stale
	// Object lands in space given to another. gone is guarded by io.
	io   sync.RWMutex
	gone bool
}

var _ backend.Backend = (*Backend)(nil)

var _ backend.Rooted = (*Backend)(nil)

// Root is the extent file; "" on a block device, which holds no file
// system.
func (b *Backend) Root() string {
	if b.device {
		return ""
	}
	return b.path
}

// New is NewContext with a context that is never cancelled.
func New(path string, opt Options) (*Backend, error) {
	return NewContext(context.Background(), path, opt)
}

// NewContext opens the file or block device at path as a backend,
// creating the file when it does not exist; see Options. Cancelling ctx
// stops the preallocation and the prewrite of a new file between chunks
// (within one write of a few MiB): NewContext then removes the file it
// created, the moment ctx is done rather than after the writes in flight,
// and returns an error that matches ctx.Err(). A failed NewContext cuts
// an existing file it extended back to its size.
func NewContext(ctx context.Context, path string, opt Options) (*Backend, error) {
	if path == "" {
		return nil, errors.New("extent: empty path")
	}
	if opt.Size < 0 {
		return nil, fmt.Errorf("extent: %s: size %d: must not be negative", path, opt.Size)
	}
	// As the kernel reads it (syspath.Abs): cleaned, "nodir/../t.csv"
	// would be ./t.csv, which may be the trace, while the checks before
	// (a stat) found nothing there.
	abs, err := syspath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("extent: %s: %w", path, err)
	}
	resolved, err := syspath.Resolve(abs)
	if err != nil {
		return nil, fmt.Errorf("extent: %s: %w", abs, err)
	}
	name := abs
	if resolved != abs {
		name = fmt.Sprintf("%s (%s)", abs, resolved)
	}
	b := &Backend{path: abs, file: name, keep: opt.Keep, align: DefaultAlign, grownFrom: -1, objs: make(map[string]*place, max(0, opt.Objects))}
	fi, statErr := os.Stat(resolved)
	exists := statErr == nil
	if exists && fi.Mode().Type() == fs.ModeDevice {
		if !opt.AllowDevice {
			return nil, fmt.Errorf("extent: %s: %w", name, ErrDevice)
		}
		// A device under /dev is the one path there that is allowed.
		if dir := filepath.Dir(resolved); dir != "/dev" && !strings.HasPrefix(dir, "/dev/") {
			if err := syspath.Check(dir, ErrSystemPath); err != nil {
				return nil, fmt.Errorf("extent: %s: %w", name, err)
			}
		}
		b.device = true
	} else {
		for _, p := range []string{abs, resolved} {
			if err := syspath.Check(filepath.Dir(p), ErrSystemPath); err != nil {
				return nil, fmt.Errorf("extent: %s: %w", name, err)
			}
		}
	}
	switch {
	case exists && fi.IsDir():
		return nil, fmt.Errorf("extent: %s: a directory: the extent layout needs a file or a block device", name)
	case exists && !b.device && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("extent: %s: a %s, not a regular file nor a block device", name, kind(fi.Mode()))
	case !exists && !errors.Is(statErr, fs.ErrNotExist):
		return nil, fmt.Errorf("extent: %w", statErr)
	case !exists && opt.Size == 0:
		return nil, fmt.Errorf("extent: %s: a new file needs a size", name)
	}
	// A new file goes as soon as ctx is done: a second ^C, which kills
	// the process, finds nothing left of it to remove.
	unlink := func() bool { return true }
	err = b.open(ctx, opt, exists, func() {
		unlink = context.AfterFunc(ctx, func() { os.Remove(b.path) })
	})
	// Stopped either way: once New returns, the path is no longer its
	// to remove (a failed New removes its file below, and the path may
	// hold another's file when ctx ends).
	if stopped := unlink(); err == nil && !stopped {
		err = fmt.Errorf("extent: %s: %w", b.file, ctx.Err()) // and the file is gone
	}
	if err != nil {
		if b.f != nil {
			if b.grownFrom >= 0 && !b.created {
				// What New added to an existing file (a failed or stopped
				// preallocation or prewrite) goes with it.
				b.f.Truncate(b.grownFrom)
			}
			b.f.Close()
		}
		if b.created {
			os.Remove(b.path)
		}
		return nil, err
	}
	b.alloc = alloc.New(b.capacity, int64(b.align))
	return b, nil
}

// kind names a file's type for messages.
func kind(m fs.FileMode) string {
	switch m.Type() {
	case fs.ModeNamedPipe:
		return "named pipe"
	case fs.ModeSocket:
		return "socket"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "character device"
	case fs.ModeIrregular:
		return "irregular file"
	}
	return "file of mode " + m.String()
}

// open opens (or creates) the file or device, sizes it, finds the
// alignment and sets up O_DIRECT; created is called once it created the
// file.
func (b *Backend) open(ctx context.Context, opt Options, exists bool, created func()) error {
	var err error
	switch {
	case b.device:
		b.f, err = os.OpenFile(b.path, os.O_RDWR|os.O_EXCL, 0)
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("extent: %s: in use (mounted, or held by another program): %w", b.file, err)
		}
	case exists:
		b.f, err = os.OpenFile(b.path, os.O_RDWR, 0)
	default:
		b.f, err = os.OpenFile(b.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if b.created = err == nil; b.created {
			created()
		}
	}
	if err != nil {
		return fmt.Errorf("extent: %w", err)
	}
	rc, err := b.f.SyscallConn()
	if err != nil {
		return fmt.Errorf("extent: %s: %w", b.file, err)
	}
	if err := rc.Control(func(fd uintptr) { b.fd = fd }); err != nil {
		return fmt.Errorf("extent: %s: %w", b.file, err)
	}
	fd := int(b.fd)

	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx) == nil && stx.Mask&unix.STATX_DIOALIGN != 0 {
		for _, a := range []uint32{stx.Dio_mem_align, stx.Dio_offset_align} {
			if a > 0 && a&(a-1) == 0 && int(a) > b.align {
				b.align = int(a)
			}
		}
	}
	fstype := "block device"
	if b.device {
		if err := b.sizeDevice(opt.Size); err != nil {
			return err
		}
	} else {
		fstype = host.FSType(b.path)
		if err := b.sizeFile(ctx, opt.Size, fstype); err != nil {
			return err
		}
	}
	if b.capacity <= 0 {
		return fmt.Errorf("extent: %s: %d bytes: no room for one block of %d", b.file, b.capacity, b.align)
	}
	if err := b.setDirect(opt, fstype); err != nil {
		return err
	}
	if b.device || b.prealloc >= b.capacity || backend.MemoryFS(fstype) {
		return nil // nothing preallocated, or memory with no extents to convert
	}
	if !opt.Prewrite {
		b.warnings = append(b.warnings, fmt.Sprintf("extent: %s: %d bytes preallocated and not written before the replay: the first write of each block includes the file system's allocation of it (unwritten extents)", b.file, b.capacity-b.prealloc))
		return nil
	}
	if opt.OnPrewrite != nil {
		opt.OnPrewrite(b.capacity - b.prealloc)
	}
	return b.prewrite(ctx)
}

// prewriteChunk and prewriteJobs shape the prewrite: a few large writes in
// flight, enough to keep a drive busy.
const (
	prewriteChunk = 4 << 20
	prewriteJobs  = 4
)

// prewrite writes [prealloc, capacity) once, with incompressible bytes,
// and syncs the file. It stops when ctx is done, after the writes in
// flight (one chunk each). Buffered, each chunk is written back before the
// next (sync_file_range), so that the final sync has little left to do and
// an interrupted prewrite no backlog of dirty pages to wait for.
func (b *Backend) prewrite(ctx context.Context) error {
	chunk := int64(prewriteChunk) / int64(b.align) * int64(b.align)
	next := make(chan int64)
	errs := make(chan error, prewriteJobs)
	var wg sync.WaitGroup
	for j := range prewriteJobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := backend.AlignedBuffer(int(chunk), b.align)
			base := make([]byte, chunk)
			rng := rand.NewChaCha8([32]byte{byte(j), 'k', 'v', 'b'})
			rng.Read(base)
			for off := range next {
				start, p := off, buf[:min(chunk, b.capacity-off)]
				prewriteBytes(p, base, off)
				for len(p) > 0 {
					n, err := unix.Pwrite(int(b.fd), p, off)
					if err == unix.EINTR {
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("extent: prewrite %s at offset %d: %w", b.file, off, sysErr(err))
						return
					}
					p, off = p[n:], off+int64(n)
				}
				if !b.direct {
					// Best effort: the final fdatasync still makes it durable.
					unix.SyncFileRange(int(b.fd), start, off-start,
						unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
				}
			}
		}()
	}
	var err error
feed:
	for off := b.prealloc; off < b.capacity; off += chunk {
		if ctx.Err() == nil {
			select {
			case next <- off:
				continue
			case err = <-errs:
				break feed
			case <-ctx.Done():
			}
		}
		err = fmt.Errorf("extent: prewrite %s: stopped before offset %d of %d: %w", b.file, off, b.capacity, ctx.Err())
		break
	}
	close(next)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	if err != nil {
		return err
	}
	if err := backend.Fdatasync(b.fd); err != nil {
		return fmt.Errorf("extent: prewrite %s: sync: %w", b.file, err)
	}
	if !b.direct {
		// Buffered: what the prewrite left cached would serve the replay.
		unix.Fadvise(int(b.fd), b.prealloc, b.capacity-b.prealloc, unix.FADV_DONTNEED)
	}
	return nil
}

// sizeDevice finds the device's size and logical block size.
func (b *Backend) sizeDevice(want int64) error {
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, b.fd, unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); errno != 0 {
		return fmt.Errorf("extent: %s: the device's size (BLKGETSIZE64): %w", b.file, errno)
	}
	if lbs, err := unix.IoctlGetInt(int(b.fd), unix.BLKSSZGET); err == nil && lbs > b.align && lbs&(lbs-1) == 0 {
		b.align = lbs
	}
	b.capacity = int64(size)
	if want > b.capacity {
		return fmt.Errorf("extent: %s: size %d: the device has %d bytes", b.file, want, size)
	}
	if want > 0 {
		b.capacity = want
	}
	b.capacity = b.capacity / int64(b.align) * int64(b.align)
	return nil
}

// fallocateChunk bounds one fallocate call, so that a preallocation of
// terabytes (which some file systems take seconds over) can be stopped.
const fallocateChunk = 1 << 30

// sizeFile preallocates the file: want bytes rounded up to the alignment,
// or when want is 0 its present size rounded down. It stops between
// chunks of fallocateChunk bytes when ctx is done.
func (b *Backend) sizeFile(ctx context.Context, want int64, fstype string) error {
	fi, err := b.f.Stat()
	if err != nil {
		return fmt.Errorf("extent: %s: %w", b.file, err)
	}
	if !fi.Mode().IsRegular() {
		// Replaced since New looked at it.
		return fmt.Errorf("extent: %s: a %s, not a regular file nor a block device", b.file, kind(fi.Mode()))
	}
	a := int64(b.align)
	if want > 0 {
		b.capacity = (want + a - 1) / a * a
	} else {
		b.capacity = fi.Size() / a * a
	}
	if b.capacity <= 0 {
		return fmt.Errorf("extent: %s: an empty file: give a size", b.file)
	}
	b.prealloc = min(fi.Size()/a*a, b.capacity)
	if fi.Size() < b.capacity {
		b.grownFrom = fi.Size()
	}
	// In chunks, a size the file system cannot hold would be allocated
	// up to its last free block before failing: refuse it first, as one
	// fallocate call does.
	var st unix.Statfs_t
	if unix.Fstatfs(int(b.fd), &st) == nil && st.Bsize > 0 {
		held := int64(0)
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			held = sys.Blocks * 512
		}
		if free := usable(&st, os.Geteuid() == 0); b.capacity-held > free {
			return fmt.Errorf("extent: preallocate %d bytes for %s (the file system has %d bytes available): %w", b.capacity, b.file, int64(st.Bavail)*st.Bsize, sysErr(unix.ENOSPC))
		}
	}
	// Mode 0 allocates the blocks of any hole and extends the file when
	// it is shorter, so that writes allocate nothing.
	for off := int64(0); off < b.capacity && err == nil; {
		if ctx.Err() != nil {
			return fmt.Errorf("extent: preallocate %d bytes for %s: stopped at %d: %w", b.capacity, b.file, off, ctx.Err())
		}
		n := min(fallocateChunk, b.capacity-off)
		if err = unix.Fallocate(int(b.fd), 0, off, n); err == nil {
			off += n
		} else if err == unix.EINTR {
			err = nil
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		b.warnings = append(b.warnings, fmt.Sprintf("extent: %s (%s): no fallocate: a sparse file, whose first writes allocate blocks", b.file, fstype))
		if fi.Size() < b.capacity {
			if err := b.f.Truncate(b.capacity); err != nil {
				return fmt.Errorf("extent: extend %s to %d bytes: %w", b.file, b.capacity, sysErr(err))
			}
		}
		return nil
	default:
		avail := ""
		var st unix.Statfs_t
		if unix.Fstatfs(int(b.fd), &st) == nil {
			avail = fmt.Sprintf(" (the file system has %d bytes available)", int64(st.Bavail)*st.Bsize)
		}
		return fmt.Errorf("extent: preallocate %d bytes for %s%s: %w", b.capacity, b.file, avail, sysErr(err))
	}
}

// setDirect turns O_DIRECT on (fcntl F_SETFL) where asked and allowed,
// by backend.DirectIO's rule.
func (b *Backend) setDirect(opt Options, fstype string) error {
	direct, warning, err := backend.DirectIO("extent: "+b.file, fstype, opt.Direct, func() (bool, error) {
		if opt.refuseDirect {
			return true, nil
		}
		return b.probeDirect()
	})
	if err != nil {
		return err
	}
	if b.direct = direct; !direct {
		b.warnings = append(b.warnings, warning)
	}
	return nil
}

// probeDirect sets O_DIRECT on the descriptor and reads one block, which
// writes nothing: it reports whether the file system refused (EINVAL),
// and then turns O_DIRECT off again.
func (b *Backend) probeDirect() (refused bool, err error) {
	fl, err := unix.FcntlInt(b.fd, unix.F_GETFL, 0)
	if err != nil {
		return false, fmt.Errorf("extent: %s: %w", b.file, err)
	}
	_, err = unix.FcntlInt(b.fd, unix.F_SETFL, fl|unix.O_DIRECT)
	if err == nil {
		buf := backend.AlignedBuffer(b.align, b.align)
		for {
			_, err = unix.Pread(int(b.fd), buf, 0)
			if err != unix.EINTR {
				break
			}
		}
	}
	switch {
	case errors.Is(err, unix.EINVAL):
		if _, err := unix.FcntlInt(b.fd, unix.F_SETFL, fl); err != nil {
			return false, fmt.Errorf("extent: %s: %w", b.file, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("extent: probe O_DIRECT on %s: %w", b.file, err)
	}
	return false, nil
}

// Path returns the file or device, absolute, as New was given it.
func (b *Backend) Path() string { return b.path }

// Fd returns the file descriptor of the file or device, open O_RDWR (and
// O_DIRECT when Caps().Direct), through which every object is read and
// written at its Offset. It stays valid until Close; the caller must not
// close it, and I/O through it must follow Caps().Align and stay within
// the extents of live objects.
func (b *Backend) Fd() uintptr { return b.fd }

// Caps reports Name "extent", the alignment, the size of the file or
// device as Capacity, whether I/O is direct, and the warnings if any.
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{
		Name:     "extent",
		Align:    b.align,
		Capacity: b.capacity,
		Direct:   b.direct,
		FastMeta: true,
		Warnings: append([]string(nil), b.warnings...),
	}
}

// Stats are an extent backend's occupancy: its allocator's over the
// file's or device's size (LargestFree is the largest object that fits
// now) and its objects.
type Stats struct {
	alloc.Stats
	Objects int
}

// Stats returns the backend's occupancy now.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Stats: b.alloc.Stats(), Objects: len(b.objs)}
}

// Open returns the object named key. With create it allocates size bytes
// (a multiple of Caps().Align, else backend.ErrMisaligned) of the file,
// first releasing any object of that name, so a failed replacement leaves
// no object; backend.ErrNoSpace, with the free bytes and the largest free
// extent, when no free extent holds size: fragmentation can refuse an
// object smaller than the free bytes. The new object's bytes are whatever
// the file held. Without create, the object must exist (ErrNotFound) and
// have size bytes.
func (b *Backend) Open(key string, size int64, create bool) (backend.Object, error) {
	if err := backend.CheckOpen(key, size, b.align, create); err != nil {
		return nil, fmt.Errorf("extent: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, fmt.Errorf("extent: open %q: %w", key, backend.ErrClosed)
	}
	if !create {
		p := b.objs[key]
		if p == nil {
			return nil, fmt.Errorf("extent: open %q: %w", key, backend.ErrNotFound)
		}
		if p.size != size {
			return nil, fmt.Errorf("extent: open %q of %d bytes: the object has %d", key, size, p.size)
		}
		return &Object{b: b, key: key, p: p}, nil
	}
	if old := b.objs[key]; old != nil {
		delete(b.objs, key)
		if err := b.releaseLocked(old); err != nil {
			return nil, err
		}
	}
	off, err := b.alloc.Alloc(size)
	if errors.Is(err, alloc.ErrNoSpace) {
		return nil, fmt.Errorf("extent: create %q of %d bytes: %d bytes free, largest free extent %d bytes (%s, %d bytes): %w",
			key, size, b.alloc.FreeBytes(), b.alloc.LargestFree(), b.file, b.capacity, backend.ErrNoSpace)
	}
	if err != nil {
		return nil, fmt.Errorf("extent: create %q: %w", key, err)
	}
	p := &place{off: off, size: size}
	b.objs[key] = p
	return &Object{b: b, key: key, p: p}, nil
}

// releaseLocked retires p, after any I/O into it, and frees its extent;
// b.mu is held.
func (b *Backend) releaseLocked(p *place) error {
	p.io.Lock()
	p.gone = true
	p.io.Unlock()
	if err := b.alloc.Free(p.off, p.size); err != nil {
		return fmt.Errorf("extent: %w", err)
	}
	return nil
}

// Close closes the file or device and, unless Keep, removes the file New
// created. I/O in flight finishes first; the backend and its Objects then
// fail with backend.ErrClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("extent: close %s: %w", b.file, backend.ErrClosed)
	}
	b.objs = nil
	err := b.f.Close()
	if err != nil {
		err = fmt.Errorf("extent: close %s: %w", b.file, sysErr(err))
	}
	if b.created && !b.keep {
		if rerr := os.Remove(b.path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("extent: remove %s: %w", b.file, sysErr(rerr))
		}
	}
	return err
}

// Object is one open object of a Backend. Its methods are safe for
// concurrent use on different ranges.
//
// Besides backend.Object it offers Fd and Offset, optional capabilities for
// engines that issue I/O themselves (io_uring): byte off of the object is
// byte Offset()+off of Fd().
type Object struct {
	b      *Backend
	key    string
	p      *place
	closed atomic.Bool
}

var (
	_ backend.FdObject = (*Object)(nil)
	_ backend.Locator  = (*Object)(nil)
)

// Fd returns the backend's file descriptor (see Backend.Fd).
func (o *Object) Fd() uintptr { return o.b.fd }

// Offset returns where the object's extent starts in the file or device,
// a multiple of Caps().Align. I/O through Fd must stay within [Offset(),
// Offset()+size), and end before the object is removed or replaced: its
// extent may then be given to another object.
func (o *Object) Offset() int64 { return o.p.off }

// Where names the file or device and the offset there of the object's
// byte off, for messages.
func (o *Object) Where(off int64) string {
	return fmt.Sprintf("%s at offset %d", o.b.file, o.p.off+off)
}

// check validates an I/O of len(p) bytes at off and returns how many of
// them lie inside the object.
func (o *Object) check(op string, p []byte, off int64) (int, error) {
	if o.closed.Load() || o.b.closed.Load() {
		return 0, fmt.Errorf("extent: %s %q: %w", op, o.key, backend.ErrClosed)
	}
	n, err := backend.CheckIO(p, off, o.p.size, o.b.align, op == "write")
	if err != nil {
		return 0, fmt.Errorf("extent: %s %q: %w", op, o.key, err)
	}
	return n, nil
}

// rw runs pread or pwrite of p at the object's offset off, holding the
// extent against release.
func (o *Object) rw(op string, p []byte, off int64, write bool) (int, error) {
	o.p.io.RLock()
	defer o.p.io.RUnlock()
	if o.p.gone {
		return 0, fmt.Errorf("extent: %s %q: %w", op, o.key, backend.ErrStale)
	}
	at := o.p.off + off
	var n int
	var err error
	if write {
		n, err = o.b.f.WriteAt(p, at)
	} else {
		n, err = o.b.f.ReadAt(p, at)
	}
	if err != nil {
		return n, o.ioErr(op, off+int64(n), at+int64(n), err)
	}
	return n, nil
}

// ioErr wraps an error of pread or pwrite with the object, its offset and
// the file's.
func (o *Object) ioErr(op string, off, at int64, err error) error {
	switch {
	case errors.Is(err, os.ErrClosed):
		return fmt.Errorf("extent: %s %q: %w", op, o.key, backend.ErrClosed)
	case errors.Is(err, io.EOF):
		// The file is shorter than it was when New sized it.
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("extent: %s %q at offset %d (%s at %d): %w", op, o.key, off, o.b.file, at, sysErr(err))
}

// ReadAt reads len(p) bytes at off of the object's extent in the shared
// file or device, with pread (repeated on short reads and EINTR): io.EOF
// past the object's end, io.ErrUnexpectedEOF where the file has become
// shorter than New sized it.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	return backend.ReadBlocks(p, off, o.check, o.rw)
}

// WriteAt writes p at off of the object's extent, with pwrite (repeated
// on short writes and EINTR); it writes nothing and fails if p passes the
// object's end, into the next extent. ENOSPC (a sparse file on a full file
// system) matches both backend.ErrNoSpace and syscall.ENOSPC.
func (o *Object) WriteAt(p []byte, off int64) (int, error) {
	return backend.WriteBlocks(p, off, o.check, o.rw)
}

var _ backend.Syncer = (*Object)(nil)

// Sync makes the written data of the whole file or device durable
// (fdatasync): the extent layout has one descriptor, so a sync flushes
// every object's writes, not only this one's.
func (o *Object) Sync() error {
	if o.closed.Load() || o.b.closed.Load() {
		return fmt.Errorf("extent: sync %q: %w", o.key, backend.ErrClosed)
	}
	if err := backend.Fdatasync(o.b.fd); err != nil {
		return fmt.Errorf("extent: sync %q (%s): %w", o.key, o.b.file, err)
	}
	return nil
}

// Close ends this use of the object.
func (o *Object) Close() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("extent: close %q: %w", o.key, backend.ErrClosed)
	}
	return nil
}

// Remove frees the object's extent (unless a create has replaced the
// object since this Object was opened) and closes the Object.
func (o *Object) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("extent: remove %q: %w", o.key, backend.ErrClosed)
	}
	b := o.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return fmt.Errorf("extent: remove %q: %w", o.key, backend.ErrClosed)
	}
	if b.objs[o.key] != o.p {
		return nil // already removed or replaced through another Object
	}
	delete(b.objs, o.key)
	return b.releaseLocked(o.p)
}

// sysErr is backend.FileError: ENOSPC and EDQUOT match backend.ErrNoSpace.
func sysErr(err error) error { return backend.FileError(err) }

// usable is the space st's file system gives a preallocation: its free
// blocks for root, which may use the blocks reserved for it, and the
// blocks available to others (Bavail) for anyone else, whose fallocate
// fails with ENOSPC once those are gone.
func usable(st *unix.Statfs_t, root bool) int64 {
	blocks := st.Bavail
	if root {
		blocks = st.Bfree
	}
	if st.Bsize <= 0 {
		return 0
	}
	return int64(min(blocks, uint64(math.MaxInt64/st.Bsize))) * st.Bsize
}
