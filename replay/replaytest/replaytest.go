// Package replaytest holds the conformance suite that every backend.Backend
// passes (replay/null, replay/ram, replay/nvme, the replay/fault decorators
// and whatever comes next), and helpers shared by backends' and the
// engine's tests.
//
// A backend's test calls Run with a constructor:
//
//	func TestConformance(t *testing.T) {
//		replaytest.Run(t, func(t *testing.T) backend.Backend {
//			b, err := ram.New(16 << 20)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return b
//		})
//	}
//
// Run calls the constructor once per subtest and closes the backend itself;
// the constructor must not close it (it may register clean-ups of its own,
// such as removing a directory).
//
// What the suite requires of a Backend, beyond what backend.Backend's doc
// states:
//
//   - Caps: Name non-empty, Align a power of two, Capacity >= 0.
//   - Open with create of a size that is not a multiple of Align, and
//     ReadAt/WriteAt with a buffer address, length or offset that is not,
//     fail with backend.ErrMisaligned (when Align > 1) and move nothing.
//   - An object has the size it was created with: ReadAt past the end
//     returns the bytes up to the end and io.EOF; WriteAt past the end fails
//     and writes nothing.
//   - After Object.Close or Object.Remove, the object's methods fail with
//     backend.ErrClosed (a second Close too); after Backend.Close, the
//     backend's Open and Close and every method of its objects do.
//   - Keys are arbitrary strings, the empty one included: slashes, dots,
//     "..", 300-byte keys, invalid UTF-8 and control bytes are stored
//     distinctly and safely.
//   - With Capacity > 0: a create that does not fit fails with
//     backend.ErrNoSpace, and Remove gives the space back (after removing
//     everything, one object of the whole capacity, rounded down to the
//     suite's block, fits). The suite needs a capacity of at least 4 MiB
//     (more when Align is above 4096: 1024 of its blocks).
//
// A backend whose Caps().Name is "null", or starts with "null+" (a null
// backend under decorators such as "null+delay"), stores no data: the
// suite runs every operation on it but skips the checks that bytes read
// back equal the bytes written.
package replaytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
)

// AlignedBuffer is backend.AlignedBuffer, for tests.
func AlignedBuffer(n, align int) []byte { return backend.AlignedBuffer(n, align) }

// IsAligned is backend.IsAligned, for tests.
func IsAligned(p []byte, off int64, align int) bool { return backend.IsAligned(p, off, align) }

// Fill fills p with the bytes at offset off (a multiple of 8) of a
// pattern of seed: deterministic, incompressible, different for every seed
// and every 8-byte word, and positional, so that filling a range at once
// or block by block gives the same bytes, and a block read back from the
// wrong object or the wrong place does not match.
func Fill(p []byte, seed uint64, off int64) {
	var word [8]byte
	k := uint64(off) / 8
	for i := 0; i < len(p); i += 8 {
		z := seed*0xd1b54a32d192ed03 + k*0x9e3779b97f4a7c15 + 1
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		for j := range word {
			word[j] = byte(z >> (8 * j))
		}
		copy(p[i:], word[:])
		k++
	}
}

// Run runs the conformance suite against the backends newBackend returns,
// one fresh backend per subtest, which Run closes. See the package doc for
// what it checks.
func Run(t *testing.T, newBackend func(t *testing.T) backend.Backend) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*suite)
	}{
		{"Caps", testCaps},
		{"WriteReadBack", testWriteReadBack},
		{"OpenMissing", testOpenMissing},
		{"CreateReplaces", testCreateReplaces},
		{"Remove", testRemove},
		{"PastEnd", testPastEnd},
		{"NoSpace", testNoSpace},
		{"ConcurrentOneObject", testConcurrentOneObject},
		{"ConcurrentManyObjects", testConcurrentManyObjects},
		{"Misaligned", testMisaligned},
		{"ObjectClosed", testObjectClosed},
		{"BackendClosed", testBackendClosed},
		{"OddKeys", testOddKeys},
		{"Sync", testSync},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSuite(t, newBackend(t))
			tc.fn(s)
		})
	}
}

// suite is one subtest's backend and what the suite derived from its Caps.
type suite struct {
	t      *testing.T
	b      backend.Backend
	caps   backend.Caps
	align  int   // Caps().Align, at least 1
	block  int   // the suite's block: max(align, 4096)
	null   bool  // skip data checks
	closed bool  // the subtest closed the backend itself
	usable int64 // Capacity rounded down to block; 0 when unbounded
}

func newSuite(t *testing.T, b backend.Backend) *suite {
	t.Helper()
	if b == nil {
		t.Fatal("newBackend returned nil")
	}
	s := &suite{t: t, b: b, caps: b.Caps()}
	s.align = max(s.caps.Align, 1)
	s.block = max(s.align, 4096)
	name := s.caps.Name
	s.null = name == "null" || strings.HasPrefix(name, "null+")
	if s.caps.Capacity > 0 {
		s.usable = s.caps.Capacity / int64(s.block) * int64(s.block)
	}
	t.Cleanup(func() {
		if s.closed {
			return
		}
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// needCapacity skips the subtest when the backend is bounded to fewer than
// n blocks.
func (s *suite) needCapacity(blocks int) {
	s.t.Helper()
	if s.caps.Capacity > 0 && s.usable < int64(blocks)*int64(s.block) {
		s.t.Skipf("capacity %d bytes is below the %d bytes this test needs", s.caps.Capacity, int64(blocks)*int64(s.block))
	}
}

func (s *suite) buf(n int) []byte { return AlignedBuffer(n, s.align) }

// create opens key with create, failing the test on an error.
func (s *suite) create(key string, size int64) backend.Object {
	s.t.Helper()
	return s.mustOpen(fmt.Sprintf("Open(%q, %d, create)", key, size), key, size, true)
}

// open opens the existing key, failing the test on an error.
func (s *suite) open(key string, size int64) backend.Object {
	s.t.Helper()
	return s.mustOpen(fmt.Sprintf("Open(%q, %d)", key, size), key, size, false)
}

// mustOpen is create's and open's Open, named call in a failure: an
// error or a nil Object fails the test.
func (s *suite) mustOpen(call, key string, size int64, create bool) backend.Object {
	s.t.Helper()
	o, err := s.b.Open(key, size, create)
	if err != nil {
		s.t.Fatalf("%s: %v", call, err)
	}
	if o == nil {
		s.t.Fatalf("%s returned a nil Object and no error", call)
	}
	return o
}

// writeAll writes the pattern of seed over the whole object, chunk bytes
// per WriteAt.
func (s *suite) writeAll(o backend.Object, size int64, seed uint64, chunk int) {
	s.t.Helper()
	p := s.buf(chunk)
	for off := int64(0); off < size; off += int64(chunk) {
		q := p[:min(int64(chunk), size-off)]
		Fill(q, seed, off)
		n, err := o.WriteAt(q, off)
		if err != nil || n != len(q) {
			s.t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", len(q), off, n, err)
		}
	}
}

// checkAll reads the whole object, chunk bytes per ReadAt, and compares it
// with the pattern of seed (unless the backend stores no data).
func (s *suite) checkAll(o backend.Object, size int64, seed uint64, chunk int) {
	s.t.Helper()
	p := s.buf(chunk)
	want := make([]byte, chunk)
	for off := int64(0); off < size; off += int64(chunk) {
		q := p[:min(int64(chunk), size-off)]
		n, err := o.ReadAt(q, off)
		if err != nil || n != len(q) {
			s.t.Fatalf("ReadAt(%d bytes, %d) = %d, %v", len(q), off, n, err)
		}
		s.checkBytes(q, seed, off, want[:len(q)])
	}
}

// checkBytes compares got with the pattern of (seed, off), using want as
// scratch space.
func (s *suite) checkBytes(got []byte, seed uint64, off int64, want []byte) {
	s.t.Helper()
	if s.null {
		return
	}
	Fill(want, seed, off)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		s.t.Fatalf("bytes read at %d differ from those written (seed %d) from byte %d on", off, seed, off+int64(i))
	}
}

func (s *suite) wantErr(what string, err, target error) {
	s.t.Helper()
	if !errors.Is(err, target) {
		s.t.Errorf("%s: err = %v, want errors.Is(err, %v)", what, err, target)
	}
}

func (s *suite) closeObject(o backend.Object) {
	s.t.Helper()
	if err := o.Close(); err != nil {
		s.t.Fatalf("Object.Close: %v", err)
	}
}

func (s *suite) remove(o backend.Object) {
	s.t.Helper()
	if err := o.Remove(); err != nil {
		s.t.Fatalf("Object.Remove: %v", err)
	}
}

func testCaps(s *suite) {
	c := s.caps
	if c.Name == "" {
		s.t.Error("Caps().Name is empty")
	}
	if c.Align < 1 || bits.OnesCount(uint(c.Align)) != 1 {
		s.t.Errorf("Caps().Align = %d, want a power of two (1 when anything goes)", c.Align)
	}
	if c.Capacity < 0 {
		s.t.Errorf("Caps().Capacity = %d, want >= 0", c.Capacity)
	}
	for _, w := range c.Warnings {
		if w == "" {
			s.t.Error("Caps().Warnings holds an empty warning")
		}
	}
}

func testWriteReadBack(s *suite) {
	s.needCapacity(64)
	blk := s.block
	cases := []struct {
		key    string
		blocks int
		chunk  int // bytes per I/O
	}{
		{"one", 1, blk},
		{"three", 3, blk},
		{"sixteen-by-block", 16, blk},
		{"sixteen-by-four", 16, 4 * blk},
		{"sixteen-whole", 16, 16 * blk},
	}
	for i, c := range cases {
		size := int64(c.blocks * blk)
		o := s.create(c.key, size)
		s.writeAll(o, size, uint64(i+1), c.chunk)
		// Read back with the block size, whatever the write size was, then
		// whole: both must see the same bytes, the last block full.
		s.checkAll(o, size, uint64(i+1), blk)
		s.checkAll(o, size, uint64(i+1), int(size))
		s.closeObject(o)
	}
	// The data outlives the Object: reopen without create.
	for i, c := range cases {
		size := int64(c.blocks * blk)
		o := s.open(c.key, size)
		s.checkAll(o, size, uint64(i+1), blk)
		s.closeObject(o)
	}
	// Writing in the middle changes only that block.
	o := s.open("three", int64(3*blk))
	p := s.buf(blk)
	Fill(p, 99, int64(blk))
	if n, err := o.WriteAt(p, int64(blk)); err != nil || n != blk {
		s.t.Fatalf("WriteAt(middle) = %d, %v", n, err)
	}
	q := s.buf(blk)
	want := make([]byte, blk)
	for i, seed := range []uint64{2, 99, 2} {
		off := int64(i * blk)
		if n, err := o.ReadAt(q, off); err != nil || n != blk {
			s.t.Fatalf("ReadAt(%d) = %d, %v", off, n, err)
		}
		s.checkBytes(q, seed, off, want)
	}
	s.closeObject(o)
}

func testOpenMissing(s *suite) {
	o, err := s.b.Open("missing", int64(s.block), false)
	s.wantErr(`Open("missing") without create`, err, backend.ErrNotFound)
	if o != nil {
		s.t.Error(`Open("missing") without create returned an Object with its error`)
	}
	// A removed key is missing too, and a key that is a prefix of an
	// existing one is another key.
	s.closeObject(s.create("present", int64(s.block)))
	_, err = s.b.Open("pres", int64(s.block), false)
	s.wantErr(`Open("pres") beside "present"`, err, backend.ErrNotFound)
}

func testCreateReplaces(s *suite) {
	s.needCapacity(16)
	blk := int64(s.block)
	o := s.create("k", 2*blk)
	s.writeAll(o, 2*blk, 1, s.block)
	s.closeObject(o)

	// Replace with a bigger object: its bytes, its size.
	o = s.create("k", 3*blk)
	s.writeAll(o, 3*blk, 2, s.block)
	s.closeObject(o)
	o = s.open("k", 3*blk)
	s.checkAll(o, 3*blk, 2, s.block)
	s.closeObject(o)

	// Replace with a smaller one: the old tail is gone.
	o = s.create("k", blk)
	s.writeAll(o, blk, 3, s.block)
	s.closeObject(o)
	o = s.open("k", blk)
	s.checkAll(o, blk, 3, s.block)
	p := s.buf(s.block)
	if n, err := o.ReadAt(p, blk); n != 0 || !errors.Is(err, io.EOF) {
		s.t.Errorf("ReadAt past the end of the replacement = %d, %v; want 0, io.EOF", n, err)
	}
	// There is one object: removing it leaves none.
	s.remove(o)
	_, err := s.b.Open("k", blk, false)
	s.wantErr("Open after Remove of the replacement", err, backend.ErrNotFound)
}

func testRemove(s *suite) {
	s.needCapacity(256)
	blk := int64(s.block)
	o := s.create("gone", 2*blk)
	s.writeAll(o, 2*blk, 1, s.block)
	s.remove(o)
	_, err := s.b.Open("gone", 2*blk, false)
	s.wantErr("Open after Remove", err, backend.ErrNotFound)
	// The key can be created again.
	o = s.create("gone", blk)
	s.writeAll(o, blk, 2, s.block)
	s.checkAll(o, blk, 2, s.block)
	s.remove(o)

	// Many objects of mixed sizes, removed in an order that leaves holes
	// between live ones before it fills them, then all gone.
	const n = 64
	size := func(i int) int64 { return int64(1+i%4) * blk }
	for i := range n {
		o := s.create(fmt.Sprintf("obj-%d", i), size(i))
		s.writeAll(o, size(i), uint64(i), s.block)
		s.closeObject(o)
	}
	order := make([]int, 0, n)
	for i := 0; i < n; i += 2 {
		order = append(order, i)
	}
	for i := n - 1; i > 0; i -= 2 {
		order = append(order, i)
	}
	for k, i := range order {
		key := fmt.Sprintf("obj-%d", i)
		o := s.open(key, size(i))
		s.checkAll(o, size(i), uint64(i), s.block)
		s.remove(o)
		if _, err := s.b.Open(key, size(i), false); !errors.Is(err, backend.ErrNotFound) {
			s.t.Fatalf("Open(%q) after Remove: err = %v, want ErrNotFound", key, err)
		}
		if k == n/2 {
			// Half removed: the others are intact.
			for _, j := range order[k+1:] {
				o := s.open(fmt.Sprintf("obj-%d", j), size(j))
				s.checkAll(o, size(j), uint64(j), s.block)
				s.closeObject(o)
			}
		}
	}
	if s.usable > 0 {
		// Everything was given back, in one piece.
		o := s.create("whole", s.usable)
		s.remove(o)
	}
}

func testPastEnd(s *suite) {
	blk := int64(s.block)
	o := s.create("k", 2*blk)
	s.writeAll(o, 2*blk, 1, s.block)
	p := s.buf(2 * s.block)
	n, err := o.ReadAt(p[:s.block], 2*blk)
	if n != 0 || !errors.Is(err, io.EOF) {
		s.t.Errorf("ReadAt at the end = %d, %v; want 0, io.EOF", n, err)
	}
	n, err = o.ReadAt(p, blk)
	if n != s.block || !errors.Is(err, io.EOF) {
		s.t.Errorf("ReadAt across the end = %d, %v; want %d, io.EOF", n, err, s.block)
	} else {
		s.checkBytes(p[:n], 1, blk, make([]byte, n))
	}
	Fill(p, 2, blk)
	n, err = o.WriteAt(p, blk)
	if err == nil || n != 0 {
		s.t.Errorf("WriteAt across the end = %d, %v; want 0 and an error", n, err)
	}
	n, err = o.WriteAt(p[:s.block], 2*blk)
	if err == nil || n != 0 {
		s.t.Errorf("WriteAt at the end = %d, %v; want 0 and an error", n, err)
	}
	// The failed writes changed nothing.
	s.checkAll(o, 2*blk, 1, s.block)
	n, err = o.ReadAt(p[:s.block], -blk)
	if err == nil || n != 0 {
		s.t.Errorf("ReadAt at a negative offset = %d, %v; want 0 and an error", n, err)
	}
	s.closeObject(o)
}

func testNoSpace(s *suite) {
	if s.caps.Capacity == 0 {
		s.t.Skip("unbounded backend (Capacity 0)")
	}
	s.needCapacity(4)
	blk := int64(s.block)
	tooBig := (s.caps.Capacity/blk + 1) * blk
	o, err := s.b.Open("huge", tooBig, true)
	s.wantErr(fmt.Sprintf("Open of %d bytes in a capacity of %d", tooBig, s.caps.Capacity), err, backend.ErrNoSpace)
	if o != nil {
		s.t.Error("a failed Open returned an Object")
	}
	if _, err := s.b.Open("huge", tooBig, false); !errors.Is(err, backend.ErrNotFound) {
		s.t.Errorf("a failed create left an object behind: Open = %v, want ErrNotFound", err)
	}
	// Two objects of more than half the capacity do not fit together; they
	// do one after the other.
	half := s.usable/2/blk*blk + blk
	a := s.create("a", half)
	_, err = s.b.Open("b", half, true)
	s.wantErr("Open of a second object of more than half the capacity", err, backend.ErrNoSpace)
	s.remove(a)
	bo := s.create("b", half)
	s.remove(bo)
}

func testConcurrentOneObject(s *suite) {
	const blocks, workers = 64, 8
	s.needCapacity(blocks)
	blk := s.block
	size := int64(blocks * blk)
	o := s.create("shared", size)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	// Worker w owns blocks w, w+workers, ...: different ranges, at once.
	for w := range workers {
		wg.Go(func() {
			p := s.buf(blk)
			for i := w; i < blocks; i += workers {
				off := int64(i * blk)
				Fill(p, 7, off)
				if n, err := o.WriteAt(p, off); err != nil || n != blk {
					errs <- fmt.Errorf("worker %d: WriteAt(%d) = %d, %w", w, off, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Fatal(err)
	}
	errs = make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			p := s.buf(blk)
			want := make([]byte, blk)
			for i := w; i < blocks; i += workers {
				off := int64(i * blk)
				if n, err := o.ReadAt(p, off); err != nil || n != blk {
					errs <- fmt.Errorf("worker %d: ReadAt(%d) = %d, %w", w, off, n, err)
					return
				}
				if s.null {
					continue
				}
				Fill(want, 7, off)
				if !bytes.Equal(p, want) {
					errs <- fmt.Errorf("worker %d: block at %d differs from the one written", w, off)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Error(err)
	}
	s.closeObject(o)
}

func testConcurrentManyObjects(s *suite) {
	const workers, perWorker, blocks = 16, 4, 4
	s.needCapacity(workers * perWorker * blocks)
	blk := s.block
	size := int64(blocks * blk)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			p := s.buf(blk)
			want := make([]byte, blk)
			fail := func(err error) { errs <- fmt.Errorf("worker %d: %w", w, err) }
			var objs []backend.Object
			for k := range perWorker {
				seed := uint64(w*perWorker + k)
				o, err := s.b.Open(fmt.Sprintf("w%d/o%d", w, k), size, true)
				if err != nil {
					fail(err)
					return
				}
				objs = append(objs, o)
				for i := range blocks {
					off := int64(i * blk)
					Fill(p, seed, off)
					if _, err := o.WriteAt(p, off); err != nil {
						fail(err)
						return
					}
				}
			}
			for k, o := range objs {
				seed := uint64(w*perWorker + k)
				for i := blocks - 1; i >= 0; i-- {
					off := int64(i * blk)
					if _, err := o.ReadAt(p, off); err != nil {
						fail(err)
						return
					}
					if s.null {
						continue
					}
					Fill(want, seed, off)
					if !bytes.Equal(p, want) {
						fail(fmt.Errorf("object %d: block at %d differs from the one written", k, off))
						return
					}
				}
				var err error
				if k%2 == 0 {
					err = o.Remove()
				} else {
					err = o.Close()
				}
				if err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Error(err)
	}
	for w := range workers {
		for k := range perWorker {
			key := fmt.Sprintf("w%d/o%d", w, k)
			o, err := s.b.Open(key, size, false)
			if k%2 == 0 {
				s.wantErr(fmt.Sprintf("Open(%q) after Remove", key), err, backend.ErrNotFound)
				continue
			}
			if err != nil {
				s.t.Fatalf("Open(%q): %v", key, err)
			}
			s.checkAll(o, size, uint64(w*perWorker+k), blk)
			s.remove(o)
		}
	}
}

func testMisaligned(s *suite) {
	a := s.align
	if a == 1 {
		s.t.Skip("Caps().Align is 1: anything goes")
	}
	_, err := s.b.Open("odd-size", int64(a)+1, true)
	s.wantErr(fmt.Sprintf("Open(create) of %d bytes", a+1), err, backend.ErrMisaligned)
	if _, err := s.b.Open("odd-size", int64(a)+1, false); !errors.Is(err, backend.ErrNotFound) {
		s.t.Errorf("a misaligned create left an object behind: Open = %v, want ErrNotFound", err)
	}

	size := int64(4 * s.block)
	o := s.create("k", size)
	s.writeAll(o, size, 1, s.block)
	p := s.buf(2 * s.block)
	cases := []struct {
		name string
		p    []byte
		off  int64
	}{
		{"buffer address +1", p[1 : 1+a], 0},
		{"buffer address +align/2", p[a/2 : a/2+a], 0},
		{"offset 1", p[:a], 1},
		{"offset align/2", p[:a], int64(a / 2)},
		{"offset align+1", p[:a], int64(a) + 1},
		{"length 1", p[:1], 0},
		{"length align/2", p[:a/2], 0},
		{"length align+1", p[:a+1], 0},
	}
	for _, c := range cases {
		for i := range c.p {
			c.p[i] = 0xAA
		}
		n, err := o.WriteAt(c.p, c.off)
		s.wantErr("WriteAt with "+c.name, err, backend.ErrMisaligned)
		if n != 0 {
			s.t.Errorf("WriteAt with %s wrote %d bytes", c.name, n)
		}
		n, err = o.ReadAt(c.p, c.off)
		s.wantErr("ReadAt with "+c.name, err, backend.ErrMisaligned)
		if n != 0 {
			s.t.Errorf("ReadAt with %s read %d bytes", c.name, n)
		}
	}
	s.checkAll(o, size, 1, s.block)
	s.closeObject(o)
}

func testObjectClosed(s *suite) {
	blk := int64(s.block)
	p := s.buf(s.block)
	check := func(what string, o backend.Object) {
		s.t.Helper()
		_, err := o.ReadAt(p, 0)
		s.wantErr(what+": ReadAt", err, backend.ErrClosed)
		_, err = o.WriteAt(p, 0)
		s.wantErr(what+": WriteAt", err, backend.ErrClosed)
		s.wantErr(what+": Close", o.Close(), backend.ErrClosed)
		s.wantErr(what+": Remove", o.Remove(), backend.ErrClosed)
		if so, ok := o.(backend.Syncer); ok {
			s.wantErr(what+": Sync", so.Sync(), backend.ErrClosed)
		}
	}
	o := s.create("k", blk)
	s.writeAll(o, blk, 1, s.block)
	s.closeObject(o)
	check("after Close", o)
	// Closing one Object leaves the object, and other Objects of it, alone.
	o1, o2 := s.open("k", blk), s.open("k", blk)
	s.closeObject(o1)
	s.checkAll(o2, blk, 1, s.block)
	s.remove(o2)
	check("after Remove", o2)
}

// testSync: an Object that is a backend.Syncer syncs what was written,
// which stays readable; a backend without it has nothing to check.
func testSync(s *suite) {
	blk := int64(s.block)
	o := s.create("k", 2*blk)
	so, ok := o.(backend.Syncer)
	if !ok {
		s.closeObject(o)
		s.t.Skipf("%s objects are not backend.Syncer", s.caps.Name)
	}
	s.writeAll(o, 2*blk, 3, s.block)
	if err := so.Sync(); err != nil {
		s.t.Fatalf("Sync: %v", err)
	}
	s.checkAll(o, 2*blk, 3, s.block)
	s.closeObject(o)
}

func testBackendClosed(s *suite) {
	blk := int64(s.block)
	o := s.create("k", blk)
	s.writeAll(o, blk, 1, s.block)
	if err := s.b.Close(); err != nil {
		s.t.Fatalf("Close: %v", err)
	}
	s.closed = true
	_, err := s.b.Open("k", blk, false)
	s.wantErr("Open after Close", err, backend.ErrClosed)
	_, err = s.b.Open("new", blk, true)
	s.wantErr("Open(create) after Close", err, backend.ErrClosed)
	p := s.buf(s.block)
	_, err = o.ReadAt(p, 0)
	s.wantErr("ReadAt of an Object of a closed backend", err, backend.ErrClosed)
	_, err = o.WriteAt(p, 0)
	s.wantErr("WriteAt of an Object of a closed backend", err, backend.ErrClosed)
	s.wantErr("Remove of an Object of a closed backend", o.Remove(), backend.ErrClosed)
	s.wantErr("Close again", s.b.Close(), backend.ErrClosed)
}

// oddKeys are keys a file-backed store could confuse with each other or
// with paths outside its directory.
func oddKeys() []string {
	return []string{
		"",
		"a",
		"a/b",
		"a/b/c",
		"a%2Fb",
		"a%2fb",
		"a_2Fb",
		"a.b",
		".",
		"..",
		"...",
		"./a",
		"../escape",
		"../../../../etc/kvbench-replaytest",
		"/abs/olute",
		".hidden",
		"%2Ehidden",
		"-dash",
		"~tilde",
		"with space",
		"tab\tnew\nline",
		"nul\x00byte",
		"\xff\xfe not utf-8",
		"ключ/日本語/🔑",
		strings.Repeat("k", 300),
		strings.Repeat("k", 299) + "j",
		strings.Repeat("/", 300),
		strings.Repeat("é", 150),
		strings.Repeat("%", 120),
		strings.ToUpper("case"),
		"case",
	}
}

func testOddKeys(s *suite) {
	keys := oddKeys()
	s.needCapacity(3 * len(keys))
	blk := int64(s.block)
	size := func(i int) int64 { return int64(1+i%3) * blk }
	for i, key := range keys {
		o := s.create(key, size(i))
		s.writeAll(o, size(i), uint64(i+100), s.block)
		s.closeObject(o)
	}
	// Each key holds its own bytes: no two keys share storage.
	for i, key := range keys {
		o := s.open(key, size(i))
		s.checkAll(o, size(i), uint64(i+100), s.block)
		s.closeObject(o)
	}
	// Removing one removes only it.
	for i, key := range keys {
		o := s.open(key, size(i))
		s.remove(o)
		if _, err := s.b.Open(key, size(i), false); !errors.Is(err, backend.ErrNotFound) {
			s.t.Fatalf("Open(%q) after Remove: err = %v, want ErrNotFound", key, err)
		}
		for j := i + 1; j < len(keys); j++ {
			o := s.open(keys[j], size(j))
			s.closeObject(o)
		}
	}
}

// InPieces opens an object of n bytes in b, an empty arena of capacity
// bytes, that lies in two pieces or more: the hole a removed object of
// hole bytes left at the start, and the space after the object that
// followed it. It fails t where the object lies in one piece.
func InPieces(t *testing.T, b backend.Backend, capacity int64, key string, hole, n int64) backend.Object {
	t.Helper()
	first, err := b.Open(key+"-hole", hole, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(key+"-after", capacity-n, true); err != nil {
		t.Fatal(err)
	}
	if err := first.Remove(); err != nil {
		t.Fatal(err)
	}
	o, err := b.Open(key, n, true)
	if err != nil {
		t.Fatal(err)
	}
	var pieces int
	o.(arena.Spanner).Span(0, n, func(arena.Memory, int64, int64) error { pieces++; return nil })
	if pieces < 2 {
		t.Fatalf("%s lies in %d pieces; the test needs it in two or more", key, pieces)
	}
	return o
}
