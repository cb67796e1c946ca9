// Package devcopy is the I/O engine of the gpu tier's device memory
// (replay/gpu), and the mover between it and the RAM tier's arena
// (replay/ram).
//
// It serves the gpu tier's objects from pinned buffers of its own
// (cudaHostAlloc, a block each): a write's bytes are made in one and
// copied from it to the device, a read's copied into one and checked
// there. The gpu tier's own ReadAt and WriteAt, which a pool engine
// calls, copy through the tier's staging buffers instead, a memcpy more
// per block on the host: on an H100 of a 16-core virtual machine, with
// them, memmove took a third of a --verify replay's CPU time in 16 MiB
// blocks, and with this engine (and the tier's poller, which came with
// it) the replay read 16 MiB blocks 1.7 times as fast (38.0-41.0 against
// 22.7-23.4 GB/s by its clock, with --verify, on 2026-11-27).
//
// As a mover, a demotion from GPU memory to CPU RAM is one device-to-host
// copy into the RAM tier's own memory, and a promotion back one
// host-to-device copy out of it, with no staging buffer between, the RAM
// arena pinned with cudaHostRegister so that the copies run at the link's
// speed. kvreplay gives it to every replay that maps a tier to gpu.
//
// It is tested against the fake CUDA runtime (internal/cuda's testdata)
// and ran on an H100 (bench/gpu-check.sh).
package devcopy

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ram"
)

// New returns the factory of the mover. pinned, when set, is told once
// how pinning the RAM arena went ("pinned", or why not: the copies then
// run from pageable memory).
func New(pinned func(string)) ioengine.Factory {
	return func(p ioengine.Params) (ioengine.Engine, error) {
		// The GPU reads a written block next, not the CPU.
		e := &engine{p: p, fill: p.DeviceFill(), pinned: pinned, pins: map[uintptr]gpu.Arena{}, bufs: map[int]*buffers{}}
		e.work = ioengine.NewWorkers(p, p.Depth, e.do)
		return e, nil
	}
}

type engine struct {
	p      ioengine.Params
	fill   func(p []byte, op *ioengine.Op) // Data's FillDevice, where it has one
	pinned func(string)
	work   *ioengine.Workers

	mu   sync.Mutex
	pins map[uintptr]gpu.Arena // RAM arenas pinned, by address, with the GPU that pinned them
	bufs map[int]*buffers      // the blocks' pinned buffers, by GPU
}

// buffers are a GPU's pinned block buffers, one per worker: all made
// when the first op that serves a gpu object needs one, and kept (moves
// copy from the RAM arena and need none). Pinning memory holds up every
// copy the driver runs meanwhile: made one at a time as ops needed them,
// 32 buffers of 16 MiB held the first writes of an H100's replay back
// while the others' copies were in flight.
type buffers struct {
	arena gpu.Arena
	free  chan []byte
	all   [][]byte
}

func (e *engine) Name() string { return "devcopy" }

// Serves reports whether obj lives in a gpu arena.
func (e *engine) Serves(obj backend.Object) bool { return kind(obj) == onGPU }

// Moves reports whether one of dst and from lives in a gpu arena and the
// other in a RAM arena.
func (e *engine) Moves(dst, from backend.Object) bool {
	return (kind(dst) == onGPU && kind(from) == onHost) || (kind(dst) == onHost && kind(from) == onGPU)
}

type where int

const (
	elsewhere where = iota
	onGPU
	onHost
)

func kind(obj backend.Object) where {
	if gpu.Holds(obj) {
		return onGPU
	}
	if s, ok := obj.(arena.Spanner); ok {
		if _, ok := ram.HostBytes(s.Arena()); ok {
			return onHost
		}
	}
	return elsewhere
}

func (e *engine) Submit(op *ioengine.Op) { e.work.Submit(op) }

func (e *engine) Close() error {
	e.work.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for addr, a := range e.pins {
		if a.Runtime != nil { // nil: pinning it failed
			errs = append(errs, a.Unpin(addr))
		}
	}
	e.pins = nil
	for _, bs := range e.bufs {
		for _, b := range bs.all {
			errs = append(errs, bs.arena.FreeHost(b))
		}
	}
	e.bufs = nil
	return errors.Join(errs...)
}

// do runs an op: a move's block, or a block of a gpu object.
func (e *engine) do(op *ioengine.Op) error {
	if op.From != nil && e.Moves(op.Obj, op.From) {
		return e.move(op)
	}
	return e.serve(op)
}

// serve writes or reads op's block of a gpu object through a pinned
// buffer: made there (with the Data's FillDevice, non-temporal stores
// where it has them: a block the CPU has just written through its caches
// copied host-to-device at half the rate of one it left alone, in
// PyTorch on an H100) and copied to the device, or copied from it and
// checked there.
func (e *engine) serve(op *ioengine.Op) error {
	s, ok := op.Obj.(arena.Spanner)
	if !ok {
		return fmt.Errorf("devcopy: %s: not an object in an arena", op.Key)
	}
	a, ok := gpu.ArenaOf(s.Arena())
	if !ok {
		return fmt.Errorf("devcopy: %s: not in a gpu arena", op.Key)
	}
	buf, put, err := e.buffer(a)
	if err != nil {
		return fmt.Errorf("devcopy: %s: a pinned buffer of %d bytes: %w", op.Key, e.p.BlockSize, err)
	}
	defer put()
	p := buf[:op.N]
	if op.Write {
		e.fill(p, op)
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	err = s.Span(op.Off, op.N, func(mem arena.Memory, at, n int64) error {
		err := gpu.CopyDirect(mem, addr, at, int(n), op.Write)
		addr += uintptr(n)
		return err
	})
	if err != nil {
		what := "read"
		if op.Write {
			what = "write"
		}
		return fmt.Errorf("devcopy: %s %s, %d bytes at %d: %w", what, op.Key, op.N, op.Off, err)
	}
	if op.Write {
		return nil
	}
	return e.p.Data.Check(p, op)
}

// buffer returns a pinned buffer of a block for a's GPU, and the func
// that gives it back.
func (e *engine) buffer(a gpu.Arena) ([]byte, func(), error) {
	e.mu.Lock()
	if e.bufs == nil {
		e.mu.Unlock()
		return nil, nil, errors.New("closed")
	}
	bs := e.bufs[a.Device]
	if bs == nil {
		bs = &buffers{arena: a, free: make(chan []byte, e.p.Depth)}
		e.bufs[a.Device] = bs
		for range e.p.Depth {
			b, err := a.HostAlloc(e.p.BlockSize)
			if err != nil {
				// Those made are freed; the next op tries again.
				delete(e.bufs, a.Device)
				for _, b := range bs.all {
					a.FreeHost(b)
				}
				e.mu.Unlock()
				return nil, nil, err
			}
			bs.all = append(bs.all, b)
			bs.free <- b
		}
	}
	e.mu.Unlock()
	// The pool's workers hold a buffer each at most: one is free.
	b := <-bs.free
	return b, func() { bs.free <- b }, nil
}

// piece is a run of an object's bytes in its arena.
type piece struct {
	mem     arena.Memory
	at, len int64
}

// pieces lists where the n bytes of obj at off lie. The scheduler runs no
// other task of the key while a move's blocks do, so the pieces stay the
// object's while the copies run.
func pieces(obj backend.Object, off, n int64) ([]piece, error) {
	var ps []piece
	err := obj.(arena.Spanner).Span(off, n, func(mem arena.Memory, at, m int64) error {
		ps = append(ps, piece{mem, at, m})
		return nil
	})
	return ps, err
}

// move copies op's block from op.From to op.Obj, the two objects' pieces
// walked side by side.
func (e *engine) move(op *ioengine.Op) error {
	toDevice := kind(op.Obj) == onGPU
	dst, err := pieces(op.Obj, op.Off, op.N)
	if err != nil {
		return err
	}
	src, err := pieces(op.From, op.Off, op.N)
	if err != nil {
		return err
	}
	dev, host := src, dst
	if toDevice {
		dev, host = dst, src
	}
	for len(dev) > 0 && len(host) > 0 {
		d, h := &dev[0], &host[0]
		n := min(d.len, h.len)
		hb, _ := ram.HostBytes(h.mem)
		if err := e.pin(d.mem, hb); err != nil {
			return err
		}
		addr := uintptr(unsafe.Pointer(unsafe.SliceData(hb))) + uintptr(h.at)
		if err := gpu.CopyDirect(d.mem, addr, d.at, int(n), toDevice); err != nil {
			return fmt.Errorf("devcopy: %s, %d bytes at %d: %w", op.Key, n, op.Off, err)
		}
		d.at, d.len, h.at, h.len = d.at+n, d.len-n, h.at+n, h.len-n
		if d.len == 0 {
			dev = dev[1:]
		}
		if h.len == 0 {
			host = host[1:]
		}
	}
	if len(dev) > 0 || len(host) > 0 {
		return fmt.Errorf("devcopy: %s at %d: the two copies' pieces differ in length", op.Key, op.Off)
	}
	return nil
}

// pin pins the RAM arena hb for the GPU of mem once; a failure is
// recorded, and the copies run from pageable memory.
func (e *engine) pin(mem arena.Memory, hb []byte) error {
	a, ok := gpu.ArenaOf(mem)
	if !ok || len(hb) == 0 {
		return errors.New("devcopy: not a gpu and a RAM arena")
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(hb)))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pins == nil {
		return errors.New("devcopy: closed")
	}
	if _, done := e.pins[addr]; done {
		return nil
	}
	if err := a.Pin(addr, uint64(len(hb))); err != nil {
		e.pins[addr] = gpu.Arena{} // tried: not again
		if e.pinned != nil {
			e.pinned(fmt.Sprintf("not pinned (%v): copies from pageable memory", err))
		}
		return nil
	}
	e.pins[addr] = a
	if e.pinned != nil {
		e.pinned("pinned")
	}
	return nil
}

var _ ioengine.Mover = (*engine)(nil)
