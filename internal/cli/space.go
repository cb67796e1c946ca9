//go:build unix

package cli

import "syscall"

// FreeBytes is the space available to an unprivileged writer on the file
// system that holds path, or will hold it once made (its deepest existing
// ancestor, DeepestExisting); -1 when unknown (0 is a full file system).
func FreeBytes(path string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(DeepestExisting(path), &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// SameFileSystem reports whether a and b (or their deepest existing
// ancestors) lie on one file system, whose free space they share.
func SameFileSystem(a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(DeepestExisting(a), &sa) != nil || syscall.Stat(DeepestExisting(b), &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev
}
