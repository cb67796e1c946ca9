// Package backend is the contract between kvreplay's engine and its tier
// backends: Backend, Object, their declared Caps and the errors they
// return. It imports only the standard library, so a backend's dependency
// list shows nothing of the scheduler, the trace codec or the I/O engines
// (as pebble's vfs.FS is to its file systems).
//
// Two shapes of storage meet the contract. A block store (RAM, GPU
// memory, NVMe files and devices) serves Open, and the engine moves an
// object's bytes as aligned blocks through its Object's ReadAt and
// WriteAt; CheckIO, IsAligned and AlignedBuffer are the alignment rules
// every such backend and engine shares, ReadBlocks and WriteBlocks the
// body of its Object's ReadAt and WriteAt, and FileError, DirectIO and
// Fdatasync the rules of those on files and devices. An object store (S3) adds the
// optional ObjectStore capability: whole-object Put and Get, ranged
// GetRange and Delete, so that it needs no block layer. Further optional
// capabilities are found by type assertion: FdObject and Locator (an
// object in a file, for engines that submit I/O themselves), Syncer
// (durable writes). What a result records of a backend (its device, what
// it measured) it gives through replay/setup's Describer.
//
// Implementations live in packages under replay/ (ram, gpu, nvme, extent,
// null, fault; replay/arena is the memory arena ram and gpu share), each
// built from its row of replay/setup's factory table; a new tier is a new
// package and one row there. replay/replaytest holds the conformance
// suite every Backend passes.
package backend

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
	"time"
)

// Backend stores the objects of the tiers mapped to it: RAM, an NVMe
// directory, GPU memory, or a test double. The engine splits every object
// operation into I/Os of at most the block size, aligned to Caps().Align,
// and issues them concurrently, so a Backend and its Objects must be safe
// for concurrent use.
//
// The engine never imports an implementation: the main picks them.
type Backend interface {
	// Caps declares what the backend needs and offers.
	Caps() Caps
	// Open returns the object named key, of size bytes. With create it is
	// made (replacing any object of that name) and its space reserved;
	// without, it must exist (ErrNotFound otherwise). size is the physical
	// size, a multiple of Caps().Align.
	Open(key string, size int64, create bool) (Object, error)
	// Close releases the backend and, unless it was told to keep them,
	// everything it created.
	Close() error
}

// Object is one open object of a Backend. ReadAt and WriteAt move whole
// aligned blocks: p's address, length and off are multiples of
// Caps().Align. They may be called concurrently on different ranges.
type Object interface {
	io.ReaderAt
	io.WriterAt
	// Close ends this use of the object; the data stays.
	Close() error
	// Remove deletes the object and frees its space; the Object is closed.
	Remove() error
}

// Caps are a backend's declared capabilities, so the engine adapts instead
// of finding out by trial and error (as fio's engines declare theirs).
type Caps struct {
	// Name is the backend's kind: "ram", "nvme", "null", "gpu", ...
	Name string
	// Align is the alignment of buffers, offsets and lengths, in bytes (a
	// power of two; 1 when anything goes).
	Align int
	// Capacity is the most bytes the backend can hold; 0 when unbounded.
	Capacity int64
	// Direct reports that I/O bypasses the page cache (O_DIRECT).
	Direct bool
	// Device reports that the backend's memory is not host memory (GPU).
	Device bool
	// NoData reports that the backend keeps no bytes (the null backend):
	// the engine then does no data work for it at all (no generation, no
	// copy, no I/O), so a replay on it measures the engine alone.
	NoData bool
	// FastMeta reports that Open and Remove are in-memory bookkeeping that
	// never blocks (RAM, null, the extent layout's allocator): the engine
	// calls them on its scheduling goroutine, and keeps an object's Object
	// open from its creation until it is replaced or removed, for every
	// read of it meanwhile, concurrent reads sharing it. Otherwise (a file
	// per object) they run on a pool of goroutines beside it, and every
	// operation opens and closes its Object.
	FastMeta bool
	// Warnings are conditions a result must report, such as a fallback to
	// buffered I/O on a file system without O_DIRECT.
	Warnings []string
}

// FdObject is the optional capability of an Object stored in a file or a
// block device: an I/O engine that submits I/O itself (io_uring) reads and
// writes the object's bytes at Offset()+off of the descriptor Fd(). The
// descriptor stays valid until the Object is closed.
type FdObject interface {
	Object
	Fd() uintptr
	// Offset is where the object starts in the file (0 for a file per
	// object).
	Offset() int64
}

// Locator is the optional capability of an Object stored in a file or on
// a block device: Where names, for messages, the file or device and the
// offset there of byte off of the object, such as
// "/mnt/nvme/kvreplay-1-x/2_a at offset 4096". An I/O engine that does
// the I/O itself (io_uring) names with it what an error hit.
type Locator interface {
	Where(off int64) string
}

// Rooted is the optional capability of a Backend whose objects lie in a
// file system: Root names the directory or the file that holds them, so
// that the error of a full file system (ENOSPC, EDQUOT) can say which one
// filled: its type, mount point and space (the replay engine adds them).
// A backend on a raw block device has no file system to name: its Root
// is "".
type Rooted interface {
	Root() string
}

// Syncer is an Object whose written bytes can be made durable: Sync
// returns once they are on stable storage (fdatasync of the object's file,
// or of the file or device that holds it, which flushes the device's
// volatile cache). It is an optional capability, found by type assertion:
// kvreplay --fsync calls it after each object write, as kv-cache.py
// fsyncs each object it saves; an Object without it (RAM, null) has
// nothing to make durable.
type Syncer interface {
	Sync() error
}

// FirstByteReader is an Object whose reads know when their first byte
// came: an object store's GET, whose response starts long before its last
// byte. It is an optional capability, found by type assertion: an engine
// reads such an Object with ReadAtFirstByte (ReadAt's contract, and the
// instant the first byte of p arrived, zero when unknown), and the replay
// records each read operation's time to first byte beside its latency.
type FirstByteReader interface {
	ReadAtFirstByte(p []byte, off int64) (n int, first time.Time, err error)
}

// Errors a Backend returns; test them with errors.Is.
var (
	// ErrNotFound: Open without create of an object that does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrNoSpace: the backend is full (its arena, or the disk: ENOSPC).
	ErrNoSpace = errors.New("no space left")
	// ErrMisaligned: a buffer, offset or length is not aligned as Caps
	// requires.
	ErrMisaligned = errors.New("misaligned I/O")
	// ErrClosed: the backend or object was used after Close.
	ErrClosed = errors.New("closed")
	// ErrStale: an Object was used after its object was removed or
	// replaced since it was opened (through another Object, or by a
	// create). It wraps ErrClosed: such an Object is closed to I/O.
	ErrStale = fmt.Errorf("removed or replaced since this Object was opened: %w", ErrClosed)
)

// FileError is for backends on files and devices: it strips err's
// *fs.PathError (callers name the file themselves) and makes ENOSPC and
// EDQUOT match ErrNoSpace as well as the errno. nil stays nil.
func FileError(err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return noSpaceError{err}
	}
	return err
}

// noSpaceError is a full file system: it reads as the errno, and matches
// both it and ErrNoSpace.
type noSpaceError struct{ errno error }

func (e noSpaceError) Error() string        { return e.errno.Error() }
func (e noSpaceError) Unwrap() error        { return e.errno }
func (e noSpaceError) Is(target error) bool { return target == ErrNoSpace }
