package extent

import (
	"fmt"

	"github.com/kvbench/kvbench/internal/host"
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
func fsType(path string) string { return host.FSType(path) }
