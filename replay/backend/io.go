package backend

import (
	"fmt"
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
