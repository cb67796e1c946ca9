package backend

import (
	"fmt"
	"io"
	"unsafe"
)

// CheckIO validates an I/O of len(p) bytes at off on an object of size
// bytes whose backend declares Caps().Align = align, before any byte
// moves: it fails with ErrMisaligned when p's address, its length or off
// is not a multiple of align (align <= 1 accepts anything), on a negative
// off, and for a write (write set) that passes the object's end: a write
// moves all of p or nothing. Otherwise it returns how many of p's bytes
// lie inside the object: 0 at or past its end (a read there reads io.EOF).
// The error names the I/O, not the object: the backend wraps it with its
// name, the operation and the object.
func CheckIO(p []byte, off, size int64, align int, write bool) (int, error) {
	if !IsAligned(p, off, align) {
		return 0, fmt.Errorf("%d bytes at offset %d, buffer %p, alignment %d: %w", len(p), off, unsafe.SliceData(p), align, ErrMisaligned)
	}
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	n := int(max(0, min(int64(len(p)), size-off)))
	if write && n < len(p) {
		return 0, fmt.Errorf("%d bytes at offset %d pass the end of the object (%d bytes)", len(p), off, size)
	}
	return n, nil
}

// CheckOpen validates the size of an Open of the object named key, before
// anything else: a negative size fails, and so, with create, does one that
// is not a multiple of align, the backend's Caps().Align (ErrMisaligned;
// align <= 1 accepts any). The error names the operation and key: the
// backend wraps it with its name.
func CheckOpen(key string, size int64, align int, create bool) error {
	if size < 0 {
		return fmt.Errorf("open %q: negative size %d", key, size)
	}
	if create && align > 1 && size%int64(align) != 0 {
		return fmt.Errorf("create %q: size %d is not a multiple of %d: %w", key, size, align, ErrMisaligned)
	}
	return nil
}

// CheckFunc is a block store Object's check of an I/O named op ("read" or
// "write") of p at off, before any byte moves: the Object's own state
// (closed, removed) and then CheckIO. It returns how many of p's bytes lie
// inside the object; its errors name the backend, op and the object.
type CheckFunc func(op string, p []byte, off int64) (int, error)

// MoveFunc moves the bytes of an I/O that its CheckFunc allowed: it reads
// the object's bytes at off into p, or with write set writes p there (p
// lies wholly inside the object), and returns how many moved. Its errors
// name the backend, op and the object; a read that finds the object's
// storage shorter than it was (a file cut behind its back) may return
// io.EOF as it is.
type MoveFunc func(op string, p []byte, off int64, write bool) (int, error)

// ReadBlocks is io.ReaderAt's ReadAt of a block store's Object, so that
// every backend reads by the same rules: check validates the I/O, move
// (nil for a backend that keeps no bytes) reads the part of p that lies
// inside the object, and a read that passes the object's end reads that
// part and io.EOF. Neither check nor move is kept, so method values cost
// no allocation.
func ReadBlocks(p []byte, off int64, check CheckFunc, move MoveFunc) (int, error) {
	n, err := check("read", p, off)
	if err != nil {
		return 0, err
	}
	if n > 0 && move != nil {
		if m, err := move("read", p[:n], off, false); err != nil {
			return m, err
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteBlocks is io.WriterAt's WriteAt of a block store's Object, as
// ReadBlocks is its ReadAt: check validates the I/O (a write that passes
// the object's end fails and writes nothing), and move (nil for a backend
// that keeps no bytes) writes all of p.
func WriteBlocks(p []byte, off int64, check CheckFunc, move MoveFunc) (int, error) {
	n, err := check("write", p, off)
	if err != nil {
		return 0, err
	}
	if n == 0 || move == nil {
		return n, nil
	}
	return move("write", p, off, true)
}

// IsAligned reports whether p's address and length and off are multiples
// of align (a power of two; align <= 1 accepts anything). An empty p's
// address is not checked.
func IsAligned(p []byte, off int64, align int) bool {
	if align <= 1 {
		return true
	}
	mask := align - 1
	if off&int64(mask) != 0 || len(p)&mask != 0 {
		return false
	}
	return len(p) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(p)))&uintptr(mask) == 0
}

// AlignedBuffer returns a zeroed buffer of n bytes whose address is a
// multiple of align (a power of two; align <= 1 means any address), for
// O_DIRECT I/O. It over-allocates by align bytes on the Go heap, which
// never moves its objects, and slices; the result's capacity is n, so an
// append cannot misalign it. It panics, as make does, on a negative n or
// an align that is not a power of two: those are programming errors.
func AlignedBuffer(n, align int) []byte {
	if align <= 1 {
		return make([]byte, n)
	}
	if align&(align-1) != 0 {
		panic(fmt.Sprintf("backend: AlignedBuffer: align %d is not a power of two", align))
	}
	buf := make([]byte, n+align)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := int(-addr & uintptr(align-1))
	return buf[skip : skip+n : skip+n]
}
