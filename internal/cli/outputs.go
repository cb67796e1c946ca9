package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/internal/syspath"
)

// AllowSystemPathFlag is the flag that lets a tool write an output under a
// system directory (design section 7), for the rare user who means it.
const AllowSystemPathFlag = "allow-system-path"

// SidecarSuffix names the sidecar a trace has beside it (trace.MetaSuffix;
// the trace package is above this one).
const SidecarSuffix = ".meta.json"

// A File is a path a run reads or writes, as the command line named it.
type File struct {
	// Flag names it in messages: "-o", "--output", "trace", "document".
	Flag string
	// Path is the path given; "-" (stdin or stdout) is never checked.
	Path string
	// Sidecar: the file is a trace, whose sidecar (Path+SidecarSuffix) is
	// read or written with it.
	Sidecar bool
}

// Files are the paths one run reads and writes, checked together before
// any work by Check.
type Files struct {
	Inputs  []File
	Outputs []File
	// AllowSystem lets outputs lie under the system directories.
	AllowSystem bool
	// Stdin is what an input "-" reads and Stdout what an output "-"
	// writes; nil is os.Stdin, os.Stdout.
	Stdin, Stdout *os.File
}

// Check refuses, as usage errors, every output kvbench must not write
// (CheckOutput) and every output that is an input, an input's sidecar or
// another output (a link or hard link to one included): writing it would
// destroy what the run reads, or what it wrote a moment before. It returns
// one error per problem.
func (f *Files) Check() []error {
	var errs []error
	for _, o := range f.Outputs {
		if o.Path == "-" {
			continue
		}
		if err := CheckOutput(o.Flag, o.Path, f.AllowSystem); err != nil {
			errs = append(errs, err)
			continue
		}
		// The sidecar is written too, through a link at its path: one
		// into a system directory is refused as the output itself is.
		if o.Sidecar {
			if err := CheckOutput(o.Flag, o.Path+SidecarSuffix, f.AllowSystem); err != nil {
				errs = append(errs, Usagef("the sidecar of %s %s: %w", o.Flag, o.Path, err))
			}
		}
	}
	outs, ins := expand(f.Outputs), expand(f.Inputs)
	for _, o := range outs {
		for _, in := range ins {
			if SameFile(o.path, in.path) {
				errs = append(errs, Usagef("%s: is %s: refusing to overwrite an input of the run", o.shown, in.shown))
			}
		}
	}
	errs = append(errs, f.stdinIsOutput(outs)...)
	errs = append(errs, f.stdoutIsFileOf(ins, outs)...)
	for i, a := range outs {
		for _, b := range outs[i+1:] {
			if SameFile(a.path, b.path) {
				errs = append(errs, Usagef("%s: is also %s: two outputs cannot share a file", a.shown, b.shown))
			}
		}
	}
	return errs
}

// stdinIsOutput refuses each of outs that is the file an input "-" reads
// (kvreplay - -o t.csv < t.csv; kvtrace --config - -o c.yaml < c.yaml):
// written, it would replace what the run reads, and a pipe opened by name
// (/dev/stdin) would take the output into the input.
func (f *Files) stdinIsOutput(outs []namedFile) []error {
	i := slices.IndexFunc(f.Inputs, func(x File) bool { return x.Path == "-" })
	if i < 0 {
		return nil
	}
	return sameStd(cmp.Or(f.Stdin, os.Stdin), outs, func(shown string) error {
		return Usagef("%s: is %s - (standard input): refusing to overwrite an input of the run", shown, f.Inputs[i].Flag)
	})
}

// stdoutIsFileOf refuses an output "-" whose standard output is a file
// the run reads (kvreport r.json >> r.json; kvtrace --request-trace
// t.jsonl -o - >> t.jsonl): the output would be written into the input,
// after it or over it; and each other output that is the file it writes
// (kvtrace -o - --output /dev/stdout; kvtrace -o t.csv --output - > t.csv):
// two outputs would be written into one file, interleaved or one renamed
// over the other.
func (f *Files) stdoutIsFileOf(ins, outs []namedFile) []error {
	i := slices.IndexFunc(f.Outputs, func(x File) bool { return x.Path == "-" })
	if i < 0 {
		return nil
	}
	stdout := cmp.Or(f.Stdout, os.Stdout)
	errs := sameStd(stdout, ins, func(shown string) error {
		return Usagef("%s - (standard output): is %s: refusing to overwrite an input of the run", f.Outputs[i].Flag, shown)
	})
	return append(errs, sameStd(stdout, outs, func(shown string) error {
		return Usagef("%s: is %s - (standard output): two outputs cannot share a file", shown, f.Outputs[i].Flag)
	})...)
}

// sameStd is say's error for each of files that is the file std (standard
// input or output) is. A terminal read and written destroys nothing.
func sameStd(std *os.File, files []namedFile, say func(shown string) error) []error {
	st, err := std.Stat()
	if err != nil || st.Mode()&fs.ModeCharDevice != 0 {
		return nil
	}
	var errs []error
	for _, nf := range files {
		if fi, err := os.Stat(nf.path); err == nil && os.SameFile(st, fi) {
			errs = append(errs, say(nf.shown))
		}
	}
	return errs
}

// namedFile is a path of Files with how a message names it ("the sidecar
// of --output t.csv").
type namedFile struct {
	path, shown string
}

// expand lists files and their sidecars.
func expand(files []File) []namedFile {
	var out []namedFile
	for _, x := range files {
		if x.Path == "-" || x.Path == "" {
			continue
		}
		shown := x.Flag + " " + x.Path
		out = append(out, namedFile{x.Path, shown})
		if x.Sidecar {
			out = append(out, namedFile{x.Path + SidecarSuffix, "the sidecar of " + shown})
		}
	}
	return out
}

// CheckOutput refuses, as a usage error naming flag, an output path
// kvbench must not write: a directory or block device (outfile.Classify),
// a path under a system directory (CheckPath) unless allowSystem, and a
// special file under one other than /dev/null, /dev/zero, /dev/full, a
// terminal or one of the process's own descriptors (/dev/stdout,
// /dev/fd/N). A device, FIFO or socket elsewhere is written in place.
func CheckOutput(flag, path string, allowSystem bool) error {
	name := flag
	if path == "" {
		return Usagef("%s: empty file name (want a file, or - for standard output)", name)
	}
	t, err := outfile.Classify(path)
	if err != nil {
		return Usagef("%s %s: %w", name, parsemsg.Arg(path), UnwrapPath(err))
	}
	if allowSystem {
		return nil
	}
	if t.Kind != outfile.InPlace {
		if err := CheckPath(flag, path); err != nil {
			return Usagef("%w (--%s writes there anyway)", err, AllowSystemPathFlag)
		}
		return nil
	}
	if t.FD >= 0 || harmlessDevice(path) {
		return nil
	}
	abs, err := syspath.Reached(path)
	if err != nil {
		return Usagef("%s %s: %w", name, parsemsg.Arg(path), err)
	}
	if sys, _ := syspath.System(abs); sys != "" && !harmlessDevice(abs) {
		return Usagef("%s %s: a %v under the system directory %s: refusing to write into it (--%s writes there anyway)",
			name, parsemsg.Arg(path), t.Mode.Type(), sys, AllowSystemPathFlag)
	}
	return nil
}

// harmlessDevice reports whether path names a system device an output may
// go to: the null and zero devices and terminals.
func harmlessDevice(path string) bool {
	p := filepath.Clean(path)
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/console":
		return true
	}
	return strings.HasPrefix(p, "/dev/pts/")
}

// SameFile reports whether the paths a and b name the same file: the same
// inode where both exist (links and hard links included), the same path
// with its links resolved where neither does. Character devices are never
// the same file for this purpose: two outputs into /dev/null, or a terminal
// read and written, destroy nothing. "-" is never a file.
func SameFile(a, b string) bool {
	if a == "-" || b == "-" || a == "" || b == "" {
		return false
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	switch {
	case errA == nil && errB == nil:
		if fa.Mode()&fs.ModeCharDevice != 0 {
			return false
		}
		return os.SameFile(fa, fb)
	case errA == nil || errB == nil:
		return false
	case !errors.Is(errA, fs.ErrNotExist) || !errors.Is(errB, fs.ErrNotExist):
		return false
	}
	return resolved(a) == resolved(b)
}

// resolved is path made absolute with the links of its deepest existing
// ancestor resolved.
func resolved(path string) string {
	abs, err := syspath.Reached(path)
	if err != nil {
		return path
	}
	return abs
}

// Sidecar says what became of the sidecar of the trace output path: ""
// when it can be written beside it, or why none is written (the trace is
// not a regular file). It is for the notes a tool prints.
func Sidecar(path string) string {
	if path == "-" {
		return "the trace went to standard output: no sidecar written"
	}
	if t, err := outfile.Classify(path); err == nil && t.Kind == outfile.InPlace {
		return fmt.Sprintf("%s is not a regular file: no sidecar written beside it", path)
	}
	return ""
}
