// Package null owns the null replay backend: it stores no bytes but keeps
// the names and sizes of its objects, so that Open, Remove, size and
// capacity semantics are those of a real backend. It is for testing the
// replay engine itself (its scheduling, ordering and metrics) without the
// cost or the noise of moving data, as fio's null engine is.
//
// ReadAt and WriteAt check their arguments as a real backend does and then
// succeed without touching p: a read leaves the caller's buffer as it was.
package null

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/kvbench/kvbench/replay/backend"
)

// Backend is the null backend. It is safe for concurrent use; so are its
// Objects. Close must be called to release it (it holds only memory).
type Backend struct {
	align    int
	capacity int64

	mu     sync.RWMutex
	objs   map[string]*entry // nil once closed
	used   int64
	closed atomic.Bool
}

// entry is one stored object: its size, and whether it is still the one
// its key names (a Remove or a replacing create ends it).
type entry struct {
	size int64
	gone atomic.Bool
}

var _ backend.Backend = (*Backend)(nil)

// Option configures New.
type Option func(*Backend)

// WithAlign makes the backend declare and enforce an alignment of n bytes
// (rounded up to a power of two; n <= 1 means none, the default), so that
// the engine's alignment handling can be tested without a disk.
func WithAlign(n int) Option {
	return func(b *Backend) {
		if n <= 1 {
			b.align = 1
			return
		}
		b.align = 1 << bits.Len(uint(n-1))
	}
}

// WithCapacity bounds the bytes the backend's objects may hold (n <= 0:
// unbounded, the default), so that ErrNoSpace handling can be tested.
func WithCapacity(n int64) Option {
	return func(b *Backend) { b.capacity = max(n, 0) }
}

// New returns an empty null backend: Align 1 and unbounded unless options
// say otherwise.
func New(opts ...Option) *Backend {
	b := &Backend{align: 1, objs: map[string]*entry{}}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Caps reports Name "null", the alignment and capacity New was given.
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{Name: "null", Align: b.align, Capacity: b.capacity, NoData: true, FastMeta: true}
}

// Open returns the object named key. With create it records an object of
// size bytes, replacing any of that name (ErrNoSpace when the capacity
// would be exceeded; ErrMisaligned when size is not a multiple of Align);
// without, the object must exist with that size.
func (b *Backend) Open(key string, size int64, create bool) (backend.Object, error) {
	if err := backend.CheckOpen(key, size, b.align, create); err != nil {
		return nil, fmt.Errorf("null: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return nil, fmt.Errorf("null: open %q: %w", key, backend.ErrClosed)
	}
	e := b.objs[key]
	if !create {
		if e == nil {
			return nil, fmt.Errorf("null: open %q: %w", key, backend.ErrNotFound)
		}
		if e.size != size {
			return nil, fmt.Errorf("null: open %q of %d bytes: the object has %d", key, size, e.size)
		}
		return &object{b: b, key: key, e: e}, nil
	}
	if e != nil {
		// Replacing: the old object's space is given back first.
		e.gone.Store(true)
		delete(b.objs, key)
		b.used -= e.size
	}
	if b.capacity > 0 && b.used+size > b.capacity {
		return nil, fmt.Errorf("null: create %q of %d bytes: %d of %d bytes free: %w", key, size, b.capacity-b.used, b.capacity, backend.ErrNoSpace)
	}
	e = &entry{size: size}
	b.objs[key] = e
	b.used += size
	return &object{b: b, key: key, e: e}, nil
}

// Close forgets every object; the backend and its Objects then fail with
// ErrClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return fmt.Errorf("null: close: %w", backend.ErrClosed)
	}
	for _, e := range b.objs {
		e.gone.Store(true)
	}
	b.objs, b.used = nil, 0
	b.closed.Store(true)
	return nil
}

// object is one open object of a null Backend.
type object struct {
	b      *Backend
	key    string
	e      *entry
	closed atomic.Bool
}

// check validates an I/O of len(p) bytes at off and returns the bytes
// that lie inside the object.
func (o *object) check(op string, p []byte, off int64) (int, error) {
	if o.closed.Load() || o.b.closed.Load() {
		return 0, fmt.Errorf("null: %s %q: %w", op, o.key, backend.ErrClosed)
	}
	if o.e.gone.Load() {
		return 0, fmt.Errorf("null: %s %q: %w", op, o.key, backend.ErrStale)
	}
	n, err := backend.CheckIO(p, off, o.e.size, o.b.align, op == "write")
	if err != nil {
		return 0, fmt.Errorf("null: %s %q: %w", op, o.key, err)
	}
	return n, nil
}

// ReadAt succeeds without touching p; io.EOF past the object's end.
func (o *object) ReadAt(p []byte, off int64) (int, error) {
	return backend.ReadBlocks(p, off, o.check, nil)
}

// WriteAt succeeds without storing p; an error past the object's end.
func (o *object) WriteAt(p []byte, off int64) (int, error) {
	return backend.WriteBlocks(p, off, o.check, nil)
}

// Close ends this use of the object.
func (o *object) Close() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("null: close %q: %w", o.key, backend.ErrClosed)
	}
	return nil
}

// Remove forgets the object (unless a create has replaced it since this
// Object was opened) and closes the Object.
func (o *object) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("null: remove %q: %w", o.key, backend.ErrClosed)
	}
	b := o.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return fmt.Errorf("null: remove %q: %w", o.key, backend.ErrClosed)
	}
	if b.objs[o.key] == o.e {
		o.e.gone.Store(true)
		delete(b.objs, o.key)
		b.used -= o.e.size
	}
	return nil
}
