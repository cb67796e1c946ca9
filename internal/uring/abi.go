package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel ABI, transcribed from include/uapi/linux/io_uring.h. Only what
// this package uses is here; names follow the header with the IORING_
// prefix dropped.

// Offsets to pass to mmap(2) on the ring's file descriptor.
const (
	offSQRing = 0x0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// io_uring_params.features bits.
const (
	featSingleMmap = 1 << 0 // SQ and CQ rings share one mapping (5.4)
)

// io_uring_setup(2) flags.
const (
	setupCQSize      = 1 << 3 // io_uring_params.cq_entries is valid
	setupCoopTaskrun = 1 << 8 // run completions' work at the next kernel entry, no IPI (5.19)
	setupTaskrunFlag = 1 << 9 // with it: sq_ring flags say when such work waits
)

// sq_ring flags bits.
const sqTaskrun = 1 << 2 // completions' work waits for a kernel entry

// io_uring_enter(2) flags.
const enterGetEvents = 1 << 0

// Opcodes (enum io_uring_op).
const (
	opNop         = 0
	opReadFixed   = 4
	opWriteFixed  = 5
	opAsyncCancel = 14
	opRead        = 22
	opWrite       = 23
)

// io_uring_sqe.flags bits.
const sqeFixedFile = 1 << 0

// io_uring_sqe.cancel_flags bits.
const asyncCancelAny = 1 << 2 // cancel every request (5.19)

// io_uring_register(2) opcodes.
const (
	registerBuffers   = 0
	unregisterBuffers = 1
	registerFiles     = 2
	unregisterFiles   = 3
	registerProbe     = 8
)

// io_uring_probe_op.flags bit.
const opSupported = 1 << 0

// Limits of io_uring_setup(2) (IORING_MAX_ENTRIES, IORING_MAX_CQ_ENTRIES).
const (
	maxEntries   = 32768
	maxCQEntries = 2 * maxEntries
)

// sqe is struct io_uring_sqe: 64 bytes.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32 // rw_flags, cancel_flags, ...
	userData    uint64
	bufIndex    uint16
	personality uint16
	fileIndex   uint32
	_           [2]uint64
}

// cqe is struct io_uring_cqe: 16 bytes (rings set up without CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	flags       uint32
	dropped     uint32
	array       uint32
	resv1       uint32
	userAddr    uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	head        uint32
	tail        uint32
	ringMask    uint32
	ringEntries uint32
	overflow    uint32
	cqes        uint32
	flags       uint32
	resv1       uint32
	userAddr    uint64
}

// params is struct io_uring_params: 120 bytes.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFd         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// probeHeader is struct io_uring_probe without its flexible ops array,
// which follows it in memory as probeOp entries.
type probeHeader struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
}

// probeOp is struct io_uring_probe_op.
type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

// Compile-time checks of the sizes the kernel expects: each line fails to
// build when a struct drifts from its C layout.
var (
	_ [64 - unsafe.Sizeof(sqe{})]struct{}
	_ [unsafe.Sizeof(sqe{}) - 64]struct{}
	_ [16 - unsafe.Sizeof(cqe{})]struct{}
	_ [unsafe.Sizeof(cqe{}) - 16]struct{}
	_ [120 - unsafe.Sizeof(params{})]struct{}
	_ [unsafe.Sizeof(params{}) - 120]struct{}
	_ [16 - unsafe.Sizeof(probeHeader{})]struct{}
	_ [8 - unsafe.Sizeof(probeOp{})]struct{}
)

// enterFunc is the shape of io_uring_enter(2) as the Ring calls it; tests
// replace it to inject EINTR, EAGAIN and EBUSY.
type enterFunc func(fd int, toSubmit, minComplete, flags uint32) (int, error)

// sysEnter calls io_uring_enter(2) without a signal mask. unix.Syscall6
// tells the scheduler the thread may block, so a long wait parks only this
// goroutine's thread.
func sysEnter(fd int, toSubmit, minComplete, flags uint32) (int, error) {
	n, _, e := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// sysSetup calls io_uring_setup(2) and returns the ring's file descriptor.
func sysSetup(entries uint32, p *params) (int, error) {
	fd, _, e := unix.Syscall6(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0, 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}
