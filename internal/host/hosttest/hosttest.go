//go:build linux

// Package hosttest makes the file systems tests need: a small tmpfs,
// to fill.
package hosttest

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size (as mount's size= option takes it: "4m")
// on a new directory, unmounted at the test's end; the test is skipped
// where mounting is not permitted (not root, a container without
// CAP_SYS_ADMIN).
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("kvbench-test", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size); err != nil {
		t.Skipf("mount a %s tmpfs: %v (needs root)", size, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
