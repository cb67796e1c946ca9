// Package arena is the memory tiers' shared room: a Backend over a fixed
// arena of memory (host memory for the RAM tier, device memory for the GPU
// tier), an extent allocator inside it, and copies in and out through the
// arena's Memory. replay/ram brings an anonymous mapping, replay/gpu an
// allocation of device memory; neither imports the other.
//
// An object is one extent of the arena when a free extent holds it, placed
// first fit by address, and otherwise several (internal/extent's
// AllocPieces): the arena cannot fail from fragmentation, so an object
// fits whenever the arena's free bytes hold it, and the engine's capacity
// accounting (bytes, not extents) is exact. Every extent starts on a page,
// and Caps().Align is 4096, the same as the NVMe tier's: the engine then
// splits objects into the same I/Os on every tier, a physical size is
// exactly the bytes an object takes in the arena, and every copy runs
// between page-aligned addresses. Memory needs no alignment for
// correctness; it is a declared constraint, enforced so that a test
// against RAM catches what O_DIRECT would refuse.
//
// An engine that moves bytes itself (a direct GPU copy, GPUDirect Storage)
// reaches an object's memory through Spanner.
package arena

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/kvbench/kvbench/internal/extent"
	"github.com/kvbench/kvbench/replay/backend"
)

// Align is the alignment an arena declares and enforces: a page.
const Align = 4096

// Backend is a tier in an arena of memory. It is safe for concurrent use;
// so are its Objects. Close must be called: it releases the memory.
type Backend struct {
	capacity int64

	name string // Caps' name: the tier's ("ram", "gpu")

	// life guards mem: every copy holds it for reading, Close for
	// writing, so the memory is never released under a copy.
	life sync.RWMutex
	mem  Memory // nil once closed

	// mu guards objs and alloc. The bytes are copied outside it.
	mu     sync.RWMutex
	objs   map[string]*place
	alloc  *extent.Allocator
	closed atomic.Bool
}

// place is one object's extents of the arena, in the object's order.
type place struct {
	pieces []extent.Piece
	size   int64
	// gone is set when the object is removed or replaced, so that a
	// stale Object cannot write into space given to another.
	gone atomic.Bool
}

var _ backend.Backend = (*Backend)(nil)

// Memory is the memory behind an arena: Copy moves len(p) bytes between
// p and the memory at off (into it when write is set); Release frees it,
// after every copy. The RAM tier's is an anonymous mapping, the GPU
// tier's device memory.
type Memory interface {
	Copy(p []byte, off int64, write bool) error
	Release() error
}

// New returns a backend of the arena's rules (objects placed in pieces,
// never failing from fragmentation; Align 4096; fast metadata) over size
// bytes of mem, a multiple of Align, named name in its Caps and errors.
// The backend releases mem at Close.
func New(name string, size int64, mem Memory) *Backend {
	return &Backend{
		name:     name,
		capacity: size,
		mem:      mem,
		objs:     map[string]*place{},
		alloc:    extent.New(size, Align),
	}
}

// Caps reports the tier's name, Align 4096 and the arena's size as
// Capacity.
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{Name: b.name, Align: Align, Capacity: b.capacity, FastMeta: true}
}

// Stats are an arena's occupancy: its allocator's (an object of up to
// Free bytes fits, in pieces) and its objects.
type Stats struct {
	extent.Stats
	Objects int
}

// Stats returns the backend's occupancy now (nothing once closed).
func (b *Backend) Stats() Stats {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return Stats{Stats: b.alloc.Stats(), Objects: len(b.objs)}
}

// Open returns the object named key. With create it allocates size bytes
// (a multiple of Align, else ErrMisaligned), first releasing any object of
// that name, so a failed replacement leaves no object; ErrNoSpace, with
// the free bytes and the largest free extent, when no free extent holds
// size. The new object's bytes are whatever the arena held. Without
// create, the object must exist (ErrNotFound) and have size bytes.
func (b *Backend) Open(key string, size int64, create bool) (backend.Object, error) {
	if err := backend.CheckOpen(key, size, Align, create); err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	if !create {
		b.mu.RLock()
		defer b.mu.RUnlock()
		if b.objs == nil {
			return nil, fmt.Errorf("%s: open %q: %w", b.name, key, backend.ErrClosed)
		}
		e := b.objs[key]
		if e == nil {
			return nil, fmt.Errorf("%s: open %q: %w", b.name, key, backend.ErrNotFound)
		}
		if e.size != size {
			return nil, fmt.Errorf("%s: open %q of %d bytes: the object has %d", b.name, key, size, e.size)
		}
		return &object{b: b, key: key, e: e}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return nil, fmt.Errorf("%s: create %q: %w", b.name, key, backend.ErrClosed)
	}
	if old := b.objs[key]; old != nil {
		delete(b.objs, key)
		if err := b.releaseLocked(old); err != nil {
			return nil, err
		}
	}
	e := &place{size: size}
	if size > 0 {
		pieces, err := b.alloc.AllocPieces(size, nil)
		if errors.Is(err, extent.ErrNoSpace) {
			return nil, fmt.Errorf("%s: create %q of %d bytes: %d bytes free (arena %d bytes): %w", b.name,
				key, size, b.alloc.FreeBytes(), b.capacity, backend.ErrNoSpace)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: create %q of %d bytes: %w", b.name, key, size, err)
		}
		e.pieces = pieces
	}
	b.objs[key] = e
	return &object{b: b, key: key, e: e}, nil
}

// releaseLocked gives e's space back; b.mu is held.
func (b *Backend) releaseLocked(e *place) error {
	e.gone.Store(true)
	for _, p := range e.pieces {
		if err := b.alloc.Free(p.Off, p.Len); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
	}
	return nil
}

// Close unmaps the arena, after any copy in flight; the backend and its
// Objects then fail with ErrClosed.
func (b *Backend) Close() error {
	b.life.Lock()
	defer b.life.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem == nil {
		return fmt.Errorf("%s: close: %w", b.name, backend.ErrClosed)
	}
	b.closed.Store(true)
	for _, e := range b.objs {
		e.gone.Store(true)
	}
	b.objs = nil
	b.alloc = &extent.Allocator{}
	err := b.mem.Release()
	b.mem = nil
	if err != nil {
		return fmt.Errorf("%s: release the arena: %w", b.name, err)
	}
	return nil
}

// object is one open object of an arena.
type object struct {
	b      *Backend
	key    string
	e      *place
	closed atomic.Bool
}

// check validates an I/O of len(p) bytes at off and returns how many of
// them lie inside the object.
func (o *object) check(op string, p []byte, off int64) (int, error) {
	if o.closed.Load() || o.b.closed.Load() {
		return 0, fmt.Errorf("%s: %s %q: %w", o.b.name, op, o.key, backend.ErrClosed)
	}
	n, err := backend.CheckIO(p, off, o.e.size, Align, op == "write")
	if err != nil {
		return 0, fmt.Errorf("%s: %s %q: %w", o.b.name, op, o.key, err)
	}
	return n, nil
}

// copyAt copies between p and the object's bytes at off, under the arena's
// read lock: all of p, or nothing and an error.
func (o *object) copyAt(op string, p []byte, off int64, write bool) (int, error) {
	q := p
	err := o.span(op, off, int64(len(p)), func(mem Memory, at, n int64) error {
		err := mem.Copy(q[:n], at, write)
		q = q[n:]
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Span calls fn, under the arena's read lock, for each piece of the n
// bytes of the object at off: the arena's memory, where the piece lies in
// it, and its length, in order. It is how an engine that moves bytes
// itself (GPUDirect Storage, for the gpu tier's arena) reaches an
// object's memory; fn must not keep the offsets after it returns.
func (o *object) Span(off, n int64, fn func(mem Memory, at, n int64) error) error {
	if off < 0 || n < 0 || off+n > o.e.size {
		return fmt.Errorf("%s: span %q: %d bytes at %d outside its %d bytes", o.b.name, o.key, n, off, o.e.size)
	}
	return o.span("span", off, n, fn)
}

func (o *object) span(op string, off, n int64, fn func(mem Memory, at, n int64) error) error {
	b := o.b
	b.life.RLock()
	defer b.life.RUnlock()
	if b.mem == nil {
		return fmt.Errorf("%s: %s %q: %w", b.name, op, o.key, backend.ErrClosed)
	}
	if o.e.gone.Load() {
		return fmt.Errorf("%s: %s %q: %w", o.b.name, op, o.key, backend.ErrStale)
	}
	// Skip the pieces before off, then go piece by piece.
	for _, pc := range o.e.pieces {
		if n == 0 {
			break
		}
		if off >= pc.Len {
			off -= pc.Len
			continue
		}
		m := min(n, pc.Len-off)
		if err := fn(b.mem, pc.Off+off, m); err != nil {
			return fmt.Errorf("%s: %s %q: %w", b.name, op, o.key, err)
		}
		n, off = n-m, 0
	}
	return nil
}

// Arena returns the memory the object lives in, nil once its backend is
// closed.
func (o *object) Arena() Memory {
	o.b.life.RLock()
	defer o.b.life.RUnlock()
	return o.b.mem
}

// Spanner is an object in an arena (of the ram tier or the gpu tier):
// Arena and Span reach its memory.
type Spanner interface {
	Arena() Memory
	Span(off, n int64, fn func(mem Memory, at, n int64) error) error
}

var _ Spanner = (*object)(nil)

// ReadAt copies the object's bytes at off into p; io.EOF past its end.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	return backend.ReadBlocks(p, off, o.check, o.copyAt)
}

// WriteAt copies p into the object at off; it writes nothing and fails if
// p passes the object's end.
func (o *object) WriteAt(p []byte, off int64) (int, error) {
	return backend.WriteBlocks(p, off, o.check, o.copyAt)
}

// Close ends this use of the object.
func (o *object) Close() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: close %q: %w", o.b.name, o.key, backend.ErrClosed)
	}
	return nil
}

// Remove frees the object's extent (unless a create has replaced the
// object since this Object was opened) and closes the Object.
func (o *object) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: remove %q: %w", o.b.name, o.key, backend.ErrClosed)
	}
	b := o.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return fmt.Errorf("%s: remove %q: %w", o.b.name, o.key, backend.ErrClosed)
	}
	if b.objs[o.key] != o.e {
		return nil // already removed or replaced through another Object
	}
	delete(b.objs, o.key)
	return b.releaseLocked(o.e)
}
