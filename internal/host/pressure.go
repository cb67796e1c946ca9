package host

import (
	"bytes"
	"strconv"
	"time"
)

// CPUStall returns how long, since boot, at least one task on this
// machine (or in this cgroup's view of it) was runnable and waiting for
// a CPU: the "some" total of /proc/pressure/cpu (Linux's pressure stall
// information), with ok false where the kernel does not keep it. Two
// readings bound a window: their difference over its length is the share
// of it during which something waited for a CPU.
func CPUStall() (stall time.Duration, ok bool) {
	return parseCPUStall(readPressure("cpu"))
}

// parseCPUStall reads the "some" line's total= (microseconds) of a
// /proc/pressure file's text.
func parseCPUStall(b []byte) (time.Duration, bool) {
	for line := range bytes.Lines(b) {
		rest, found := bytes.CutPrefix(line, []byte("some "))
		if !found {
			continue
		}
		for _, f := range bytes.Fields(rest) {
			if v, found := bytes.CutPrefix(f, []byte("total=")); found {
				us, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil || us < 0 {
					return 0, false
				}
				return time.Duration(us) * time.Microsecond, true
			}
		}
	}
	return 0, false
}
