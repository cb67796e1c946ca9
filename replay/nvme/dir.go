package nvme

import (
	"fmt"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/syspath"
)

// checkDir refuses (with ErrSystemDir) the absolute, clean path dir when it
// is a system directory or lies under one (internal/syspath).
func checkDir(dir string) error {
	switch sys, exact := syspath.System(dir); {
	case sys == "":
		return nil
	case exact:
		return fmt.Errorf("%s is a system directory: %w", dir, ErrSystemDir)
	default:
		return fmt.Errorf("%s is under the system directory %s: %w", dir, sys, ErrSystemDir)
	}
}

// resolve returns dir with the symbolic links of its deepest existing
// ancestor resolved, so that a link into /etc is seen as /etc.
func resolve(dir string) (string, error) {
	r, err := syspath.Resolve(dir)
	if err != nil {
		return "", fmt.Errorf("nvme: %s: %w", dir, err)
	}
	return r, nil
}

// makeDirs makes dir and its missing parents (outfile.MakeDirs), and
// returns those it made, deepest first, for outfile.RemoveDirs.
func makeDirs(dir string) ([]string, error) {
	made, err := outfile.MakeDirs(dir)
	if err != nil {
		return nil, fmt.Errorf("nvme: %w", err)
	}
	return made, nil
}

// fsType names the file system that holds dir, for messages.
func fsType(dir string) string { return host.FSType(dir) }
