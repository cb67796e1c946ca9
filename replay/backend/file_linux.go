package backend

import "syscall"

// Fdatasync makes the written data of the file or device open as fd
// durable (fdatasync(2), retried when a signal interrupts it), for a
// Syncer on a file or a device. Its error is FileError's: ENOSPC matches
// ErrNoSpace.
func Fdatasync(fd uintptr) error {
	for {
		err := syscall.Fdatasync(int(fd))
		if err != syscall.EINTR {
			return FileError(err)
		}
	}
}
