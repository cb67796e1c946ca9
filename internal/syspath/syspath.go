// Package syspath owns which paths kvbench refuses to write to: the system
// directories of design section 7 and everything under them. The command
// line (internal/cli) and the NVMe backends (replay/nvme, replay/extent)
// ask it (System, Check, Resolve), so they refuse the same paths in the same
// words. It uses the standard library only.
package syspath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// dirs are the directories no kvbench tool writes into, nor under. /dev
// holds raw block devices, which a tool accepts only behind its own
// explicit flag.
var dirs = [...]string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc", "/sys", "/dev"}

// System reports the system directory the clean absolute path p is
// (exact) or lies under; dir is "" when p is allowed. The root directory
// is refused itself (but not what lies under it); /dev/shm, the usual tmpfs,
// is allowed.
func System(p string) (dir string, exact bool) {
	if p == "/" {
		return "/", true
	}
	if p == "/dev/shm" || strings.HasPrefix(p, "/dev/shm/") {
		return "", false
	}
	for _, d := range dirs {
		if p == d {
			return d, true
		}
		if strings.HasPrefix(p, d+"/") {
			return d, false
		}
	}
	return "", false
}

// Abs returns path made absolute as the kernel reads it: joined to the
// working directory and not cleaned, since ".." after a symbolic link or a
// missing directory is not the lexical step back that filepath.Abs takes
// ("link/../x" is x beside the link's target; "nodir/../x" is nothing).
// Resolve gives the path the kernel reaches.
func Abs(path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return wd + string(filepath.Separator) + path, nil
}

// Reached returns the clean absolute path the kernel reaches for path:
// Abs, with its links resolved where Resolve can, else cleaned (a path
// below a missing directory, or one Resolve fails on). Its error is
// Abs's.
func Reached(path string) (string, error) {
	abs, err := Abs(path)
	if err != nil {
		return "", err
	}
	if r, err := Resolve(abs); err == nil {
		return r, nil
	}
	return filepath.Clean(abs), nil
}

// split splits the absolute path p at its last element, without cleaning
// what comes before it (filepath.Dir would): "/a/l/../x" is "/a/l/.." and
// "x".
func split(p string) (dir, base string) {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ".", p
	}
	dir = strings.TrimRight(p[:i], "/")
	if dir == "" {
		dir = "/"
	}
	return dir, p[i+1:]
}

// Resolve returns the absolute path p (as Abs gives it: "." and ".." are
// read as the kernel reads them) clean, with the symbolic links of its
// deepest existing ancestor (itself included) resolved, so that a link
// into /etc is seen as /etc. A link that names nothing yet (a dangling
// link, which a write through it would create) is followed to what it
// names, so that a link to /etc/x is seen as /etc/x. A "." or ".." after a
// missing directory names nothing the kernel can reach: an error wrapping
// fs.ErrNotExist. Errors other than a missing path are returned; so is a
// loop of links.
func Resolve(p string) (string, error) {
	rest := ""
	for dir, links := p, 0; ; {
		resolved, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(resolved, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent, base := split(dir)
		if base == "." || base == ".." {
			// Below a directory that does not exist.
			return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ENOENT}
		}
		if target, err := os.Readlink(dir); err == nil {
			// dir is a dangling link: go on from what it names. Its
			// directory exists, since the link does.
			if links++; links > maxLinks {
				return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
			}
			if !filepath.IsAbs(target) {
				parent, err := filepath.EvalSymlinks(parent)
				if err != nil {
					return "", err
				}
				target = parent + string(filepath.Separator) + target
			}
			dir = target
			continue
		}
		if parent == dir {
			return filepath.Clean(p), nil
		}
		rest = filepath.Join(base, rest)
		dir = parent
	}
}

// maxLinks bounds the dangling links Resolve follows, as the kernel bounds
// the links it follows in one path (40).
const maxLinks = 40

// Check returns nil when the clean absolute path p is allowed, and
// otherwise an error naming p and the system directory it is or lies
// under, wrapping refused (the caller's sentinel).
func Check(p string, refused error) error {
	switch sys, exact := System(p); {
	case sys == "":
		return nil
	case exact:
		return fmt.Errorf("%s is a system directory: %w", p, refused)
	default:
		return fmt.Errorf("%s is under the system directory %s: %w", p, sys, refused)
	}
}
