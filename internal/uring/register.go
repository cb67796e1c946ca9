package uring

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Limits of io_uring_register(2) for buffers (IORING_MAX_REG_BUFFERS and
// the per-buffer cap of io_buffer_validate).
const (
	maxRegBuffers = 1 << 14
	maxRegBufLen  = 1 << 30
)

// RegisterBuffers registers bufs with the kernel, which pins their pages
// once instead of per request; PrepReadFixed and PrepWriteFixed then name
// them by index. Each buffer is 1 byte to 1 GiB, at most 16384 of them.
// The Ring keeps bufs referenced until UnregisterBuffers or Close, so the
// collector cannot free pinned memory; the caller must not reuse them for
// anything else meanwhile. Register before submitting I/O: older kernels
// wait for the ring to go idle. Pinned pages count against
// RLIMIT_MEMLOCK for a process without CAP_IPC_LOCK (ENOMEM past it).
func (r *Ring) RegisterBuffers(bufs [][]byte) error {
	if r.closed {
		return ErrClosed
	}
	if len(bufs) == 0 || len(bufs) > maxRegBuffers {
		return fmt.Errorf("uring: register %d buffers: must be between 1 and %d", len(bufs), maxRegBuffers)
	}
	iovs := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		if len(b) == 0 || len(b) > maxRegBufLen {
			return fmt.Errorf("uring: register buffer %d of %d bytes: must be between 1 and %d", i, len(b), maxRegBufLen)
		}
		iovs[i].Base = unsafe.SliceData(b)
		iovs[i].SetLen(len(b))
	}
	err := r.register(registerBuffers, unsafe.Pointer(&iovs[0]), uint32(len(iovs)))
	runtime.KeepAlive(iovs)
	if err != nil {
		hint := ""
		if errors.Is(err, unix.ENOMEM) {
			hint = " (pinned pages count against RLIMIT_MEMLOCK)"
		}
		return fmt.Errorf("uring: register %d buffers: %w%s", len(bufs), err, hint)
	}
	r.regBufs = append([][]byte(nil), bufs...)
	return nil
}

// UnregisterBuffers releases the registered buffers; no fixed request may
// be in flight.
func (r *Ring) UnregisterBuffers() error {
	if err := r.unregister(unregisterBuffers, "buffers"); err != nil {
		return err
	}
	r.regBufs = nil
	return nil
}

// RegisterFiles registers fds as the ring's file table: after
// SetFixedFile(true), requests name a file by its index in fds. The kernel
// holds its own reference to each file, so closing an fd does not close
// the file until UnregisterFiles or Close. An entry of -1 leaves a slot
// empty.
func (r *Ring) RegisterFiles(fds []int) error {
	if r.closed {
		return ErrClosed
	}
	if len(fds) == 0 {
		return errors.New("uring: register files: no files")
	}
	table := make([]int32, len(fds))
	for i, fd := range fds {
		if fd < -1 || fd > math.MaxInt32 {
			return fmt.Errorf("uring: register file %d: fd %d out of range", i, fd)
		}
		table[i] = int32(fd)
	}
	err := r.register(registerFiles, unsafe.Pointer(&table[0]), uint32(len(table)))
	runtime.KeepAlive(table)
	if err != nil {
		return fmt.Errorf("uring: register %d files: %w", len(fds), err)
	}
	return nil
}

// UnregisterFiles releases the registered file table; no request using it
// may be in flight.
func (r *Ring) UnregisterFiles() error { return r.unregister(unregisterFiles, "files") }

// unregister releases what op names (what: "buffers", "files").
func (r *Ring) unregister(op uint32, what string) error {
	if r.closed {
		return ErrClosed
	}
	if err := r.register(op, nil, 0); err != nil {
		return fmt.Errorf("uring: unregister %s: %w", what, err)
	}
	return nil
}

// register calls io_uring_register(2), retrying EINTR (a kernel waiting for
// the ring to go idle is interruptible). arg must point to memory the
// caller keeps alive across the call.
func (r *Ring) register(op uint32, arg unsafe.Pointer, nr uint32) error {
	for {
		_, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), uintptr(op), uintptr(arg), uintptr(nr), 0, 0)
		switch e {
		case 0:
			return nil
		case unix.EINTR:
			continue
		default:
			return e
		}
	}
}
