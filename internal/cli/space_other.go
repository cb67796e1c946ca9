//go:build !unix

package cli

// FreeBytes is -1, unknown, where the system offers no statfs.
func FreeBytes(path string) int64 { return -1 }

// SameFileSystem is false where the system offers no device numbers.
func SameFileSystem(a, b string) bool { return false }
