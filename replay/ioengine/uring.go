package ioengine

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/uring"
	"github.com/kvbench/kvbench/replay/backend"
)

// inlineMax is the largest block whose bytes the ring's goroutine fills
// and checks itself. Handing a block to a CPU goroutine and back costs
// two channel operations and, mostly, two goroutine wakeups, more than
// filling or checking a small block (datagen does 4 KiB in about 0.6 us).
// BenchmarkUringInline on 2 cores, reads from the page cache checked with
// datagen: inline was 1.2 to 1.7x faster from 4 to 64 KiB, 1.1x at
// 128 KiB, 0.9x at 256 KiB; O_DIRECT writes were no slower inline up to
// 256 KiB. The smaller bound is kept: the CPU goroutines scale with the
// cores, the ring does not.
const inlineMax = 64 << 10

// submitBatch is how many requests the ring prepares before it hands
// them to the kernel without waiting for completions. One io_uring_enter
// for a whole queue's worth delays the first request until the kernel has
// taken the last (the block layer holds them in one plug): 4 KiB O_DIRECT
// writes at depth 32 ran 1.2x faster in batches of 8 than in one, and one
// system call per request was 0.7x.
const submitBatch = 8

// wakeToken is the user data of the eventfd read that wakes the ring; the
// other requests' user data are buffer indexes.
const wakeToken = 1<<64 - 1

// uringEngine issues the blocks of backend.FdObject objects through one
// io_uring ring owned by one goroutine (run): O_DIRECT, Depth registered
// buffers of BlockSize, requests submitted submitBatch at a time and the
// rest by the io_uring_enter that waits for the next completions, all
// completions ready consumed at once. Blocks up to
// inlineMax are filled and checked on the ring's goroutine; bigger ones on
// a pool of CPU goroutines beside it, so the ring never waits for the CPU.
//
// The ring sleeps in io_uring_enter while requests are in flight. Work
// that arrives meanwhile (an op from Submit, a block a CPU goroutine
// finished) would wait for the next completion, which with a device
// that completes a whole queue at once is the next batch: the effective
// queue depth would halve. So the ring keeps a read of an eventfd in
// flight, and whoever hands it work while it sleeps writes the eventfd,
// once per sleep (sleeping is the flag both sides test).
type uringEngine struct {
	p    Params
	in   chan *Op
	ring *uring.Ring
	efd  int // the eventfd that wakes the ring

	// sleeping is set by run before it waits in the kernel, and cleared
	// by run when the wait returns or by the one who writes efd to wake
	// it.
	sleeping atomic.Bool

	// Owned by run.
	inOpen   bool
	bufs     [][]byte
	fixed    bool   // bufs are registered: fixed reads and writes
	slots    []slot // one per buffer, by buffer index (the user data)
	free     []int  // buffer indexes not in use
	cpuOps   int    // slots with the CPU goroutines
	armed    bool   // the eventfd read is in the ring
	wakeBuf  [8]byte
	region   []byte // the buffers' memory, mapped by bufferRegion
	broken   error  // the ring failed: every op fails with this
	finished int    // ops sent on Done
	queued   int    // requests prepared since the last io_uring_enter
	inline   bool   // data made and checked on run's goroutine
	reap     func(uring.CQE)

	// The CPU goroutines' queues, each with room for every slot, so no
	// send blocks; nil when inline.
	cpu, back chan *slot
	workers   sync.WaitGroup

	exited chan struct{} // closed when run returns
	err    error         // the ring's close error, set before exited
}

// slot is one op in the engine with its buffer.
type slot struct {
	op   *Op
	buf  []byte // the op's part of its buffer, op.N bytes
	idx  int    // buffer index
	fd   int
	off  int64 // the block's offset in the file
	done int64 // bytes moved so far: a short transfer is resubmitted
	cpu  bool  // with the CPU goroutines, not the kernel
}

func newUring(p Params) (Engine, error) {
	return newUringEngine(p, p.BlockSize <= inlineMax)
}

// newUringEngine sets up the engine; inline says where data is made and
// checked (benchmarks choose, to measure inlineMax).
func newUringEngine(p Params, inline bool) (*uringEngine, error) {
	if err := uring.Probe(); err != nil {
		return nil, fmt.Errorf("ioengine: uring: %w: %w", ErrUnavailable, err)
	}
	const maxDepth = 1<<15 - 1 // the ring's entries, with the eventfd read
	if p.Depth > maxDepth {
		return nil, fmt.Errorf("ioengine: uring: depth %d: must be at most %d", p.Depth, maxDepth)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("ioengine: uring: %w: eventfd: %w", ErrUnavailable, err)
	}
	ring, err := uring.New(uring.Params{Entries: uint32(p.Depth + 1)})
	if err != nil {
		unix.Close(efd)
		return nil, fmt.Errorf("ioengine: uring: %w: %w", ErrUnavailable, err)
	}
	e := &uringEngine{
		p:      p,
		in:     make(chan *Op, p.queue()),
		ring:   ring,
		efd:    efd,
		inOpen: true,
		slots:  make([]slot, p.Depth),
		inline: inline,
		exited: make(chan struct{}),
	}
	e.reap = e.complete // one func value, not one per Reap
	if e.region, err = bufferRegion(p.Depth * int(p.BlockSize)); err != nil {
		ring.Close()
		unix.Close(efd)
		return nil, fmt.Errorf("ioengine: uring: %w: %d buffers of %d bytes: %w", ErrUnavailable, p.Depth, p.BlockSize, err)
	}
	for i := range p.Depth {
		n := int(p.BlockSize)
		e.bufs = append(e.bufs, e.region[i*n:(i+1)*n:(i+1)*n])
		e.free = append(e.free, i)
		e.slots[i].idx = i
	}
	// Registered buffers spare the kernel pinning pages per request. Old
	// kernels count them against RLIMIT_MEMLOCK: without, plain requests.
	e.fixed = p.Depth <= 1<<14 && ring.RegisterBuffers(e.bufs) == nil
	if !inline {
		e.cpu = make(chan *slot, p.Depth)
		e.back = make(chan *slot, p.Depth)
		for range max(1, runtime.GOMAXPROCS(0)) {
			e.workers.Add(1)
			go e.cpuWorker()
		}
	}
	go e.run()
	return e, nil
}

func (e *uringEngine) Name() string { return "uring" }

// Serves reports whether obj lives in a file the ring can address.
func (e *uringEngine) Serves(obj backend.Object) bool {
	_, ok := obj.(backend.FdObject)
	return ok
}

func (e *uringEngine) Submit(op *Op) {
	e.in <- op
	e.wake()
}

func (e *uringEngine) Close() error {
	close(e.in)
	<-e.exited
	return e.err
}

// wake wakes the ring if it sleeps in the kernel. Its caller has just
// sent the ring work: either run sees that work after setting sleeping,
// or wake sees sleeping set (both are sequentially consistent).
func (e *uringEngine) wake() {
	if e.sleeping.Load() && e.sleeping.CompareAndSwap(true, false) {
		one := [8]byte{1}
		unix.Write(e.efd, one[:]) // cannot fail short of a counter at 2^64-1
	}
}

// cpuWorker fills write buffers before submission and checks read buffers
// after completion, for blocks above inlineMax.
func (e *uringEngine) cpuWorker() {
	defer e.workers.Done()
	for s := range e.cpu {
		if s.op.Write {
			e.p.Data.Fill(s.buf, s.op)
		} else {
			s.op.Err = e.p.Data.Check(s.buf, s.op)
		}
		e.back <- s
		e.wake()
	}
}

// run is the ring's goroutine. It takes ops from in until in is closed
// and every op is done. It sleeps in io_uring_enter while requests are
// in flight, on the channels while none are.
//
// It is not locked to its thread (runtime.LockOSThread), although the
// kernel runs a request's completion as task work of the thread that
// submitted it: a locked goroutine cannot hand its processor to the
// submitter it just woke by sending on Done, which then waits for
// another thread (on a virtual machine, another vCPU) to wake and steal
// it, 20 to 90 us per completion batch as measured here. Unlocked, enter
// yields after a batch, the submitter runs at once on the same thread,
// and its new ops are in the ring before the kernel is entered again:
// 1.2 to 1.3x the IOPS of the locked ring at 4 KiB, queue depth 32. What
// is left per batch is the first send on Done waking an idle thread for
// the runtime (wakep, a futex wake: about 30 us here), which no code of
// the engine avoids.
func (e *uringEngine) run() {
	defer close(e.exited)
	for {
		e.poll()
		if e.broken == nil && e.ring.InFlight() > e.wakeReads() {
			if !e.armed {
				e.arm()
			}
			if e.canTake() || e.cpuOps > 0 {
				// Wake-ups are wanted only for work the ring can take:
				// with every buffer in the kernel, a completion wakes it.
				e.sleeping.Store(true)
				e.poll() // what came before the store, whose sender saw no sleeper
			}
			e.enter()
			continue
		}
		// Nothing in the kernel: sleep until an op or a CPU result comes.
		if !e.inOpen && e.cpuOps == 0 {
			break
		}
		var in <-chan *Op
		if e.inOpen && e.canTake() {
			in = e.in
		}
		select {
		case op, ok := <-in:
			if !ok {
				e.inOpen = false
				continue
			}
			e.start(op)
		case s := <-e.back: // nil, blocking forever, when inline
			e.fromCPU(s)
		}
	}
	if e.cpu != nil {
		close(e.cpu)
		e.workers.Wait()
	}
	if e.armed {
		// Complete the eventfd read, which no kernel before 5.19 cancels.
		one := [8]byte{1}
		unix.Write(e.efd, one[:])
	}
	if err := e.ring.Close(); err != nil {
		e.err = fmt.Errorf("ioengine: uring: %w", err)
	} else {
		freeRegion(e.region) // the kernel holds no request, nor the registration
	}
	unix.Close(e.efd)
}

// hugePage is the size of a transparent huge page on the machines kvbench
// runs on (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// bufferRegion maps n bytes of anonymous memory for the ring's buffers:
// page-aligned as O_DIRECT needs, outside the Go heap, and, from 2 MiB
// on, huge-page-aligned and advised to huge pages (MADV_HUGEPAGE; a
// transparent_hugepage setting of never leaves small pages). The kernel
// then registers each buffer as a few large segments instead of one per
// 4 KiB page, and a 1 MiB request is no longer split in two by a device
// that takes fewer segments than that (virtio-blk here, 254): 1 MiB reads
// and writes at depth 32 ran about 2x faster than from the Go heap, 4 KiB
// ones the same. freeRegion releases it.
func bufferRegion(n int) ([]byte, error) {
	const prot, flags = unix.PROT_READ | unix.PROT_WRITE, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS
	if n < hugePage {
		p, err := unix.MmapPtr(-1, 0, nil, uintptr(n), prot, flags)
		if err != nil {
			return nil, err
		}
		return unsafe.Slice((*byte)(p), n), nil
	}
	// Map a huge page more than needed and give back the unaligned head
	// and tail: a huge page needs an aligned address.
	size := (n + hugePage - 1) &^ (hugePage - 1)
	p, err := unix.MmapPtr(-1, 0, nil, uintptr(size+hugePage), prot, flags)
	if err != nil {
		return nil, err
	}
	head := uintptr(-uintptr(p)) & (hugePage - 1)
	if head > 0 {
		unix.MunmapPtr(p, head)
	}
	if tail := hugePage - head; tail > 0 {
		unix.MunmapPtr(unsafe.Add(p, head+uintptr(size)), tail)
	}
	region := unsafe.Slice((*byte)(unsafe.Add(p, head)), size)
	unix.Madvise(region, unix.MADV_HUGEPAGE) // advice only: small pages without it
	return region[:n:n], nil
}

// freeRegion unmaps what bufferRegion mapped.
func freeRegion(region []byte) error {
	size := len(region)
	if size >= hugePage {
		size = (size + hugePage - 1) &^ (hugePage - 1)
	}
	return unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(region)), uintptr(size))
}

// poll takes what is ready, without waiting: new ops while buffers are
// free, and the blocks the CPU goroutines finished.
func (e *uringEngine) poll() {
take:
	for e.inOpen && e.canTake() {
		select {
		case op, ok := <-e.in:
			if !ok {
				e.inOpen = false
				break take
			}
			e.start(op)
		default:
			break take
		}
	}
back:
	for e.cpuOps > 0 {
		select {
		case s := <-e.back:
			e.fromCPU(s)
		default:
			break back
		}
	}
}

// canTake reports whether run can start another op now.
func (e *uringEngine) canTake() bool { return len(e.free) > 0 || e.broken != nil }

// wakeReads is the number of eventfd reads in the ring, 0 or 1.
func (e *uringEngine) wakeReads() int {
	if e.armed {
		return 1
	}
	return 0
}

// arm prepares the eventfd read that wake completes. The ring has room
// for it (Depth+1 entries); without it the ring still works, woken by
// completions only.
func (e *uringEngine) arm() {
	e.armed = e.ring.PrepRead(e.efd, e.wakeBuf[:], 0, wakeToken) == nil
}

// enter submits what was prepared, waits for at least one completion and
// consumes every completion ready.
func (e *uringEngine) enter() {
	e.queued = 0
	_, err := e.ring.SubmitAndWait(1)
	// Awake from here on: a wake now would cost the waker a system call
	// and the ring a spurious completion and another io_uring_enter.
	e.sleeping.Store(false)
	// EBUSY (completions backlogged) and EAGAIN (the kernel short of
	// memory for requests) clear as completions are consumed: reap and
	// enter again. EINTR is retried by the ring.
	if err != nil && !errors.Is(err, uring.ErrBusy) && !errors.Is(err, uring.ErrAgain) {
		e.fail(fmt.Errorf("ioengine: uring: %w", err))
		return
	}
	finished := e.finished
	e.ring.Reap(e.reap)
	if e.finished != finished {
		// Let the submitter, woken by the ops sent on Done, run on this
		// thread now and submit their successors before the ring sleeps.
		runtime.Gosched()
	}
}

// start takes op into a free slot and prepares its request, or hands its
// buffer to a CPU goroutine to fill first.
func (e *uringEngine) start(op *Op) {
	fo, ok := op.Obj.(backend.FdObject)
	if !ok || e.broken != nil {
		op.Err = e.broken
		if !ok {
			op.Err = fmt.Errorf("ioengine: uring: object %q of type %T has no file descriptor", op.Key, op.Obj)
		}
		e.p.Done <- op
		return
	}
	idx := e.free[len(e.free)-1]
	e.free = e.free[:len(e.free)-1]
	s := &e.slots[idx]
	s.op, s.buf, s.fd, s.off, s.done = op, e.bufs[idx][:op.N], int(fo.Fd()), fo.Offset()+op.Off, 0
	if op.Write {
		if !e.inline {
			e.toCPU(s)
			return
		}
		e.p.Data.Fill(s.buf, op)
	}
	e.prep(s)
	e.flush()
}

// toCPU hands s to the CPU goroutines to fill or check.
func (e *uringEngine) toCPU(s *slot) {
	e.cpuOps++
	s.cpu = true
	e.cpu <- s
}

// fromCPU takes back a slot a CPU goroutine filled or checked.
func (e *uringEngine) fromCPU(s *slot) {
	e.cpuOps--
	s.cpu = false
	if s.op.Write && s.op.Err == nil {
		e.prep(s)
		e.flush()
		return
	}
	e.finish(s)
}

// prep prepares the request for the rest of s's block.
func (e *uringEngine) prep(s *slot) {
	if e.broken != nil {
		s.op.Err = e.broken
		e.finish(s)
		return
	}
	p, off, ud := s.buf[s.done:], uint64(s.off+s.done), uint64(s.idx)
	var err error
	switch {
	case s.op.Write && e.fixed:
		err = e.ring.PrepWriteFixed(s.fd, p, off, uint16(s.idx), ud)
	case s.op.Write:
		err = e.ring.PrepWrite(s.fd, p, off, ud)
	case e.fixed:
		err = e.ring.PrepReadFixed(s.fd, p, off, uint16(s.idx), ud)
	default:
		err = e.ring.PrepRead(s.fd, p, off, ud)
	}
	if err != nil {
		// The ring has room for Depth requests by construction; an error
		// here is a bad descriptor or length, and this op's alone.
		s.op.Err = fmt.Errorf("ioengine: uring: %w", err)
		e.finish(s)
		return
	}
	e.queued++
}

// flush hands the prepared requests to the kernel once there are
// submitBatch of them, so the device starts on them while the ring
// prepares the rest.
func (e *uringEngine) flush() {
	if e.queued < submitBatch || e.broken != nil {
		return
	}
	e.queued = 0
	if _, err := e.ring.Submit(); err != nil && !errors.Is(err, uring.ErrBusy) && !errors.Is(err, uring.ErrAgain) {
		e.fail(fmt.Errorf("ioengine: uring: %w", err))
	}
	// On EBUSY or EAGAIN the requests stay prepared: enter submits them.
}

// complete handles one completion: the block is done, failed, or moved in
// part and resubmitted.
func (e *uringEngine) complete(c uring.CQE) {
	if c.UserData == wakeToken {
		e.armed = false
		return
	}
	s := &e.slots[c.UserData]
	op := s.op
	switch {
	case c.Res < 0:
		op.Err = backend.FileError(uring.Errno(c.Res))
	case c.Res == 0 && op.Write:
		op.Err = io.ErrShortWrite // no progress: retrying would spin
	case c.Res == 0:
		op.Err = io.ErrUnexpectedEOF // the file ends inside the block
	default:
		s.done += int64(c.Res)
		if s.done < op.N {
			e.prep(s) // a short transfer: the rest
			return
		}
		if !op.Write {
			if !e.inline {
				e.toCPU(s)
				return
			}
			op.Err = e.p.Data.Check(s.buf, op)
		}
	}
	e.finish(s)
}

// finish hands s's op back and frees its buffer.
func (e *uringEngine) finish(s *slot) {
	op := s.op
	s.op, s.buf = nil, nil
	e.free = append(e.free, s.idx)
	e.finished++
	e.p.Done <- op
}

// fail is the ring failing as a whole (io_uring_enter refused): which
// requests the kernel still holds is unknown, so every op, now and later,
// fails with err, and the buffers of those in the kernel are never reused
// (Ring.Close waits for their requests).
func (e *uringEngine) fail(err error) {
	e.broken = err
	for i := range e.slots {
		if s := &e.slots[i]; s.op != nil && !s.cpu {
			op := s.op
			op.Err = err
			s.op, s.buf = nil, nil
			e.p.Done <- op
		}
	}
}
