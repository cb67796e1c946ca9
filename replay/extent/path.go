package extent

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/syspath"
)

// The helpers below follow replay/nvme's (design section 7): the two
// layouts of the NVMe tier refuse the same paths and name file systems the
// same way.

// checkDir refuses (with ErrSystemPath) the absolute, clean directory dir
// when it is a system directory or lies under one (internal/syspath).
func checkDir(dir string) error {
	switch sys, exact := syspath.System(dir); {
	case sys == "":
		return nil
	case exact:
		return fmt.Errorf("%s is a system directory: %w", dir, ErrSystemPath)
	default:
		return fmt.Errorf("%s is under the system directory %s: %w", dir, sys, ErrSystemPath)
	}
}

// resolve returns path with the symbolic links of its deepest existing
// ancestor (itself included) resolved, so that a link into /etc is seen as
// /etc, and a /dev/disk/by-id link as the device.
func resolve(path string) (string, error) {
	r, err := syspath.Resolve(path)
	if err != nil {
		return "", fmt.Errorf("extent: %s: %w", path, err)
	}
	return r, nil
}

// fsType names the file system that holds path, for messages.
func fsType(path string) string {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return "unknown file system"
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC:
		return "ext4"
	case unix.XFS_SUPER_MAGIC:
		return "xfs"
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs"
	case unix.F2FS_SUPER_MAGIC:
		return "f2fs"
	case unix.TMPFS_MAGIC:
		return "tmpfs"
	case unix.RAMFS_MAGIC:
		return "ramfs"
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.NFS_SUPER_MAGIC:
		return "nfs"
	case unix.FUSE_SUPER_MAGIC:
		return "fuse"
	case unix.V9FS_MAGIC:
		return "9p"
	case 0x2fc12fc1:
		return "zfs"
	case 0x47504653:
		return "gpfs"
	case 0x0bd00bd0:
		return "lustre"
	}
	return fmt.Sprintf("file system 0x%x", uint32(st.Type))
}
