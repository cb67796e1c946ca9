// Package extent owns the extent allocator that places objects in one
// linear space of bytes: the RAM tier's arena (replay/ram), the one file or
// block device of the NVMe tier's extent layout (replay/extent), and the
// offsets a fio job file replays (trace/export), which must be the same
// offsets the backend would use.
//
// An Allocator hands out extents first fit by address: an allocation takes
// the lowest-addressed free extent that is big enough, and a release
// coalesces the freed extent with the free neighbours it touches, so the
// free list never holds two adjacent extents. The same sequence of calls on
// Allocators of the same capacity and alignment gives the same offsets.
//
// The free extents are the nodes of a treap ordered by offset, each node
// augmented with the largest free length in its subtree. First fit then
// descends to the leftmost node whose length suffices, pruning subtrees
// whose largest extent is too small: O(log n) expected for both Alloc and
// Free, whatever the fragmentation. This is the structure of Linux's
// vmalloc free-area tree (mm/vmalloc.c, "augmented red-black tree" keyed by
// address with subtree_max_size), with a treap (Seidel and Aragon,
// "Randomized search trees", 1996) in place of the red-black tree because
// split and merge make a release short. Priorities are a hash of the
// offset, so the shape, like everything else, is deterministic.
//
// Only free space is tracked, not the allocations: memory is O(free
// extents), and Free accepts any range that lies wholly in allocated
// space (part of an allocation, or two neighbouring ones). What it detects
// is a range that touches free space, such as a double free.
package extent

import (
	"errors"
	"fmt"
)

// Errors of an Allocator; test them with errors.Is.
var (
	// ErrNoSpace: Alloc found no free extent big enough. The error names
	// the bytes requested, the bytes free and the largest free extent.
	ErrNoSpace = errors.New("no space left")
	// ErrBadFree: Free of a range that is not wholly allocated (a double
	// free, an overlap with free space), misaligned, or outside the space.
	ErrBadFree = errors.New("not an allocated extent")
)

// Allocator allocates extents of a space of bytes [0, capacity). The
// zero Allocator has no space. An Allocator is not safe for concurrent
// use: callers lock.
type Allocator struct {
	root     *node
	capacity int64
	align    int64
	free     int64 // free bytes
	count    int   // free extents
	spare    *node // nodes to reuse, linked through right
}

// node is one free extent [off, off+len).
type node struct {
	off, len    int64
	max         int64 // the largest len in this subtree
	prio        uint64
	left, right *node
}

// New returns an Allocator of capacity bytes, all free, that hands out
// extents aligned to align bytes: offsets and sizes are multiples of
// align. capacity is rounded down to a multiple of align (the tail could
// hold no aligned extent); an align below 1 is taken as 1, a negative
// capacity as 0. align need not be a power of two.
func New(capacity, align int64) *Allocator {
	align = max(align, 1)
	capacity = max(capacity, 0) / align * align
	a := &Allocator{capacity: capacity, align: align}
	if capacity > 0 {
		a.root = a.newNode(0, capacity)
		a.free, a.count = capacity, 1
	}
	return a
}

// Stats are an Allocator's occupancy.
type Stats struct {
	Capacity    int64 // the bytes it allocates from
	Used        int64 // bytes allocated
	Free        int64 // Capacity - Used
	LargestFree int64 // the largest extent Alloc can satisfy now (AllocPieces, up to Free)
	FreeExtents int   // free extents: 1 when unfragmented (0 when full)
}

// Stats returns the Allocator's occupancy now.
func (a *Allocator) Stats() Stats {
	return Stats{Capacity: a.capacity, Used: a.Used(), Free: a.free, LargestFree: a.LargestFree(), FreeExtents: a.count}
}

// Used returns the bytes allocated: the capacity less FreeBytes.
func (a *Allocator) Used() int64 { return a.capacity - a.free }

// FreeBytes returns the bytes free, in all free extents together.
func (a *Allocator) FreeBytes() int64 { return a.free }

// LargestFree returns the length of the largest free extent: the largest
// size that Alloc can satisfy now.
func (a *Allocator) LargestFree() int64 { return maxLen(a.root) }

// Extents returns the number of free extents: 1 in an empty Allocator, 0
// in a full one. Together with the number of live objects it measures the
// fragmentation.
func (a *Allocator) Extents() int { return a.count }

// roundUp returns n rounded up to a multiple of a.align; n <= a.capacity, so
// the result does not overflow.
func (a *Allocator) roundUp(n int64) int64 {
	if r := n % a.align; r != 0 {
		n += a.align - r
	}
	return n
}

// Alloc allocates size bytes, rounded up to a multiple of the alignment,
// from the lowest-addressed free extent that holds them, and returns their
// offset. It fails with an error that wraps ErrNoSpace, changing nothing,
// when no free extent is big enough; with another error when size is
// negative. An Alloc of 0 bytes takes no space and returns offset 0.
func (a *Allocator) Alloc(size int64) (off int64, err error) {
	switch {
	case size < 0:
		return 0, fmt.Errorf("extent: alloc of %d bytes: negative size", size)
	case size == 0:
		return 0, nil
	}
	n := size
	if n <= a.capacity {
		n = a.roundUp(size)
	}
	if n > maxLen(a.root) {
		rounded := ""
		if n != size {
			rounded = fmt.Sprintf(" (%d aligned)", n)
		}
		return 0, fmt.Errorf("extent: alloc of %d bytes%s: %d bytes free, largest free extent %d bytes: %w",
			size, rounded, a.free, maxLen(a.root), ErrNoSpace)
	}
	a.root, off = a.allocIn(a.root, n)
	a.free -= n
	return off, nil
}

// Piece is one extent of a scattered allocation: Len bytes at Off.
type Piece struct{ Off, Len int64 }

// AllocPieces allocates size bytes (rounded up to a multiple of the
// alignment) as one extent when a free extent holds them, first fit as
// Alloc does, and otherwise as several: the largest free extents, each
// taken whole, then the rest first fit. It appends the pieces to dst, in
// the object's order, and fails (wrapping ErrNoSpace, changing nothing)
// only when fewer than size bytes are free: a space whose objects may be
// scattered cannot fail from fragmentation. Taking the largest extents
// first keeps the pieces few. Each piece is freed with Free.
func (a *Allocator) AllocPieces(size int64, dst []Piece) ([]Piece, error) {
	if size <= 0 || size > a.capacity || a.roundUp(size) <= maxLen(a.root) {
		off, err := a.Alloc(size)
		if err != nil || size == 0 {
			return dst, err
		}
		return append(dst, Piece{off, a.roundUp(size)}), nil
	}
	n := a.roundUp(size)
	if n > a.free {
		return dst, fmt.Errorf("extent: alloc of %d bytes in pieces: %d bytes free: %w", size, a.free, ErrNoSpace)
	}
	for n > 0 {
		take := min(maxLen(a.root), n)
		var off int64
		a.root, off = a.allocIn(a.root, take)
		a.free -= take
		dst = append(dst, Piece{off, take})
		n -= take
	}
	return dst, nil
}

// allocIn allocates n bytes from the subtree t, whose max is at least n,
// and returns the subtree's new root.
func (a *Allocator) allocIn(t *node, n int64) (*node, int64) {
	var off int64
	switch {
	case maxLen(t.left) >= n:
		t.left, off = a.allocIn(t.left, n)
	case t.len >= n:
		off = t.off
		if t.len == n {
			a.count--
			rest := merge(t.left, t.right)
			a.recycle(t)
			return rest, off
		}
		// The rest of the extent keeps its place in the order: it still
		// lies between its neighbours.
		t.off += n
		t.len -= n
	default:
		t.right, off = a.allocIn(t.right, n)
	}
	t.update()
	return t, off
}

// Free gives back the extent of size bytes (rounded up to a multiple of the
// alignment, as Alloc rounds) at off, coalescing it with the free extents
// it touches. It fails with an error that wraps ErrBadFree, changing
// nothing, when off is not aligned, the range passes the ends of the space,
// or it overlaps a free extent (a double free: a bug of the caller). A Free
// of 0 bytes does nothing.
func (a *Allocator) Free(off, size int64) error {
	switch {
	case size == 0:
		return nil
	case size < 0:
		return fmt.Errorf("extent: free of %d bytes at %d: negative size: %w", size, off, ErrBadFree)
	case off < 0 || size > a.capacity || off > a.capacity-a.roundUp(size):
		return fmt.Errorf("extent: free of %d bytes at %d: outside the space of %d bytes: %w", size, off, a.capacity, ErrBadFree)
	case off%a.align != 0:
		return fmt.Errorf("extent: free of %d bytes at %d: offset not a multiple of %d: %w", size, off, a.align, ErrBadFree)
	}
	n := a.roundUp(size)
	left, right := split(a.root, off)
	prev, next := rightmost(left), leftmost(right)
	if prev != nil && prev.off+prev.len > off || next != nil && off+n > next.off {
		a.root = merge(left, right)
		f := prev
		if f == nil || f.off+f.len <= off {
			f = next
		}
		return fmt.Errorf("extent: free [%d, %d): overlaps the free extent [%d, %d): %w", off, off+n, f.off, f.off+f.len, ErrBadFree)
	}
	a.free += n
	a.count++
	// A neighbour that touches the range joins it: split cuts it off its
	// side (left keeps the extents before prev, right those after next),
	// and its node is recycled once read.
	if prev != nil && prev.off+prev.len == off {
		off, n = prev.off, n+prev.len
		left, _ = split(left, prev.off)
		a.recycle(prev)
		a.count--
	}
	if next != nil && off+n == next.off {
		n += next.len
		_, right = split(right, next.off+next.len)
		a.recycle(next)
		a.count--
	}
	a.root = merge(merge(left, a.newNode(off, n)), right)
	return nil
}

// newNode returns a node for the free extent [off, off+n), reusing a spare
// one when it can: a long run of allocations and releases then allocates
// no memory.
func (a *Allocator) newNode(off, n int64) *node {
	t := a.spare
	if t != nil {
		a.spare = t.right
	} else {
		t = &node{}
	}
	// splitmix64 of the offset: a fixed, well-mixed priority.
	z := uint64(off) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	*t = node{off: off, len: n, max: n, prio: z ^ z>>31}
	return t
}

// recycle keeps t, removed from the tree, for newNode.
func (a *Allocator) recycle(t *node) {
	*t = node{right: a.spare}
	a.spare = t
}

func maxLen(t *node) int64 {
	if t == nil {
		return 0
	}
	return t.max
}

func (t *node) update() { t.max = max(t.len, maxLen(t.left), maxLen(t.right)) }

// merge joins two treaps whose keys are all ordered: l's before r's.
func merge(l, r *node) *node {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = merge(l.right, r)
		l.update()
		return l
	default:
		r.left = merge(l, r.left)
		r.update()
		return r
	}
}

// split cuts t into the extents that start before off and the others.
func split(t *node, off int64) (l, r *node) {
	if t == nil {
		return nil, nil
	}
	if t.off < off {
		t.right, r = split(t.right, off)
		t.update()
		return t, r
	}
	l, t.left = split(t.left, off)
	t.update()
	return l, t
}

func leftmost(t *node) *node {
	for t != nil && t.left != nil {
		t = t.left
	}
	return t
}

func rightmost(t *node) *node {
	for t != nil && t.right != nil {
		t = t.right
	}
	return t
}

// walk calls fn on every free extent in address order.
func (a *Allocator) walk(fn func(off, n int64)) {
	var rec func(*node)
	rec = func(t *node) {
		if t == nil {
			return
		}
		rec(t.left)
		fn(t.off, t.len)
		rec(t.right)
	}
	rec(a.root)
}
