// Package uring owns kvbench's io_uring: a submission and a completion
// ring set up, mapped and driven through raw system calls
// (io_uring_setup, io_uring_enter, io_uring_register), with no cgo and no
// io_uring library. It is the engine under the NVMe tier's "uring" mode
// (design section 5) and does only what that engine needs: read, write,
// their registered-buffer forms, no-ops, registered files and buffers.
//
// # Model
//
// One goroutine owns a Ring; no method is safe for concurrent use. The
// owner prepares requests (PrepRead, PrepWrite, PrepReadFixed,
// PrepWriteFixed, PrepNop), hands them to the kernel (Submit,
// SubmitAndWait), and consumes completions (PeekCQE and SeenCQE, WaitCQE,
// or Reap). Every request yields exactly one completion carrying the
// userData it was prepared with.
//
// The Ring counts requests in flight: prepared and not yet consumed. A
// prepare fails with ErrCQFull when that count would exceed the completion
// ring, so the completion ring cannot overflow by construction; with
// ErrSQFull when every submission slot holds a request not yet taken by
// the kernel. SQSpace says how many prepares will succeed.
//
// # Buffers
//
// The kernel reads or writes a buffer after the prepare returns, until the
// request's completion is posted. The caller owns the buffer and must keep
// it reachable and unmodified (writes) or unread (reads) until then: Go's
// collector does not move heap objects, but it frees unreachable ones, and
// the Ring keeps no reference to a plain request's buffer. A buffer held
// only in a local variable needs runtime.KeepAlive after its completion
// has been consumed. kvbench's engine uses aligned buffers it keeps for the
// whole run, which satisfies this. Registered buffers (RegisterBuffers)
// are referenced by the Ring until UnregisterBuffers or Close.
//
// O_DIRECT requests need buffers, offsets and lengths aligned as the file
// system says (statx STATX_DIOALIGN, typically 512 bytes or 4 KiB);
// misalignment shows as -EINVAL in the completion, not as an error from
// the prepare.
//
// # Memory ordering
//
// The rings are shared with the kernel. As liburing does, the Ring
// publishes the submission tail with a store-release after writing the
// entries, reads the completion tail with a load-acquire before reading
// entries, and publishes the completion head with a store-release after
// reading them. Go's sync/atomic operations on the mapped uint32s are
// sequentially consistent, which is stronger than both.
//
// # Kernel requirements
//
// IORING_OP_READ and IORING_OP_WRITE need Linux 5.6; Probe checks them
// with IORING_REGISTER_PROBE. Close cancels requests that would otherwise
// never complete (a read of an idle pipe) with IORING_ASYNC_CANCEL_ANY,
// which needs Linux 5.19; on older kernels Close waits for them. io_uring
// may be disabled by /proc/sys/kernel/io_uring_disabled or a seccomp
// policy (container runtimes often block it): Probe reports that with an
// error wrapping ErrUnavailable, and callers fall back to another engine.
package uring
