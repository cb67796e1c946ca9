package ram

import "fmt"

// allocator hands out extents of an arena of bytes, first fit by address:
// an allocation takes the lowest-addressed free extent that is big enough,
// and a release coalesces the freed extent with the free neighbours it
// touches, so the free list never holds two adjacent extents.
//
// The free extents are the nodes of a treap ordered by offset, each node
// augmented with the largest free length in its subtree. First fit then
// descends to the leftmost node whose length suffices, pruning subtrees
// whose largest extent is too small: O(log n) expected for both alloc and
// release, whatever the fragmentation. This is the structure of Linux's
// vmalloc free-area tree (mm/vmalloc.c, "augmented red-black tree" keyed by
// address with subtree_max_size), with a treap (Seidel and Aragon,
// "Randomized search trees", 1996) in place of the red-black tree because
// split and merge make release short. Priorities are a hash of the offset,
// so the shape, like everything else, is deterministic.
//
// allocator is not safe for concurrent use: the Backend's mutex guards it.
type allocator struct {
	root  *node
	free  int64 // free bytes
	count int   // free extents
}

// node is one free extent [off, off+len).
type node struct {
	off, len    int64
	max         int64 // the largest len in this subtree
	prio        uint64
	left, right *node
}

func newAllocator(size int64) allocator {
	a := allocator{}
	if size > 0 {
		a.root = newNode(0, size)
		a.free, a.count = size, 1
	}
	return a
}

func newNode(off, n int64) *node {
	// splitmix64 of the offset: a fixed, well-mixed priority.
	z := uint64(off) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return &node{off: off, len: n, max: n, prio: z ^ z>>31}
}

func maxLen(n *node) int64 {
	if n == nil {
		return 0
	}
	return n.max
}

func (n *node) update() { n.max = max(n.len, maxLen(n.left), maxLen(n.right)) }

// largest returns the length of the largest free extent.
func (a *allocator) largest() int64 { return maxLen(a.root) }

// alloc takes size bytes (size > 0) from the lowest-addressed free extent
// that holds them and returns their offset; ok is false when no free
// extent is big enough.
func (a *allocator) alloc(size int64) (off int64, ok bool) {
	if size <= 0 || maxLen(a.root) < size {
		return 0, false
	}
	a.root, off = a.allocIn(a.root, size)
	a.free -= size
	return off, true
}

// allocIn allocates from the subtree n, whose max is at least size, and
// returns the subtree's new root.
func (a *allocator) allocIn(n *node, size int64) (*node, int64) {
	var off int64
	switch {
	case maxLen(n.left) >= size:
		n.left, off = a.allocIn(n.left, size)
	case n.len >= size:
		off = n.off
		if n.len == size {
			a.count--
			return merge(n.left, n.right), off
		}
		// The rest of the extent keeps its place in the order: it still
		// lies between its neighbours.
		n.off += size
		n.len -= size
	default:
		n.right, off = a.allocIn(n.right, size)
	}
	n.update()
	return n, off
}

// release gives [off, off+size) back. It fails, changing nothing, when the
// extent overlaps a free one (a double free: a bug of the caller).
func (a *allocator) release(off, size int64) error {
	if size <= 0 {
		return nil
	}
	left, right := split(a.root, off)
	prev, next := rightmost(left), leftmost(right)
	if prev != nil && prev.off+prev.len > off || next != nil && off+size > next.off {
		a.root = merge(left, right)
		return fmt.Errorf("ram: allocator: releasing [%d, %d), which overlaps a free extent", off, off+size)
	}
	a.free += size
	a.count++
	if prev != nil && prev.off+prev.len == off {
		left = popRightmost(left)
		off, size = prev.off, size+prev.len
		a.count--
	}
	if next != nil && off+size == next.off {
		right = popLeftmost(right)
		size += next.len
		a.count--
	}
	a.root = merge(merge(left, newNode(off, size)), right)
	return nil
}

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

// split cuts n into the extents that start before off and the others.
func split(n *node, off int64) (l, r *node) {
	if n == nil {
		return nil, nil
	}
	if n.off < off {
		n.right, r = split(n.right, off)
		n.update()
		return n, r
	}
	l, n.left = split(n.left, off)
	n.update()
	return l, n
}

func leftmost(n *node) *node {
	for n != nil && n.left != nil {
		n = n.left
	}
	return n
}

func rightmost(n *node) *node {
	for n != nil && n.right != nil {
		n = n.right
	}
	return n
}

// popLeftmost removes n's first extent and returns the new root.
func popLeftmost(n *node) *node {
	if n.left == nil {
		return n.right
	}
	n.left = popLeftmost(n.left)
	n.update()
	return n
}

// popRightmost removes n's last extent and returns the new root.
func popRightmost(n *node) *node {
	if n.right == nil {
		return n.left
	}
	n.right = popRightmost(n.right)
	n.update()
	return n
}

// walk calls fn on every free extent in address order.
func (a *allocator) walk(fn func(off, size int64)) {
	var rec func(*node)
	rec = func(n *node) {
		if n == nil {
			return
		}
		rec(n.left)
		fn(n.off, n.len)
		rec(n.right)
	}
	rec(a.root)
}
