package nvme

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/internal/host"
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

// makeDirs makes dir and its missing parents, and returns those it made,
// deepest first.
func makeDirs(dir string) ([]string, error) {
	var missing []string
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("nvme: %s: not a directory", p)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("nvme: %w", err)
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			removeDirs(made)
			return nil, fmt.Errorf("nvme: %w", err)
		}
		made = append([]string{missing[i]}, made...)
	}
	return made, nil
}

// removeDirs removes the directories dirs, deepest first, that are empty.
func removeDirs(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return // not empty: its parents are not either
		}
	}
}

// fsType names the file system that holds dir, for messages.
func fsType(dir string) string { return host.FSType(dir) }
