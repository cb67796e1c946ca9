package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/outfile"
)

// RunDir is the directory of one run, made inside a directory the user
// names (such as kvreplay's --dir), so that a tool that writes and then
// removes files never touches one it did not create: it works in
// PARENT/TOOL-PID-RANDOM and removes only that, and the parents it made.
//
// While the run holds it, the directory is locked (a shared flock on it),
// so that a run directory no process holds (one left by a killed run, or
// kept on purpose) can be told from one in use: see LeftoverRunDirs. The
// directory gets its final name only once locked, so a run starting beside
// others never mistakes theirs for leftovers. A RunDir is not safe for
// concurrent use; Remove or Keep must be called.
type RunDir struct {
	path    string
	made    []string // parents MakeRunDir made, deepest first
	lock    *os.File
	untrack func() // ends its record in the run's leftovers
}

// MakeRunDir makes parent, and its missing parents, if need be, and a new,
// empty directory PARENT/TOOL-PID-RANDOM in it, locked. A parent that is
// not a directory is an input error naming flag (such as "--dir"). Until
// Remove takes it back, or Keep leaves it, the directory is one of the
// run's leftovers (outfile.Track on ctx): a tool stopped before its
// clean-up finished names it.
func MakeRunDir(ctx context.Context, flag, parent, tool string) (*RunDir, error) {
	made, err := MakeDirs(flag, parent)
	if err != nil {
		return nil, err
	}
	d := &RunDir{made: made}
	fail := func(err error) (*RunDir, error) {
		outfile.RemoveDirs(d.made)
		return nil, err
	}
	tmp, err := os.MkdirTemp(parent, ".new-"+tool+"-*")
	if err != nil {
		return fail(Input(fmt.Errorf("%s %s: %w", flag, parent, UnwrapPath(err))))
	}
	if d.lock, err = os.Open(tmp); err == nil {
		// A shared lock: an exclusive one needs a writable descriptor
		// where flock is emulated with fcntl (NFS). Without a lock the run
		// goes on; others then report nothing of it either way.
		if unix.Flock(int(d.lock.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil {
			d.lock.Close()
			d.lock = nil
		}
	}
	random := strings.TrimPrefix(filepath.Base(tmp), ".new-"+tool+"-")
	d.path = filepath.Join(parent, tool+"-"+strconv.Itoa(os.Getpid())+"-"+random)
	if err := renameNoReplace(tmp, d.path); err != nil {
		d.release()
		os.Remove(tmp)
		return fail(fmt.Errorf("%s %s: %w", flag, parent, err))
	}
	d.untrack = outfile.Track(ctx, outfile.Leftover{Path: d.path, What: "the run directory of " + tool + ", with what the run wrote in it"})
	return d, nil
}

// Path returns the run directory.
func (d *RunDir) Path() string { return d.path }

// Remove removes the run directory, which must be empty by now (the run
// removed what it created in it: Remove deletes no file), and then the
// parents MakeRunDir made, those that are empty. A directory that is not
// empty stays, and Remove says so.
func (d *RunDir) Remove() error {
	defer d.release() // after the removal: a run directory seen unlocked is a leftover
	if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: left in place: %w", d.path, UnwrapPath(err))
	}
	d.forget()
	outfile.RemoveDirs(d.made)
	return nil
}

// Keep leaves the run directory and everything in it in place, unlocked:
// later runs report it as a leftover until someone removes it.
func (d *RunDir) Keep() {
	d.forget()
	d.release()
}

// forget ends the run directory's record in the run's leftovers.
func (d *RunDir) forget() {
	if d.untrack != nil {
		d.untrack()
		d.untrack = nil
	}
}

func (d *RunDir) release() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
}

// LeftoverRunDirs returns the run directories of tool in parent that no
// process holds: left by a run that was killed, or kept on purpose. It
// never removes or changes them. Where locks cannot be told (a file system
// that refuses them), it reports none.
func LeftoverRunDirs(parent, tool string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !isRunDirName(e.Name(), tool) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			out = append(out, p) // nobody holds it
		}
		f.Close()
	}
	return out
}

// isRunDirName reports whether name is TOOL-PID-RANDOM.
func isRunDirName(name, tool string) bool {
	rest, ok := strings.CutPrefix(name, tool+"-")
	if !ok {
		return false
	}
	pid, random, ok := strings.Cut(rest, "-")
	if !ok || random == "" {
		return false
	}
	_, err := strconv.ParseUint(pid, 10, 32)
	return err == nil
}

// MakeDirs makes dir, given as flag, and its missing parents
// (outfile.MakeDirs), and returns those it made, deepest first, for
// outfile.RemoveDirs to take back. Its errors name flag and dir, exit 2.
func MakeDirs(flag, dir string) ([]string, error) {
	made, err := outfile.MakeDirs(dir)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe) && pe.Op == "mkdir" && errors.Is(err, syscall.ENOTDIR):
		return nil, Usagef("%s %s: %s is not a directory", flag, dir, pe.Path)
	case err != nil:
		return nil, Input(fmt.Errorf("%s %s: %w", flag, dir, UnwrapPath(err)))
	}
	return made, nil
}

// renameNoReplace renames old to new, failing if new exists.
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// A file system without RENAME_NOREPLACE: the name's random part
		// makes a clash unlikely; check it all the same.
		if _, err := os.Lstat(new); err == nil {
			return &fs.PathError{Op: "rename", Path: new, Err: fs.ErrExist}
		}
		err = os.Rename(old, new)
	}
	return err
}

// UnwrapPath returns the error inside a *fs.PathError, whose path the
// caller's message already names; other errors as they are. A full file
// system's error keeps what the path told: which file system filled
// (NameFullFileSystem).
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fullAt(pe.Path, pe.Err)
	}
	return err
}

// DeepestExisting returns path, made absolute, or its deepest ancestor that
// exists: where a directory not made yet will live (for statfs).
func DeepestExisting(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		p = filepath.Clean(path)
	}
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}
