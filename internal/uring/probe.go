package uring

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// disabledSysctl is the knob (Linux 6.6+) that turns io_uring off: 0 on,
// 1 only for members of kernel.io_uring_group and CAP_SYS_ADMIN, 2 off.
const disabledSysctl = "/proc/sys/kernel/io_uring_disabled"

// requiredOps are the opcodes the Ring prepares, with the kernel that
// brought each.
var requiredOps = []struct {
	op    uint8
	name  string
	since string
}{
	{opNop, "IORING_OP_NOP", "5.1"},
	{opReadFixed, "IORING_OP_READ_FIXED", "5.1"},
	{opWriteFixed, "IORING_OP_WRITE_FIXED", "5.1"},
	{opRead, "IORING_OP_READ", "5.6"},
	{opWrite, "IORING_OP_WRITE", "5.6"},
}

// Probe returns nil when io_uring works here: it sets up a two-entry ring,
// checks that the kernel supports every opcode the Ring uses, and makes a
// no-op round trip. Otherwise its error wraps ErrUnavailable and the
// cause, and says why where it can tell (ENOSYS: kernel without io_uring;
// EPERM: io_uring_disabled or a seccomp policy; opcodes: kernel too old).
func Probe() error {
	disabled, _ := os.ReadFile(disabledSysctl)
	r, err := New(Params{Entries: 2})
	if err != nil {
		return fmt.Errorf("%w: %w%s", ErrUnavailable, err, setupHint(err, strings.TrimSpace(string(disabled))))
	}
	defer r.Close()
	if err := r.checkOps(); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	const token = 0x6b7662656e6368 // "kvbench"
	if err := r.PrepNop(token); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if _, err := r.SubmitAndWait(1); err != nil {
		return fmt.Errorf("%w: nop round trip: %w", ErrUnavailable, err)
	}
	c, ok := r.PeekCQE()
	if !ok || c.UserData != token || c.Res != 0 {
		return fmt.Errorf("%w: nop round trip: completion %+v (present %t), want user data %#x and result 0", ErrUnavailable, c, ok, token)
	}
	r.SeenCQE()
	return nil
}

// setupHint explains a failed io_uring_setup, given the contents of
// io_uring_disabled ("" when unreadable).
func setupHint(err error, disabled string) string {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return " (kernel built without io_uring, older than 5.1, or a seccomp policy hides it)"
	case errors.Is(err, unix.EPERM) && disabled == "2":
		return " (disabled: " + disabledSysctl + " is 2)"
	case errors.Is(err, unix.EPERM) && disabled == "1":
		return " (restricted: " + disabledSysctl + " is 1, only kernel.io_uring_group members may use it)"
	case errors.Is(err, unix.EPERM):
		return " (blocked, most likely by a seccomp policy such as a container runtime's default)"
	case errors.Is(err, unix.ENOMEM):
		return " (ring memory counts against RLIMIT_MEMLOCK before Linux 5.12)"
	}
	return ""
}

// checkOps asks the kernel which opcodes it supports (IORING_REGISTER_PROBE,
// Linux 5.6) and reports the first one the Ring needs that is missing.
func (r *Ring) checkOps() error {
	const nOps = 256
	buf := make([]byte, unsafe.Sizeof(probeHeader{})+nOps*unsafe.Sizeof(probeOp{}))
	err := r.register(registerProbe, unsafe.Pointer(&buf[0]), nOps)
	runtime.KeepAlive(buf)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("uring: IORING_REGISTER_PROBE: %w (kernel older than 5.6, which IORING_OP_READ needs)", err)
		}
		return fmt.Errorf("uring: IORING_REGISTER_PROBE: %w", err)
	}
	hdr := (*probeHeader)(unsafe.Pointer(&buf[0]))
	ops := unsafe.Slice((*probeOp)(unsafe.Pointer(&buf[unsafe.Sizeof(probeHeader{})])), nOps)
	for _, o := range requiredOps {
		if int(o.op) >= int(hdr.opsLen) || ops[o.op].flags&opSupported == 0 {
			return fmt.Errorf("uring: kernel does not support %s (Linux %s)", o.name, o.since)
		}
	}
	return nil
}
