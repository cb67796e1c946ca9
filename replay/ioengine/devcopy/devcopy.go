// Package devcopy is the mover between the gpu tier's device memory
// (replay/gpu) and the RAM tier's arena (replay/ram): a demotion from GPU
// memory to CPU RAM is one device-to-host copy into the RAM tier's own
// memory, and a promotion back one host-to-device copy out of it, with no
// staging buffer between, the RAM arena pinned with cudaHostRegister so
// that the copies run at the link's speed. kvreplay gives it to every
// replay that maps a tier to gpu and one to ram.
//
// It is tested against the fake CUDA runtime (internal/cuda's testdata);
// it has not yet run on a GPU.
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
		e := &engine{pinned: pinned, pins: map[uintptr]gpu.Arena{}}
		e.work = ioengine.NewWorkers(p, p.Depth, e.move)
		return e, nil
	}
}

type engine struct {
	pinned func(string)
	work   *ioengine.Workers

	mu   sync.Mutex
	pins map[uintptr]gpu.Arena // RAM arenas pinned, by address, with the GPU that pinned them
}

func (e *engine) Name() string { return "devcopy" }

// Serves is false: the engine takes only moves.
func (e *engine) Serves(backend.Object) bool { return false }

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
	return errors.Join(errs...)
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
