package ram

import (
	"math/rand/v2"
	"testing"
)

// checkInvariants fails t unless a's treap is ordered by offset, a heap by
// priority, its max fields are right, its extents lie in [0, size), never
// overlap nor touch (fully coalesced), and free and count agree with them.
func checkInvariants(t *testing.T, a *allocator, size int64) {
	t.Helper()
	var rec func(n *node, lo, hi int64) (max, sum int64, count int)
	rec = func(n *node, lo, hi int64) (int64, int64, int) {
		if n == nil {
			return 0, 0, 0
		}
		if n.len <= 0 || n.off < lo || n.off+n.len > hi {
			t.Fatalf("extent [%d, %d) outside [%d, %d) or empty", n.off, n.off+n.len, lo, hi)
		}
		for _, c := range []*node{n.left, n.right} {
			if c != nil && c.prio > n.prio {
				t.Fatalf("heap order broken at %d", n.off)
			}
		}
		lm, ls, lc := rec(n.left, lo, n.off)
		rm, rs, rc := rec(n.right, n.off+n.len, hi)
		m := max(n.len, lm, rm)
		if n.max != m {
			t.Fatalf("node %d: max %d, want %d", n.off, n.max, m)
		}
		return m, ls + rs + n.len, lc + rc + 1
	}
	_, sum, count := rec(a.root, 0, size)
	if sum != a.free || count != a.count {
		t.Fatalf("free %d in %d extents, counters say %d in %d", sum, count, a.free, a.count)
	}
	var end int64 = -1
	a.walk(func(off, n int64) {
		if off == end {
			t.Fatalf("free extents touch at %d: not coalesced", off)
		}
		end = off + n
	})
}

type extentList [][2]int64

func freeList(a *allocator) extentList {
	var l extentList
	a.walk(func(off, n int64) { l = append(l, [2]int64{off, n}) })
	return l
}

func TestAllocatorFirstFitAndCoalescing(t *testing.T) {
	const P = 4096
	a := newAllocator(8 * P)
	var offs []int64
	for range 8 {
		off, ok := a.alloc(P)
		if !ok {
			t.Fatal("alloc of a page failed in an empty arena")
		}
		offs = append(offs, off)
	}
	for i, off := range offs {
		if off != int64(i*P) {
			t.Fatalf("allocation %d at %d, want %d (first fit by address)", i, off, i*P)
		}
	}
	if _, ok := a.alloc(P); ok {
		t.Fatal("alloc in a full arena succeeded")
	}
	// Free pages 1, 3 and 6: three holes, none big enough for two pages.
	for _, i := range []int{1, 3, 6} {
		if err := a.release(offs[i], P); err != nil {
			t.Fatal(err)
		}
	}
	checkInvariants(t, &a, 8*P)
	if got, want := freeList(&a), (extentList{{P, P}, {3 * P, P}, {6 * P, P}}); !equal(got, want) {
		t.Fatalf("free list %v, want %v", got, want)
	}
	if a.free != 3*P || a.largest() != P {
		t.Fatalf("free %d, largest %d; want %d, %d", a.free, a.largest(), 3*P, P)
	}
	if _, ok := a.alloc(2 * P); ok {
		t.Fatal("alloc of two pages succeeded with only one-page holes")
	}
	// Freeing page 2 joins 1, 2 and 3 into one hole.
	if err := a.release(offs[2], P); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, &a, 8*P)
	if got, want := freeList(&a), (extentList{{P, 3 * P}, {6 * P, P}}); !equal(got, want) {
		t.Fatalf("free list %v, want %v", got, want)
	}
	// First fit: a one-page allocation takes the lowest hole, not the
	// exact fit at page 6.
	if off, ok := a.alloc(P); !ok || off != P {
		t.Fatalf("alloc(P) = %d, %v; want %d", off, ok, P)
	}
	if off, ok := a.alloc(2 * P); !ok || off != 2*P {
		t.Fatalf("alloc(2P) = %d, %v; want %d", off, ok, 2*P)
	}
	// A double free is refused and changes nothing.
	before := freeList(&a)
	if err := a.release(6*P, P); err == nil {
		t.Fatal("releasing a free extent succeeded")
	}
	if err := a.release(5*P, 2*P); err == nil {
		t.Fatal("releasing an extent overlapping a free one succeeded")
	}
	if got := freeList(&a); !equal(got, before) {
		t.Fatalf("a refused release changed the free list: %v, was %v", got, before)
	}
	// Free everything: one extent again.
	for _, ext := range [][2]int64{{0, P}, {P, P}, {2 * P, 2 * P}, {4 * P, P}, {5 * P, P}, {7 * P, P}} {
		if err := a.release(ext[0], ext[1]); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, &a, 8*P)
	}
	if got, want := freeList(&a), (extentList{{0, 8 * P}}); !equal(got, want) {
		t.Fatalf("free list %v, want %v", got, want)
	}
}

func equal(a, b extentList) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAllocatorModel drives the allocator with random allocations and
// releases and compares every result with a page bitmap doing first fit
// the slow way.
func TestAllocatorModel(t *testing.T) {
	const pages = 1024
	rng := rand.New(rand.NewPCG(1, 2))
	a := newAllocator(pages)
	used := make([]bool, pages)
	type ext struct{ off, n int64 }
	var live []ext
	firstFit := func(n int64) int64 {
		run := int64(0)
		for i := range int64(pages) {
			if used[i] {
				run = 0
				continue
			}
			run++
			if run == n {
				return i - n + 1
			}
		}
		return -1
	}
	for step := range 20000 {
		if len(live) > 0 && rng.IntN(2) == 0 {
			k := rng.IntN(len(live))
			e := live[k]
			live[k] = live[len(live)-1]
			live = live[:len(live)-1]
			if err := a.release(e.off, e.n); err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			for i := e.off; i < e.off+e.n; i++ {
				used[i] = false
			}
		} else {
			n := int64(1 + rng.IntN(1+rng.IntN(64)))
			want := firstFit(n)
			off, ok := a.alloc(n)
			if !ok {
				off = -1
			}
			if off != want {
				t.Fatalf("step %d: alloc(%d) = %d, first fit says %d", step, n, off, want)
			}
			if ok {
				live = append(live, ext{off, n})
				for i := off; i < off+n; i++ {
					used[i] = true
				}
			}
		}
		if step%97 == 0 {
			checkInvariants(t, &a, pages)
		}
	}
	checkInvariants(t, &a, pages)
}

// BenchmarkAllocatorChurn measures alloc+release with 100k live objects of
// mixed sizes in a fragmented arena.
func BenchmarkAllocatorChurn(b *testing.B) {
	const live = 100000
	rng := rand.New(rand.NewPCG(3, 4))
	a := newAllocator(1 << 40)
	type ext struct{ off, n int64 }
	objs := make([]ext, 0, live)
	size := func() int64 { return int64(1+rng.IntN(256)) * 4096 }
	for range live {
		n := size()
		off, _ := a.alloc(n)
		objs = append(objs, ext{off, n})
	}
	b.ResetTimer()
	for range b.N {
		k := rng.IntN(live)
		if err := a.release(objs[k].off, objs[k].n); err != nil {
			b.Fatal(err)
		}
		n := size()
		off, ok := a.alloc(n)
		if !ok {
			b.Fatal("arena full")
		}
		objs[k] = ext{off, n}
	}
	b.ReportMetric(float64(a.count), "free-extents")
}
