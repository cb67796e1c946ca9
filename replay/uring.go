//go:build ignore

package replay

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/kvbench/kvbench/internal/uring"
)

// fdObject is the optional capability of an Object stored in a file or
// device that the uring engine submits I/O for directly: its descriptor,
// and the offset of the object in it (0 for a file per object).
type fdObject interface {
	Fd() uintptr
}

// offsetObject is an fdObject that lives at an offset of a shared file
// (the extent layout).
type offsetObject interface {
	Offset() int64
}

// uringEngine issues the block I/O of fd-backed objects through one
// io_uring ring owned by one goroutine: batched submission and completion,
// O_DIRECT, registered buffers. Data generation and verification run on a
// pool of goroutines beside it, so the ring is never waiting for the CPU.
type uringEngine struct {
	e        *engine
	ring     *uring.Ring
	bufs     [][]byte
	free     []uint16
	inflight int
	slots    []*uringSlot
	filled   chan *uringSlot
	checked  chan *uringSlot
	fill     chan *uringSlot
	wg       sync.WaitGroup
	fixed    bool
}

// uringSlot is one block op in the ring with its buffer.
type uringSlot struct {
	op   *blockOp
	buf  uint16
	fd   int
	off  int64 // file offset of the block
	done int64 // bytes done so far (short transfers are resubmitted)
	err  error
}

// newUring sets up the ring with queue-depth entries and as many
// registered buffers of the block size.
func newUring(e *engine) (*uringEngine, error) {
	qd := e.cfg.QueueDepth
	ring, err := uring.New(uring.Params{Entries: uint32(qd)})
	if err != nil {
		return nil, err
	}
	u := &uringEngine{e: e, ring: ring, slots: make([]*uringSlot, qd),
		filled: make(chan *uringSlot, qd), checked: make(chan *uringSlot, qd), fill: make(chan *uringSlot, qd)}
	for i := range qd {
		u.bufs = append(u.bufs, alignedBuffer(int(e.cfg.BlockSize), 4096))
		u.free = append(u.free, uint16(i))
	}
	if err := ring.RegisterBuffers(u.bufs); err == nil {
		u.fixed = true
	}
	for range max(1, runtime.GOMAXPROCS(0)) {
		u.wg.Add(1)
		go u.cpuWorker()
	}
	return u, nil
}

// cpuWorker fills write buffers before submission and verifies read
// buffers after completion.
func (u *uringEngine) cpuWorker() {
	defer u.wg.Done()
	for s := range u.fill {
		op, p := s.op, u.bufs[s.buf][:s.op.n]
		if op.write {
			u.e.gen.Fill(p, op.name, op.version, op.off)
			u.filled <- s
			continue
		}
		if s.err == nil && u.e.cfg.Verify {
			s.err = u.e.verify(p, op)
		}
		u.checked <- s
	}
}

// run is the ring's goroutine: it takes block ops from in until in is
// closed and every op is done.
func (u *uringEngine) run(in <-chan *blockOp) {
	// The kernel completes requests on the submitting thread: staying on
	// one saves a cross-thread wakeup per completion.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() {
		close(u.fill)
		u.wg.Wait()
		u.ring.Close()
	}()
	open := true
	pendingCPU := 0 // slots with the CPU workers
	for open || u.inflight > 0 || pendingCPU > 0 {
		// Take new ops while buffers are free.
		for open && len(u.free) > 0 {
			var op *blockOp
			if u.inflight == 0 && pendingCPU == 0 {
				op, open = <-in // nothing else to do: block
			} else {
				select {
				case op, open = <-in:
				default:
				}
			}
			if op == nil {
				break
			}
			if !open {
				break
			}
			s := u.slot(op)
			if op.write {
				pendingCPU++
				u.fill <- s
			} else {
				u.submit(s)
			}
		}
		// Collect what the CPU workers finished.
		for drained := false; !drained; {
			select {
			case s := <-u.filled:
				pendingCPU--
				u.submit(s)
			case s := <-u.checked:
				pendingCPU--
				u.finish(s)
			default:
				drained = true
			}
		}
		if u.inflight == 0 {
			if pendingCPU > 0 {
				select {
				case s := <-u.filled:
					pendingCPU--
					u.submit(s)
				case s := <-u.checked:
					pendingCPU--
					u.finish(s)
				}
			}
			continue
		}
		// Submit what was prepared and wait for at least one completion.
		if _, err := u.ring.SubmitAndWait(1); err != nil && !errors.Is(err, uring.ErrBusy) && !errors.Is(err, uring.ErrAgain) {
			u.failAll(fmt.Errorf("io_uring enter: %w", err))
			continue
		}
		u.ring.Reap(func(c uring.CQE) {
			s := u.slots[c.UserData]
			u.inflight--
			if c.Res < 0 {
				s.err = uring.Errno(c.Res)
			} else if c.Res == 0 && !s.op.write {
				s.err = io.ErrUnexpectedEOF
			} else {
				s.done += int64(c.Res)
				if s.done < s.op.n {
					u.submit(s) // a short transfer: the rest
					return
				}
			}
			if !s.op.write && s.err == nil && u.e.cfg.Verify {
				pendingCPU++
				u.fill <- s // verified off the ring's goroutine
				return
			}
			u.finish(s)
		})
	}
}

// slot wraps op, whose object has a file descriptor, for the ring.
func (u *uringEngine) slot(op *blockOp) *uringSlot {
	s := &uringSlot{op: op, fd: int(op.obj.(fdObject).Fd()), off: op.off}
	if oo, ok := op.obj.(offsetObject); ok {
		s.off += oo.Offset()
	}
	s.buf = u.free[len(u.free)-1]
	u.free = u.free[:len(u.free)-1]
	u.slots[s.buf] = s
	return s
}

// submit queues s's (remaining) I/O on the ring.
func (u *uringEngine) submit(s *uringSlot) {
	p := u.bufs[s.buf][s.done:s.op.n]
	off := uint64(s.off + s.done)
	var err error
	switch {
	case s.op.write && u.fixed && s.done == 0:
		err = u.ring.PrepWriteFixed(s.fd, p, off, s.buf, uint64(s.buf))
	case s.op.write:
		err = u.ring.PrepWrite(s.fd, p, off, uint64(s.buf))
	case u.fixed && s.done == 0:
		err = u.ring.PrepReadFixed(s.fd, p, off, s.buf, uint64(s.buf))
	default:
		err = u.ring.PrepRead(s.fd, p, off, uint64(s.buf))
	}
	if err != nil {
		s.err = err
		u.finish(s)
		return
	}
	u.inflight++
}

// finish completes s's block op and frees its buffer.
func (u *uringEngine) finish(s *uringSlot) {
	if s.err != nil {
		s.op.grp.fail(s.err)
	}
	s.op.grp.wg.Done()
	u.slots[s.buf] = nil
	u.free = append(u.free, s.buf)
}

func (u *uringEngine) failAll(err error) {
	for _, s := range u.slots {
		if s != nil {
			s.err = err
		}
	}
	u.ring.Reap(func(uring.CQE) { u.inflight-- })
	for _, s := range u.slots {
		if s != nil {
			u.finish(s)
		}
	}
	u.inflight = 0
}
