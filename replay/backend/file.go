package backend

import "fmt"

// MemoryFS reports whether fstype is a memory file system (tmpfs, ramfs):
// its files are the page cache, with no device behind them.
func MemoryFS(fstype string) bool { return fstype == "tmpfs" || fstype == "ramfs" }

// DirectIO is the O_DIRECT rule of the backends on files and devices, so
// that they decide Caps.Direct alike and say why in the same words: I/O
// bypasses the page cache when it was asked for (want), when the file
// system has a device behind it (not tmpfs or ramfs, whose files are the
// page cache whatever the flag), and when probe, which tries O_DIRECT
// once, finds that the file system takes it. Otherwise direct is false
// and warning is what a result must report (Caps.Warnings), naming what
// (the backend and its file or directory, "nvme: /mnt/nvme/kv") and
// fstype. An error of probe is returned as it is.
func DirectIO(what, fstype string, want bool, probe func() (refused bool, err error)) (direct bool, warning string, err error) {
	switch {
	case !want:
		return false, fmt.Sprintf("%s (%s): buffered I/O requested: page cache in the numbers", what, fstype), nil
	case MemoryFS(fstype):
		// tmpfs takes O_DIRECT since Linux 6.6, but its files live in the
		// page cache whatever the flag: nothing would bypass it.
		return false, fmt.Sprintf("%s (%s): memory file system, no device behind O_DIRECT: buffered I/O, page cache in the numbers", what, fstype), nil
	}
	refused, err := probe()
	switch {
	case err != nil:
		return false, "", err
	case refused:
		return false, fmt.Sprintf("%s (%s): file system refuses O_DIRECT: buffered I/O, page cache in the numbers", what, fstype), nil
	}
	return true, "", nil
}
