//go:build linux

package host

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ProbeDirectIO probes the directory dir for direct I/O as kvreplay's
// NVMe tier probes its directory: the alignment statx reports for a file
// made there, and whether the file system takes O_DIRECT and one aligned
// write. The file is unnamed (O_TMPFILE), so nothing is left in dir, even
// by a process killed meanwhile; where one cannot be made (no write
// permission, a file system without O_TMPFILE) nothing is Known.
func ProbeDirectIO(dir string) DirectIO {
	d := DirectIO{FileSystem: statfsType(dir), Align: DefaultDirectAlign}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return d
	}
	defer unix.Close(fd)
	d.Known = true
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &stx) == nil && stx.Mask&unix.STATX_DIOALIGN != 0 {
		for _, a := range []uint32{stx.Dio_mem_align, stx.Dio_offset_align} {
			if a > 0 && a&(a-1) == 0 && int64(a) > d.Align {
				d.Align = int64(a)
			}
		}
	}
	// The unnamed file opened again, with O_DIRECT, through its
	// descriptor's link.
	dfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDWR|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		// Without /proc nothing is known of O_DIRECT: taken as accepted.
		d.Refused = errors.Is(err, unix.EINVAL)
		return d
	}
	defer unix.Close(dfd)
	// An aligned buffer: a page, or more, from mmap.
	buf, err := unix.Mmap(-1, 0, int(max(d.Align, int64(os.Getpagesize()))), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return d
	}
	defer unix.Munmap(buf)
	if _, err := unix.Pwrite(dfd, buf[:d.Align], 0); errors.Is(err, unix.EINVAL) {
		d.Refused = true
	}
	return d
}
