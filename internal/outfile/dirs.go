package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// MakeDirs makes dir and its missing parents, and returns those it made,
// deepest first, for RemoveDirs to take back: kvbench removes only what it
// made. A path on the way that exists and is not a directory is an
// *fs.PathError naming it, wrapping syscall.ENOTDIR. When making one
// fails, those made before it are removed again.
func MakeDirs(dir string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return nil, &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			RemoveDirs(made)
			return nil, err
		}
		made = append([]string{missing[i]}, made...)
	}
	return made, nil
}

// RemoveDirs removes the directories dirs, deepest first, while they are
// empty: a directory that is not empty stops it, since its parents are not
// empty either.
func RemoveDirs(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}
