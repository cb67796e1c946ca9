package uring

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Errors returned by a Ring. Test them with errors.Is; errors that carry a
// kernel errno also match it (ErrAgain matches syscall.EAGAIN, ErrBusy
// matches syscall.EBUSY).
var (
	// ErrSQFull means every submission slot holds a request the kernel has not
	// taken yet. Submit, then prepare again.
	ErrSQFull = errors.New("uring: submission queue full")

	// ErrCQFull means as many requests are in flight as the completion ring
	// holds, so one more could overflow it. Consume completions, then
	// prepare again.
	ErrCQFull = errors.New("uring: completion queue budget spent")

	// ErrAgain means io_uring_enter said EAGAIN, the kernel could not allocate
	// what a new request needs. Consume completions and retry.
	ErrAgain = errors.New("uring: kernel out of request resources")

	// ErrBusy means io_uring_enter said EBUSY, completions overflowed the ring
	// and wait in the kernel. Consume completions and retry.
	ErrBusy = errors.New("uring: completions backlogged")

	// ErrNothingInFlight means a wait asked for more completions than requests
	// in flight, which would block forever.
	ErrNothingInFlight = errors.New("uring: waiting for more completions than requests in flight")

	// ErrClosed means the Ring has been closed.
	ErrClosed = errors.New("uring: ring closed")

	// ErrUnavailable means io_uring cannot be used here (kernel too old, built
	// without it, disabled by sysctl or blocked by seccomp). Probe's
	// error wraps it along with the reason.
	ErrUnavailable = errors.New("uring: io_uring unavailable")
)

// Params sets up a Ring.
type Params struct {
	// Entries is the submission ring size, 1 to 32768; the kernel rounds
	// it up to a power of two.
	Entries uint32
	// CQEntries is the completion ring size, Entries to 65536 (rounded up
	// to a power of two); 0 takes the kernel's default, twice the
	// submission ring. It bounds the requests in flight.
	CQEntries uint32
	// CoopTaskrun asks the kernel not to interrupt the submitting thread
	// (an inter-processor interrupt) to post completions, but to post
	// them when the thread enters the kernel anyway, and to say in the
	// ring when some wait (IORING_SETUP_COOP_TASKRUN and TASKRUN_FLAG,
	// Linux 5.19): a thread that submits often saves an interrupt per
	// batch of completions. Reap then misses what waits: TaskrunPending
	// tells, and RunTaskwork posts it. On older kernels New sets the ring
	// up without it; Coop reports which.
	CoopTaskrun bool
}

// validate reports every problem of p at once, one per line.
func (p Params) validate() error {
	var errs []error
	if p.Entries < 1 || p.Entries > maxEntries {
		errs = append(errs, fmt.Errorf("uring: entries %d: must be between 1 and %d", p.Entries, maxEntries))
	}
	if p.CQEntries != 0 && (p.CQEntries < p.Entries || p.CQEntries > maxCQEntries) {
		errs = append(errs, fmt.Errorf("uring: cq entries %d: must be 0 or between entries (%d) and %d", p.CQEntries, p.Entries, maxCQEntries))
	}
	return errors.Join(errs...)
}

// CQE is one completion.
type CQE struct {
	// UserData is the value the request was prepared with.
	UserData uint64
	// Res is the request's result: bytes transferred for reads and writes
	// (fewer than asked for a short transfer, 0 at end of file), or a
	// negated errno; Errno turns it into an error.
	Res int32
	// Flags holds IORING_CQE_F_* bits; none are used by this package's
	// operations.
	Flags uint32
}

// Errno returns nil for a completion result res >= 0, and otherwise the
// syscall.Errno -res, so errors.Is(Errno(c.Res), syscall.EBADF) works.
func Errno(res int32) error {
	if res >= 0 {
		return nil
	}
	return syscall.Errno(-res)
}

// Ring is one io_uring instance: a submission ring, a completion ring and
// the file descriptor that owns them. A Ring is not safe for concurrent
// use: one goroutine prepares, submits and consumes. That goroutine may
// move between OS threads; pinning it with runtime.LockOSThread saves the
// kernel a cross-thread wakeup per completion batch, since completions
// are run as task work of the submitting thread.
//
// Close must be called to release the kernel resources and mappings.
type Ring struct {
	fd       int
	features uint32

	// The mappings: sqRing (which holds the CQ ring too when the kernel
	// has IORING_FEAT_SINGLE_MMAP), cqRing (nil then), and the SQE array.
	sqRing, cqRing, sqeMem []byte

	// Submission ring. The kernel advances sqHead as it consumes entries;
	// the Ring fills entries from sqeTail and publishes it to sqTail.
	sqHead, sqTail    *uint32
	sqMask, sqEntries uint32
	sqes              []sqe
	sqeTail           uint32

	// Completion ring. The kernel advances cqTail as it posts; the Ring
	// consumes from cqHeadLocal and publishes it to cqHead.
	cqHead, cqTail, cqOverflow *uint32
	cqMask, cqEntries          uint32
	cqes                       []cqe
	cqHeadLocal                uint32

	// inflight counts requests prepared whose completion has not been
	// consumed; it never exceeds cqEntries.
	inflight uint32

	sqeFlags uint8 // added to every read and write: IOSQE_FIXED_FILE
	closed   bool
	coop     bool    // set up with COOP_TASKRUN and TASKRUN_FLAG
	sqFlags  *uint32 // the submission ring's flags word

	regBufs [][]byte // registered buffers, referenced so the GC keeps them
	enter   enterFunc
}

// New sets up a Ring with p.Entries submission slots and returns it; the
// caller must Close it. Errors wrap the kernel's errno (EPERM where
// io_uring is disabled, ENOMEM past the locked-memory limit on old
// kernels); Probe explains them better.
func New(p Params) (*Ring, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	var kp params
	if p.CQEntries != 0 {
		kp.flags |= setupCQSize
		kp.cqEntries = p.CQEntries
	}
	base := kp
	if p.CoopTaskrun {
		kp.flags |= setupCoopTaskrun | setupTaskrunFlag
	}
	fd, err := sysSetup(p.Entries, &kp)
	if err != nil && p.CoopTaskrun && errors.Is(err, unix.EINVAL) {
		kp = base // a kernel before 5.19
		fd, err = sysSetup(p.Entries, &kp)
	}
	if err != nil {
		return nil, fmt.Errorf("uring: io_uring_setup(%d entries): %w", p.Entries, err)
	}
	r := &Ring{fd: fd, features: kp.features, coop: kp.flags&setupCoopTaskrun != 0, enter: sysEnter}
	if err := r.mapRings(&kp); err != nil {
		r.unmap()
		unix.Close(fd)
		return nil, err
	}
	return r, nil
}

// mapRings maps the rings and SQE array described by kp and points the
// Ring's fields into them.
func (r *Ring) mapRings(kp *params) error {
	const prot = unix.PROT_READ | unix.PROT_WRITE
	const flags = unix.MAP_SHARED | unix.MAP_POPULATE
	sqSize := int(kp.sqOff.array) + int(kp.sqEntries)*4
	cqSize := int(kp.cqOff.cqes) + int(kp.cqEntries)*int(unsafe.Sizeof(cqe{}))
	single := kp.features&featSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqRing, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return fmt.Errorf("uring: mmap submission ring (%d bytes): %w", sqSize, err)
	}
	cqMem := r.sqRing
	if !single {
		if r.cqRing, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
			return fmt.Errorf("uring: mmap completion ring (%d bytes): %w", cqSize, err)
		}
		cqMem = r.cqRing
	}
	sqeSize := int(kp.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeSize, prot, flags); err != nil {
		return fmt.Errorf("uring: mmap submission entries (%d bytes): %w", sqeSize, err)
	}

	word := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead = word(r.sqRing, kp.sqOff.head)
	r.sqTail = word(r.sqRing, kp.sqOff.tail)
	r.sqFlags = word(r.sqRing, kp.sqOff.flags)
	r.sqMask = *word(r.sqRing, kp.sqOff.ringMask)
	r.sqEntries = *word(r.sqRing, kp.sqOff.ringEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), r.sqEntries)
	// The indirection array maps ring slots to SQEs; the Ring fills SQEs
	// in ring order, so it is the identity, written once.
	array := unsafe.Slice(word(r.sqRing, kp.sqOff.array), r.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqeTail = atomic.LoadUint32(r.sqTail)

	r.cqHead = word(cqMem, kp.cqOff.head)
	r.cqTail = word(cqMem, kp.cqOff.tail)
	r.cqOverflow = word(cqMem, kp.cqOff.overflow)
	r.cqMask = *word(cqMem, kp.cqOff.ringMask)
	r.cqEntries = *word(cqMem, kp.cqOff.ringEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&cqMem[kp.cqOff.cqes])), r.cqEntries)
	r.cqHeadLocal = atomic.LoadUint32(r.cqHead)
	return nil
}

// unmap releases the mappings that exist and forgets the pointers into
// them.
func (r *Ring) unmap() {
	for _, m := range [][]byte{r.sqeMem, r.cqRing, r.sqRing} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	r.sqRing, r.cqRing, r.sqeMem = nil, nil, nil
	r.sqHead, r.sqTail, r.sqFlags, r.sqes = nil, nil, nil, nil
	r.cqHead, r.cqTail, r.cqOverflow, r.cqes = nil, nil, nil, nil
}

// Coop reports whether the ring was set up with Params.CoopTaskrun.
func (r *Ring) Coop() bool { return r.coop }

// TaskrunPending reports whether completions wait for this ring's
// submitting thread to enter the kernel (a ring set up with CoopTaskrun;
// false otherwise): Reap does not see them until RunTaskwork or another
// call that enters the kernel.
func (r *Ring) TaskrunPending() bool {
	return r.coop && !r.closed && atomic.LoadUint32(r.sqFlags)&sqTaskrun != 0
}

// RunTaskwork enters the kernel to post the completions that wait for
// it, without submitting or waiting.
func (r *Ring) RunTaskwork() error {
	if r.closed {
		return ErrClosed
	}
	_, err := r.enterRetry(0, 0, enterGetEvents)
	return err
}

// SQEntries returns the submission ring size the kernel chose (Entries
// rounded up to a power of two).
func (r *Ring) SQEntries() int { return int(r.sqEntries) }

// CQEntries returns the completion ring size the kernel chose: the most
// requests that can be in flight at once.
func (r *Ring) CQEntries() int { return int(r.cqEntries) }

// InFlight returns the number of requests prepared whose completion has
// not been consumed yet, submitted or not.
func (r *Ring) InFlight() int { return int(r.inflight) }

// SQSpace returns how many requests can be prepared now: the free
// submission slots, capped by the completion ring's room for requests in
// flight. It is 0 on a closed Ring.
func (r *Ring) SQSpace() int {
	if r.closed {
		return 0
	}
	free := r.sqEntries - (r.sqeTail - atomic.LoadUint32(r.sqHead))
	return int(min(free, r.cqEntries-r.inflight))
}

// SetFixedFile makes the reads and writes prepared after it use registered
// files (IOSQE_FIXED_FILE): their fd argument is then an index into the
// table given to RegisterFiles, not a file descriptor. It saves the kernel
// a file table lookup and reference per request.
func (r *Ring) SetFixedFile(on bool) {
	if on {
		r.sqeFlags |= sqeFixedFile
	} else {
		r.sqeFlags &^= sqeFixedFile
	}
}

// PrepRead prepares a read of len(buf) bytes from fd at offset off into
// buf, completing with userData. buf must stay reachable and untouched
// until the completion is consumed (see the package doc); a read past end
// of file completes with fewer bytes, or 0. It fails with ErrSQFull or
// ErrCQFull when no request can be prepared now, and ErrClosed.
func (r *Ring) PrepRead(fd int, buf []byte, off uint64, userData uint64) error {
	return r.prepRW(opRead, fd, buf, off, 0, userData)
}

// PrepWrite prepares a write of buf to fd at offset off, completing with
// userData. buf must stay reachable and unmodified until the completion is
// consumed. Errors are PrepRead's.
func (r *Ring) PrepWrite(fd int, buf []byte, off uint64, userData uint64) error {
	return r.prepRW(opWrite, fd, buf, off, 0, userData)
}

// PrepReadFixed is PrepRead into a registered buffer: buf must lie inside
// the buffer registered at index bufIndex (a sub-slice is fine), or the
// request completes with -EFAULT. The kernel skips pinning the pages per
// request.
func (r *Ring) PrepReadFixed(fd int, buf []byte, off uint64, bufIndex uint16, userData uint64) error {
	return r.prepRW(opReadFixed, fd, buf, off, bufIndex, userData)
}

// PrepWriteFixed is PrepWrite from a registered buffer; buf and bufIndex
// are as for PrepReadFixed.
func (r *Ring) PrepWriteFixed(fd int, buf []byte, off uint64, bufIndex uint16, userData uint64) error {
	return r.prepRW(opWriteFixed, fd, buf, off, bufIndex, userData)
}

// PrepNop prepares a request that does nothing and completes with Res 0
// and userData; it measures the ring's own cost.
func (r *Ring) PrepNop(userData uint64) error {
	s, err := r.next()
	if err != nil {
		return err
	}
	*s = sqe{opcode: opNop, userData: userData}
	return nil
}

// prepRW fills the next SQE with a read or write.
func (r *Ring) prepRW(op uint8, fd int, buf []byte, off uint64, bufIndex uint16, userData uint64) error {
	if fd < math.MinInt32 || fd > math.MaxInt32 {
		return fmt.Errorf("uring: fd %d: out of range", fd)
	}
	if uint64(len(buf)) > math.MaxUint32 {
		return fmt.Errorf("uring: buffer of %d bytes: a request moves at most %d", len(buf), uint32(math.MaxUint32))
	}
	s, err := r.next()
	if err != nil {
		return err
	}
	*s = sqe{
		opcode:   op,
		flags:    r.sqeFlags,
		fd:       int32(fd),
		off:      off,
		addr:     uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))),
		len:      uint32(len(buf)),
		userData: userData,
		bufIndex: bufIndex,
	}
	return nil
}

// next claims the next SQE, counting its request in flight.
func (r *Ring) next() (*sqe, error) {
	if r.closed {
		return nil, ErrClosed
	}
	if r.sqeTail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return nil, ErrSQFull
	}
	if r.inflight >= r.cqEntries {
		return nil, ErrCQFull
	}
	s := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	r.inflight++
	return s, nil
}

// flush publishes the prepared SQEs to the kernel and returns how many it
// has not consumed yet.
func (r *Ring) flush() uint32 {
	// Store-release: the SQE contents written above are visible to the
	// kernel before the tail that covers them.
	atomic.StoreUint32(r.sqTail, r.sqeTail)
	return r.sqeTail - atomic.LoadUint32(r.sqHead)
}

// Submit hands the prepared requests to the kernel without waiting and
// returns how many it took. EINTR is retried; EAGAIN and EBUSY come back
// as ErrAgain and ErrBusy, with the requests not taken still queued for
// the next Submit.
func (r *Ring) Submit() (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	toSubmit := r.flush()
	if toSubmit == 0 {
		return 0, nil
	}
	return r.enterRetry(toSubmit, 0, 0)
}

// SubmitAndWait hands the prepared requests to the kernel and waits until
// at least n completions are ready to consume (counting those already
// ready), then returns how many requests the kernel took. EINTR is retried
// (the wait resumes where it was); EAGAIN and EBUSY, the kernel refusing
// new requests, come back as ErrAgain and ErrBusy once n completions are
// ready or every request it holds is (the wait io_uring_enter(2) asks
// for before a new try), with the requests not taken still queued. It
// fails with ErrNothingInFlight when n exceeds the requests in flight,
// which could never complete.
func (r *Ring) SubmitAndWait(n uint32) (int, error) {
	if r.closed {
		return 0, ErrClosed
	}
	if n > r.inflight {
		return 0, fmt.Errorf("%w: want %d, %d in flight", ErrNothingInFlight, n, r.inflight)
	}
	total := 0
	for {
		toSubmit := r.flush()
		ready := atomic.LoadUint32(r.cqTail) - r.cqHeadLocal
		if ready >= n && toSubmit == 0 {
			return total, nil
		}
		// The kernel returns early, with the count it took, when it could
		// not take them all or a signal cut the wait short after
		// submitting; the loop then submits the rest or waits again.
		got, err := r.enterRetry(toSubmit, n, enterGetEvents)
		total += got
		if err != nil {
			if errors.Is(err, ErrAgain) || errors.Is(err, ErrBusy) {
				r.awaitTaken(n)
			}
			return total, err
		}
		if toSubmit > 0 && got == 0 {
			return total, fmt.Errorf("uring: io_uring_enter took none of %d requests: %w", toSubmit, ErrAgain)
		}
	}
}

// awaitTaken waits, submitting nothing, until n completions are ready or
// every request the kernel has taken is: what io_uring_enter(2) asks of
// a caller it refused new requests (EAGAIN, EBUSY), so that the caller's
// next submission finds resources freed instead of spinning on the
// refusal. An error ends the wait early; the caller has one already.
func (r *Ring) awaitTaken(n uint32) {
	taken := r.inflight - (r.sqeTail - atomic.LoadUint32(r.sqHead))
	if want := min(n, taken); want > 0 {
		r.enterRetry(0, want, enterGetEvents)
	}
}

// enterRetry calls io_uring_enter, retrying EINTR. The kernel reports
// EINTR only when it took no request, so a retry submits nothing twice.
func (r *Ring) enterRetry(toSubmit, minComplete, flags uint32) (int, error) {
	for {
		n, err := r.enter(r.fd, toSubmit, minComplete, flags)
		switch {
		case err == nil:
			return n, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			return 0, fmt.Errorf("%w (%w)", ErrAgain, err)
		case errors.Is(err, unix.EBUSY):
			return 0, fmt.Errorf("%w (%w)", ErrBusy, err)
		default:
			return 0, fmt.Errorf("uring: io_uring_enter(submit %d, wait %d): %w", toSubmit, minComplete, err)
		}
	}
}

// unsubmit drops the requests prepared that the kernel has not taken. It
// unpublishes them: the kernel reads the tail only when entered with
// something to submit, which Close never does before resetting it.
func (r *Ring) unsubmit() {
	head := atomic.LoadUint32(r.sqHead)
	r.inflight -= r.sqeTail - head
	r.sqeTail = head
	atomic.StoreUint32(r.sqTail, head)
}

// PeekCQE returns the next completion without consuming it or blocking;
// false when none is ready. SeenCQE consumes it.
func (r *Ring) PeekCQE() (CQE, bool) {
	if r.closed {
		return CQE{}, false
	}
	// Load-acquire: the entries up to tail are written before it.
	if atomic.LoadUint32(r.cqTail) == r.cqHeadLocal {
		return CQE{}, false
	}
	c := &r.cqes[r.cqHeadLocal&r.cqMask]
	return CQE{UserData: c.userData, Res: c.res, Flags: c.flags}, true
}

// SeenCQE consumes the completion PeekCQE or WaitCQE returned, freeing its
// slot; it does nothing when no completion is ready.
func (r *Ring) SeenCQE() {
	if r.closed || atomic.LoadUint32(r.cqTail) == r.cqHeadLocal {
		return
	}
	r.advance()
}

// advance consumes one completion.
func (r *Ring) advance() {
	r.cqHeadLocal++
	r.inflight--
	// Store-release: the entry has been read before the kernel may reuse
	// its slot.
	atomic.StoreUint32(r.cqHead, r.cqHeadLocal)
}

// Reap consumes every completion ready now, calling fn with each in order,
// and returns how many. Each completion is consumed before fn sees it, so
// fn may prepare new requests into the room it frees (but must not call
// Reap, PeekCQE, SeenCQE or WaitCQE).
func (r *Ring) Reap(fn func(CQE)) int {
	if r.closed {
		return 0
	}
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for r.cqHeadLocal != tail {
		c := &r.cqes[r.cqHeadLocal&r.cqMask]
		e := CQE{UserData: c.userData, Res: c.res, Flags: c.flags}
		r.advance()
		n++
		fn(e)
	}
	return n
}

// WaitCQE returns the next completion, submitting prepared requests and
// blocking until one completes; it does not consume it (SeenCQE does).
// EINTR is retried. It fails with ErrNothingInFlight when no request is in
// flight.
func (r *Ring) WaitCQE() (CQE, error) {
	for {
		if c, ok := r.PeekCQE(); ok {
			return c, nil
		}
		if r.closed {
			return CQE{}, ErrClosed
		}
		if r.inflight == 0 {
			return CQE{}, ErrNothingInFlight
		}
		if _, err := r.SubmitAndWait(1); err != nil {
			return CQE{}, err
		}
	}
}

// Close releases the Ring. Requests prepared but not submitted are
// dropped. Requests submitted and not complete are cancelled where the
// kernel can cancel them (Linux 5.19+; a read of an idle pipe, not a disk
// I/O already issued), and Close waits for all of them to complete, so no
// buffer is written after it returns; their completions are discarded.
// Registered files and buffers are released. A second Close returns
// ErrClosed.
func (r *Ring) Close() error {
	if r.closed {
		return ErrClosed
	}
	err := r.drain()
	r.closed = true
	r.unmap()
	r.regBufs = nil
	if cerr := unix.Close(r.fd); cerr != nil && err == nil {
		err = fmt.Errorf("uring: close ring: %w", cerr)
	}
	return err
}

// drain drops unsubmitted requests, then cancels and waits for submitted
// ones.
func (r *Ring) drain() error {
	r.unsubmit()
	discard := func(CQE) {}
	r.Reap(discard)
	if r.inflight == 0 {
		return nil
	}
	if r.inflight < r.cqEntries {
		s, _ := r.next() // room is certain: the SQ is empty, the CQ budget has one
		*s = sqe{opcode: opAsyncCancel, opFlags: asyncCancelAny, userData: math.MaxUint64}
		if _, err := r.enterRetry(r.flush(), 0, 0); err != nil {
			// Not cancelled (EAGAIN: the kernel is short of memory), and
			// the kernel took nothing: the requests in flight complete on
			// their own, and their buffers are theirs until then.
			r.unsubmit()
		}
	}
	for r.inflight > 0 {
		if _, err := r.enterRetry(0, 1, enterGetEvents); err != nil {
			return fmt.Errorf("uring: close: wait for %d requests in flight: %w", r.inflight, err)
		}
		r.Reap(discard)
	}
	return nil
}
