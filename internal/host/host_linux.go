//go:build linux

package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// kernelRelease is uname's release, "" if uname fails.
func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// sysinfoMemory is the total RAM from sysinfo(2), 0 if it fails.
func sysinfoMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// statfsType names the file system holding path from its statfs magic
// number: the name when known, else the number in hex, "" if statfs fails.
func statfsType(path string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return ""
	}
	if name, ok := fsMagic[int64(st.Type)]; ok {
		return name
	}
	return fmt.Sprintf("%#x", uint64(st.Type))
}

// statfsSpace is the space available to an unprivileged writer on the
// file system that holds path, and its size; -1, -1 when statfs fails.
func statfsSpace(path string) (free, total int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return -1, -1
	}
	// Blocks count in fragments (f_frsize), which Linux sets to the block
	// size where a file system has none of its own.
	unit := st.Frsize
	if unit <= 0 {
		unit = st.Bsize
	}
	return int64(st.Bavail) * unit, int64(st.Blocks) * unit
}

// deviceNumber is "major:minor" of the device holding path, "" if stat
// fails.
func deviceNumber(path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return ""
	}
	return majMin(uint64(st.Dev))
}

// blockDeviceNumber is "major:minor" of the block device node path, "" if
// path is not one.
func blockDeviceNumber(path string) string {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return majMin(uint64(st.Rdev))
}

// majMin splits a Linux dev_t as glibc's gnu_dev_major and gnu_dev_minor
// do.
func majMin(dev uint64) string {
	major := (dev>>8)&0xfff | (dev>>32)&0xfffff000
	minor := dev&0xff | (dev>>12)&0xffffff00
	return fmt.Sprintf("%d:%d", major, minor)
}

// PeakRSS returns the process's peak resident set size in bytes (VmHWM of
// /proc/self/status), or 0 when unknown. Unlike getrusage's ru_maxrss it
// does not count the memory of the process that forked this one before it
// exec'd.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) == 2 && f[1] == "kB" {
				n, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return n << 10
				}
			}
		}
	}
	return 0
}

// readPressure returns /proc/pressure/NAME, nil where it cannot be read
// (a kernel without CONFIG_PSI, or psi=0).
func readPressure(name string) []byte {
	b, _ := os.ReadFile("/proc/pressure/" + name)
	return b
}
