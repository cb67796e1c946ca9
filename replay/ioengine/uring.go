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
// io_uring ring driven by its submitter's goroutine (it is a Poller): no
// goroutine of its own stands between the scheduler and the kernel, as in
// fio, where a job's thread submits and reaps. O_DIRECT, Depth registered
// buffers of BlockSize, requests handed to the kernel submitBatch at a
// time and the rest by Poll or by the io_uring_enter that waits, all
// completions ready consumed at once. Ops submitted while every buffer is
// in flight wait in a backlog and start, in order, as buffers come back.
// Blocks up to inlineMax are filled and checked on the submitter's
// goroutine; bigger ones on a pool of CPU goroutines beside it, so the
// ring never waits for the CPU.
//
// A version with a goroutine of its own per ring, fed and drained through
// channels, spent most of its time handing ops between that goroutine and
// the scheduler's: 4 KiB objects at depth 32 on 2 cores reached 0.55 to
// 0.6 of fio's IOPS, with a futex wake and sleep per batch and the
// runtime's scheduler on every profile (bench/vs-fio.sh, small case).
//
// The submitter sleeps in io_uring_enter (Wait) while requests are in
// flight. Work that arrives for it meanwhile (a block a CPU goroutine
// finished, or anything the submitter waits for besides this ring) would
// wait for the next completion, so Wait keeps a read of an eventfd in
// flight, and whoever hands the submitter work while it sleeps calls
// Wake, which writes the eventfd once per sleep (sleeping is the flag
// both sides test).
type uringEngine struct {
	p    Params
	fill func(p []byte, op *Op) // Data's FillDevice, where it has one
	ring *uring.Ring
	efd  int // the eventfd that wakes the ring

	// sleeping is set by Wait before it enters the kernel, and cleared
	// by Wait when the kernel returns or by the one who writes efd to
	// wake it. wakes counts Wake calls: Wait reads it before and after
	// setting sleeping, so a Wake it missed shows (all three are
	// sequentially consistent atomics: a plain read of a channel's length
	// after the store would not be ordered after it on arm64).
	sleeping atomic.Bool
	wakes    atomic.Uint64
	// wakeMu keeps Close from closing efd under a Wake that is writing
	// it; efdClosed is guarded by it.
	wakeMu    sync.RWMutex
	efdClosed bool

	// Owned by the submitter's goroutine.
	bufs    [][]byte
	fixed   bool   // bufs are registered: fixed reads and writes
	slots   []slot // one per buffer, by buffer index (the user data)
	free    []int  // buffer indexes not in use
	backlog []*Op  // ops submitted while no buffer was free, in order
	cpuOps  int    // slots with the CPU goroutines
	armed   bool   // the eventfd read is in the ring
	wakeBuf [8]byte
	region  []byte // the buffers' memory, mapped by bufferRegion
	broken  error  // the ring failed: every op fails with this
	queued  int    // requests prepared since the last io_uring_enter
	inline  bool   // data made and checked on the submitter's goroutine
	closed  bool
	reap    func(uring.CQE)

	// The CPU goroutines' queues, each with room for every slot, so no
	// send blocks; nil when inline.
	cpu, back chan *slot
	workers   sync.WaitGroup
}

var _ Poller = (*uringEngine)(nil)

// slot is one op in the engine with its buffer.
type slot struct {
	op   *Op
	buf  []byte // the op's part of its buffer, op.N bytes
	idx  int    // buffer index
	fd   int
	off  int64 // the block's offset in the file
	done int64 // bytes moved so far: a short transfer is resubmitted
	cpu  bool  // with the CPU goroutines, not the kernel
	// again counts the -EAGAIN completions since the block last moved
	// bytes: each is resubmitted, up to againMax.
	again int
}

// againMax is how many -EAGAIN completions in a row a block's request
// may have before the block fails with EAGAIN. Older kernels (5.x, early
// 6.x) post -EAGAIN for an O_DIRECT request when one of its bios could
// not get a tag at once (a 1 MiB read split on a busy disk: liburing
// issues 766 and 1269) and expect the application to issue it again, as
// liburing's io_uring-cp does; newer ones issue it again themselves. The
// bound keeps a request that can never proceed (a file opened
// O_NONBLOCK) from being issued for ever.
const againMax = 64

func init() {
	Register(Info{Name: "uring", Kind: Shared, New: newUring,
		Doc: "io_uring, batched, registered buffers, files only; psync, recorded, where the kernel refuses it"})
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
	// Cooperative task running: the loop enters the kernel for every
	// batch it submits, which posts the completions then, instead of an
	// interrupt per batch of completions (11 % more 4 KiB writes per
	// second in bench/vs-fio.sh's small case on a 2-core VM).
	ring, err := uring.New(uring.Params{Entries: uint32(p.Depth + 1), CoopTaskrun: true})
	if err != nil {
		unix.Close(efd)
		return nil, fmt.Errorf("ioengine: uring: %w: %w", ErrUnavailable, err)
	}
	e := &uringEngine{
		p:      p,
		fill:   p.DeviceFill(),
		ring:   ring,
		efd:    efd,
		slots:  make([]slot, p.Depth),
		inline: inline,
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
	return e, nil
}

func (e *uringEngine) Name() string { return "uring" }

// Serves reports whether obj lives in a file the ring can address.
func (e *uringEngine) Serves(obj backend.Object) bool {
	_, ok := obj.(backend.FdObject)
	return ok
}

// Submit prepares op's request, or queues op behind the Depth in flight.
func (e *uringEngine) Submit(op *Op) {
	if len(e.backlog) == 0 && e.canTake() {
		e.start(op)
		return
	}
	e.backlog = append(e.backlog, op)
}

// Poll hands the prepared requests to the kernel and takes back, without
// waiting, the blocks that completed and those the CPU goroutines
// finished, starting backlogged ops in the buffers they free.
func (e *uringEngine) Poll() {
back:
	for e.cpuOps > 0 {
		select {
		case s := <-e.back:
			e.fromCPU(s)
		default:
			break back
		}
	}
	if e.ring.TaskrunPending() && e.broken == nil {
		// Completions wait for this thread to enter the kernel. A failure
		// here leaves them for the next call that enters it.
		e.ring.RunTaskwork()
	}
	e.ring.Reap(e.reap)
	e.startBacklog()
	if e.queued > 0 && e.broken == nil {
		e.queued = 0
		e.submitted(e.ring.Submit())
	}
}

// Busy reports whether ops are in the engine: Wait then returns once one
// of them is done.
func (e *uringEngine) Busy() bool {
	if e.broken != nil {
		// Every op the kernel held went back failed; what the kernel may
		// still hold is Close's to wait for.
		return e.cpuOps > 0 || len(e.backlog) > 0
	}
	return e.ring.InFlight() > e.wakeReads() || e.cpuOps > 0 || len(e.backlog) > 0
}

// Wait sleeps in the kernel until a request completes or Wake is called,
// unless ready reports, once Wait is set to be woken, that the caller has
// other work; then it consumes the completions ready, as Poll does.
func (e *uringEngine) Wait(ready func() bool) {
	if e.broken != nil {
		if e.cpuOps > 0 {
			// The kernel is out of the picture: the CPU goroutines' blocks
			// are what is left, and they come back on their own.
			e.fromCPU(<-e.back)
		}
		return
	}
	if !e.Busy() {
		return
	}
	if !e.armed {
		e.arm()
	}
	wakes := e.wakes.Load()
	e.sleeping.Store(true)
	// What was handed over before the store, whose sender saw no sleeper:
	// its Wake moved the count.
	if e.wakes.Load() != wakes || (ready != nil && ready()) || len(e.back) > 0 {
		e.sleeping.Store(false)
		e.Poll()
		return
	}
	e.queued = 0
	_, err := e.ring.SubmitAndWait(1)
	// Awake from here on: a wake now would cost the waker a system call
	// and the ring a spurious completion and another io_uring_enter.
	e.sleeping.Store(false)
	// EBUSY (completions backlogged) and EAGAIN (the kernel short of
	// memory for requests) clear as completions are consumed: reap, and
	// submit again. EINTR is retried by the ring.
	if e.submitted(0, err); e.broken != nil {
		return
	}
	e.Poll()
}

// Wake ends a Wait, from any goroutine. Its caller has just handed the
// submitter work: either Wait sees the count of wakes move after setting
// sleeping, or Wake sees sleeping set (all sequentially consistent).
func (e *uringEngine) Wake() {
	e.wakes.Add(1)
	if e.sleeping.Load() && e.sleeping.CompareAndSwap(true, false) {
		e.wakeMu.RLock()
		if !e.efdClosed {
			one := [8]byte{1}
			unix.Write(e.efd, one[:]) // cannot fail short of a counter at 2^64-1
		}
		e.wakeMu.RUnlock()
	}
}

// Close completes the ops in the engine (they are still sent on Done)
// and releases the ring, its buffers and its goroutines.
func (e *uringEngine) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	for {
		e.Poll()
		if e.broken == nil && e.Busy() {
			e.Wait(nil)
			continue
		}
		if e.cpuOps == 0 {
			break
		}
		e.fromCPU(<-e.back) // a broken ring: the CPU goroutines' last blocks
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
	var err error
	if cerr := e.ring.Close(); cerr != nil {
		err = fmt.Errorf("ioengine: uring: %w", cerr)
	} else {
		freeRegion(e.region) // the kernel holds no request, nor the registration
	}
	e.wakeMu.Lock()
	e.efdClosed = true
	unix.Close(e.efd)
	e.wakeMu.Unlock()
	return err
}

// cpuWorker fills write buffers before submission and checks read buffers
// after completion, for blocks above inlineMax.
func (e *uringEngine) cpuWorker() {
	defer e.workers.Done()
	for s := range e.cpu {
		if s.op.Write {
			e.fill(s.buf, s.op)
		} else {
			s.op.Err = e.p.Data.Check(s.buf, s.op)
		}
		e.back <- s
		e.Wake()
	}
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

// canTake reports whether an op can start now.
func (e *uringEngine) canTake() bool { return len(e.free) > 0 || e.broken != nil }

// startBacklog starts the backlogged ops the free buffers allow.
func (e *uringEngine) startBacklog() {
	n := 0
	for n < len(e.backlog) && e.canTake() {
		op := e.backlog[n]
		e.backlog[n] = nil
		n++
		e.start(op)
	}
	if n > 0 {
		e.backlog = e.backlog[:copy(e.backlog, e.backlog[n:])]
	}
}

// wakeReads is the number of eventfd reads in the ring, 0 or 1.
func (e *uringEngine) wakeReads() int {
	if e.armed {
		return 1
	}
	return 0
}

// arm prepares the eventfd read that Wake completes. The ring has room
// for it (Depth+1 entries); without it the ring still works, woken by
// completions only.
func (e *uringEngine) arm() {
	e.armed = e.ring.PrepRead(e.efd, e.wakeBuf[:], 0, wakeToken) == nil
}

// submitted handles the result of handing requests to the kernel: EBUSY
// and EAGAIN leave them prepared for the next enter; anything else breaks
// the ring.
func (e *uringEngine) submitted(_ int, err error) {
	switch {
	case err == nil:
	case errors.Is(err, uring.ErrBusy) || errors.Is(err, uring.ErrAgain):
		e.queued = max(e.queued, 1) // still prepared: the next Poll tries again
	default:
		e.fail(fmt.Errorf("ioengine: uring: %w", err))
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
	s.op, s.buf, s.fd, s.off, s.done, s.again = op, e.bufs[idx][:op.N], int(fo.Fd()), fo.Offset()+op.Off, 0, 0
	if op.Write {
		if !e.inline {
			e.toCPU(s)
			return
		}
		e.fill(s.buf, op)
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
	e.submitted(e.ring.Submit())
}

// complete handles one completion: the block is done, failed, or moved in
// part or refused for now (-EAGAIN) and resubmitted.
func (e *uringEngine) complete(c uring.CQE) {
	if c.UserData == wakeToken {
		e.armed = false
		return
	}
	s := &e.slots[c.UserData]
	op := s.op
	if op == nil {
		// A request of a ring that failed, whose op already went back
		// failed: its buffer stays out of use.
		return
	}
	switch {
	case c.Res == -int32(unix.EAGAIN) && s.again < againMax:
		s.again++
		e.prep(s) // the kernel asks for the request again
		return
	case c.Res < 0:
		op.Err = s.ioErr(backend.FileError(uring.Errno(c.Res)))
	case c.Res == 0 && op.Write:
		op.Err = s.ioErr(io.ErrShortWrite) // no progress: retrying would spin
	case c.Res == 0:
		op.Err = s.ioErr(io.ErrUnexpectedEOF) // the file ends inside the block
	default:
		s.done += int64(c.Res)
		s.again = 0
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

// ioErr names what s's failed request hit: the object, the offset in it,
// and the file and offset there (backend.Locator), or the descriptor.
func (s *slot) ioErr(err error) error {
	op, off := s.op, s.op.Off+s.done
	rw := "read"
	if op.Write {
		rw = "write"
	}
	where := fmt.Sprintf("fd %d at offset %d", s.fd, s.off+s.done)
	if l, ok := op.Obj.(backend.Locator); ok {
		where = l.Where(off)
	}
	return fmt.Errorf("ioengine: uring: %s %q at offset %d (%s): %w", rw, op.Key, off, where, err)
}

// finish hands s's op back and frees its buffer.
func (e *uringEngine) finish(s *slot) {
	op := s.op
	s.op, s.buf = nil, nil
	e.free = append(e.free, s.idx)
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
