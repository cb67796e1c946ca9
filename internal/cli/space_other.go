//go:build !unix

package cli

// FreeBytes is 0, unknown, where the system offers no statfs.
func FreeBytes(path string) int64 { return 0 }

// SameFileSystem is false where the system offers no device numbers.
func SameFileSystem(a, b string) bool { return false }
