package devcopy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/replaytest"
)

// liveGPU is fakeGPU with what the fake runtime counts as handed out and
// not yet back (fake_cuda_live: 1 is pinned host allocations).
func liveGPU(t *testing.T, capacity int64) (*gpu.Backend, func(what int) int) {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	path := cudatest.FakeRuntime(t)
	rt, err := cuda.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var live func(int32) int64
	purego.RegisterLibFunc(&live, lib, "fake_cuda_live")
	b, _, err := gpu.New(rt, gpu.Options{Capacity: capacity, Slots: 4, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, func(what int) int { return int(live(int32(what))) }
}

// varied makes a block's bytes from its offset and each byte's place, with
// no period of a page or less (keyed's repeat every 256 bytes), so that a
// piece copied from the wrong place in the block shows.
type varied struct{}

func (varied) Fill(p []byte, op *ioengine.Op) {
	for i := range p {
		j := int(op.Off) + i
		p[i] = byte(j*7 + j>>8 + j>>12)
	}
}

func (varied) Check(p []byte, op *ioengine.Op) error {
	want := make([]byte, len(p))
	varied{}.Fill(want, op)
	if !bytes.Equal(p, want) {
		return errors.New("bytes differ")
	}
	return nil
}

// TestMovesInPieces_mt3 pins a move's copies: blocks of an object that
// lies in pieces in both arenas, at a nonzero offset, are promoted from
// RAM to the GPU and demoted back to RAM byte for byte, each copy
// counted by the gpu tier in its direction; each RAM arena is pinned
// once, and Close unpins them and frees every pinned buffer the engine
// made.
func TestMovesInPieces_mt3(t *testing.T) {
	g, live := liveGPU(t, 1<<20)
	const size, block, capacity = 64 << 10, 16 << 10, 128 << 10
	rams := make([]backend.Backend, 2)
	for i := range rams {
		r, err := ram.New(capacity)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rams[i] = r
	}
	// The arenas cut the objects at different places.
	onRAM := replaytest.InPieces(t, rams[0], capacity, "r", 20<<10, size)
	onGPU := replaytest.InPieces(t, g, 1<<20, "g", 28<<10, size)
	back := replaytest.InPieces(t, rams[1], capacity, "back", 12<<10, size)
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*7 + i>>12)
	}
	if _, err := onRAM.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	var told []string
	done := make(chan *ioengine.Op, 16)
	e, err := New(func(s string) { told = append(told, s) })(ioengine.Params{Depth: 2, BlockSize: block, Data: varied{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	moves := func(dst, from backend.Object) []*ioengine.Op {
		var ops []*ioengine.Op
		for off := int64(block); off < size; off += block {
			ops = append(ops, &ioengine.Op{Obj: dst, From: from, Key: "k", Write: true, Off: off, N: block})
		}
		return ops
	}
	// A block served, not moved, across the GPU object's two pieces: the
	// engine makes a pinned buffer for it, and its bytes land in order.
	// (The arena puts the larger piece first: 36 KiB, then 28.)
	served := &ioengine.Op{Obj: onGPU, Key: "k", Write: true, Off: 32 << 10, N: block}
	e.Submit(served)
	if <-done; served.Err != nil {
		t.Fatal(served.Err)
	}
	made, got := make([]byte, block), make([]byte, block)
	varied{}.Fill(made, served)
	if _, err := onGPU.ReadAt(got, served.Off); err != nil || !bytes.Equal(got, made) {
		t.Errorf("a served block across two pieces reads back different (%v)", err)
	}
	before := g.Copies()
	steps := []struct {
		name     string
		ops      []*ioengine.Op
		h2d, d2h int64
	}{
		{"promotion", moves(onGPU, onRAM), size - block, 0},
		{"demotion", moves(back, onGPU), 0, size - block},
	}
	for _, st := range steps {
		for _, op := range st.ops {
			e.Submit(op)
			<-done // one at a time: the demotion reads what the promotion wrote
			if op.Err != nil {
				t.Fatal(op.Err)
			}
		}
		c := g.Copies()
		if h, d := c.H2D.Bytes-before.H2D.Bytes, c.D2H.Bytes-before.D2H.Bytes; h != st.h2d || d != st.d2h {
			t.Errorf("%s: the gpu tier counted %d bytes to the device and %d from it; want %d and %d", st.name, h, d, st.h2d, st.d2h)
		}
		before = c
	}
	if len(told) != 2 || told[0] != "pinned" || told[1] != "pinned" {
		t.Errorf("told of pinning %q; want \"pinned\" once for each RAM arena", told)
	}
	made0 := len(e.(*engine).bufs[0].all)
	live0 := live(1) // the engine's buffers and the tier's staging
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := live0 - live(1); made0 < 1 || n != made0 {
		t.Errorf("Close freed %d pinned host buffers of the %d the engine made", n, made0)
	}
	// Unpinned by Close: pinning the RAM arena again succeeds.
	a, _ := gpu.ArenaOf(onGPU.(arena.Spanner).Arena())
	hb, _ := ram.HostBytes(onRAM.(arena.Spanner).Arena())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(hb)))
	if err := a.Pin(p, uint64(len(hb))); err != nil {
		t.Errorf("pinning the RAM arena after Close: %v; Close left it pinned", err)
	} else {
		a.Unpin(p)
	}
	got = make([]byte, size)
	if _, err := onGPU.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}

	if !bytes.Equal(got[block:], want[block:]) {
		t.Errorf("the GPU object's bytes after the promotion differ from the RAM object's")
	}
	if _, err := back.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[block:], want[block:]) {
		t.Errorf("the RAM object's bytes after the demotion differ from the GPU object's")
	}
}

// TestPinRefused_mt3 pins a failed pinning: told once, with CUDA's
// reason, the copies still run (from pageable memory), the engine tries
// no more, and Close leaves alone the registration it did not make.
func TestPinRefused_mt3(t *testing.T) {
	g, _ := liveGPU(t, 1<<20)
	r, err := ram.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	onRAM, err := r.Open("r", 16384, true)
	if err != nil {
		t.Fatal(err)
	}
	onGPU, err := g.Open("g", 16384, true)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := gpu.ArenaOf(onGPU.(arena.Spanner).Arena())
	hb, _ := ram.HostBytes(onRAM.(arena.Spanner).Arena())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(hb)))
	if err := a.Pin(p, uint64(len(hb))); err != nil { // pinned by someone else
		t.Fatal(err)
	}
	var told []string
	done := make(chan *ioengine.Op, 4)
	e, err := New(func(s string) { told = append(told, s) })(ioengine.Params{Depth: 1, BlockSize: 4096, Data: keyed{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < 16384; off += 4096 {
		op := &ioengine.Op{Obj: onGPU, From: onRAM, Key: "k", Write: true, Off: off, N: 4096}
		e.Submit(op)
		if <-done; op.Err != nil {
			t.Fatal(op.Err)
		}
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "not pinned (") || !strings.Contains(told[0], "(712)") {
		t.Errorf("told %q; want one \"not pinned (...)\" with CUDA's code 712", told)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Unpin(p); err != nil {
		t.Errorf("the registration the engine did not make: %v; Close undid it", err)
	}
}

// TestServeFailureWords_mt3 pins a served block's error: the engine, the
// direction, the key, the bytes and the offset, wrapping CUDA's error.
func TestServeFailureWords_mt3(t *testing.T) {
	g, _ := liveGPU(t, 1<<20)
	o, err := g.Open("a", 16384, true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *ioengine.Op, 4)
	e, err := New(nil)(ioengine.Params{Depth: 1, BlockSize: 4096, Data: keyed{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_ASYNC", "1")
	for _, c := range []struct {
		write bool
		want  string
	}{
		{true, "devcopy: write a, 4096 bytes at 8192: "},
		{false, "devcopy: read a, 4096 bytes at 8192: "},
	} {
		op := &ioengine.Op{Obj: o, Key: "a", Write: c.write, Off: 8192, N: 4096}
		e.Submit(op)
		<-done
		var ce *cuda.Error
		if op.Err == nil || !strings.HasPrefix(op.Err.Error(), c.want) || !errors.As(op.Err, &ce) || ce.Call != "cudaMemcpyAsync" {
			t.Errorf("write %v: %v; want %q...", c.write, op.Err, c.want)
		}
	}
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_ASYNC", "")
}

// TestBuffersAtFirstOp pins when the pinned buffers are made: all of the
// workers' at the first op, before its copy, none later; where pinning
// fails part way, the op fails, the buffers made are given back, and the
// next op makes them all.
func TestBuffersAtFirstOp(t *testing.T) {
	g, live := liveGPU(t, 1<<20)
	o, err := g.Open("a", 65536, true)
	if err != nil {
		t.Fatal(err)
	}
	const depth = 4
	done := make(chan *ioengine.Op, 16)
	e, err := New(nil)(ioengine.Params{Depth: depth, BlockSize: 4096, Data: keyed{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	base := live(1)
	cudatest.Setenv(t, "FAKE_CUDA_HOST_ALLOC_MAX", fmt.Sprint(base+2))
	op := &ioengine.Op{Obj: o, Key: "a", Write: true, Off: 0, N: 4096}
	run(t, e, done, []*ioengine.Op{op})
	if op.Err == nil || !strings.Contains(op.Err.Error(), "a pinned buffer of 4096 bytes") || live(1) != base {
		t.Errorf("pinning failed at the third buffer: %v, %d pinned buffers live; want the op failed, none", op.Err, live(1)-base)
	}
	cudatest.Setenv(t, "FAKE_CUDA_HOST_ALLOC_MAX", "")
	for i := range 3 {
		var ops []*ioengine.Op
		for off := int64(0); off < 65536; off += 4096 {
			ops = append(ops, &ioengine.Op{Obj: o, Key: "a", Write: i%2 == 0, Off: off, N: 4096})
		}
		run(t, e, done, ops)
		for _, op := range ops {
			if op.Err != nil {
				t.Fatal(op.Err)
			}
		}
		if n := live(1) - base; n != depth {
			t.Errorf("round %d: %d pinned buffers live; want %d, one a worker", i, n, depth)
		}
	}
}
