package setup

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/trace"
)

// A block device given as --device with --allow-device is overwritten
// whole. Before that, kvreplay makes sure it holds none of the run's own
// files: the trace (or its sidecar) on a file system of the device, of one
// of its partitions or of a device built on it (device mapper, md), the
// result's directory there, or a loop device whose backing file is one of
// them.

// sysBlock is where sysfs lists block devices by number.
const sysBlock = "/sys/dev/block"

// blockFamily returns the sysfs directories of the block device numbered
// rdev and of every device whose data lies on it: the whole disk of a
// partition, a disk's partitions, and their holders (device mapper, md,
// loop devices do not show here), recursively. sysRoot is /sys/dev/block
// (a test gives a tree of its own).
func blockFamily(sysRoot string, rdev uint64) []string {
	dir, err := filepath.EvalSymlinks(filepath.Join(sysRoot, devName(rdev)))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir) // a partition: its disk and siblings hold it too
	}
	seen := map[string]bool{}
	var out []string
	var walk func(d string)
	walk = func(d string) {
		if seen[d] || len(seen) > 1024 {
			return
		}
		seen[d] = true
		out = append(out, d)
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(d, e.Name(), "partition")); err == nil {
				walk(filepath.Join(d, e.Name()))
			}
		}
		holders, _ := os.ReadDir(filepath.Join(d, "holders"))
		for _, h := range holders {
			if r, err := filepath.EvalSymlinks(filepath.Join(d, "holders", h.Name())); err == nil {
				walk(r)
			}
		}
	}
	walk(dir)
	return out
}

// devName is a device number as sysfs names it: MAJOR:MINOR.
func devName(rdev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
}

// checkBlockDevice refuses the block device dev (its number rdev) when one
// of files (the run's inputs and the result's directory, by flag and
// path) lies on it or on a device of its family (blockFamily), or is the
// backing file of a loop device among them.
func checkBlockDevice(sysRoot, dev string, rdev uint64, files []cli.File) error {
	family := blockFamily(sysRoot, rdev)
	nums := map[string]string{devName(rdev): dev}
	var backing []string
	for _, d := range family {
		if b, err := os.ReadFile(filepath.Join(d, "dev")); err == nil {
			nums[strings.TrimSpace(string(b))] = filepath.Base(d)
		}
		if b, err := os.ReadFile(filepath.Join(d, "loop", "backing_file")); err == nil {
			backing = append(backing, strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)"))
		}
	}
	for _, f := range files {
		if f.Path == "" || f.Path == "-" {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(f.Path, &st) != nil {
			continue
		}
		if name, ok := nums[devName(st.Dev)]; ok {
			return fmt.Errorf("--device %s: %s %s lies on a file system of %s: the replay would overwrite it", parsemsg.Arg(dev), f.Flag, parsemsg.Arg(f.Path), name)
		}
		for _, b := range backing {
			if cli.SameFile(b, f.Path) {
				return fmt.Errorf("--device %s: a loop device over %s %s (%s): the replay would overwrite it", parsemsg.Arg(dev), f.Flag, parsemsg.Arg(f.Path), b)
			}
		}
	}
	return nil
}

// runFiles are the files a device must not hold: the traces, their
// sidecars and the result's directory (output, -o).
func runFiles(traces []string, output string) []cli.File {
	var files []cli.File
	for _, tr := range traces {
		if tr == "-" {
			continue
		}
		files = append(files, cli.File{Flag: "the trace", Path: tr}, cli.File{Flag: "the sidecar", Path: tr + cli.SidecarSuffix})
	}
	if output != "" && output != "-" {
		files = append(files, cli.File{Flag: "the result's directory", Path: cli.DeepestExisting(filepath.Dir(output))})
	}
	return files
}

// rdevOf is the device number of the block device at path.
func rdevOf(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Rdev), nil
}

// CheckDevice refuses, before anything runs, an extent layout's Device
// that is one of traces, a trace's sidecar or the result's file (output, -o), a directory, an
// existing regular file unless DeviceOverwrite, and a block device unless
// AllowDevice, or when it holds a trace or the result (checkBlockDevice).
// Without --layout extent --device there is nothing to check.
func (o Options) CheckDevice(traces []string, output string) error {
	dev := o.Device
	if o.Layout != "extent" || dev == "" {
		return nil
	}
	for _, tr := range traces {
		if cli.SameFile(dev, tr) {
			return fmt.Errorf("--device %s: is the trace %s: refusing to overwrite it", parsemsg.Arg(dev), parsemsg.Arg(tr))
		}
		if tr != "-" && cli.SameFile(dev, tr+cli.SidecarSuffix) {
			return fmt.Errorf("--device %s: is the sidecar of the trace %s: refusing to overwrite it", parsemsg.Arg(dev), parsemsg.Arg(tr))
		}
	}
	if cli.SameFile(dev, output) {
		return fmt.Errorf("--device %s: is the result file (-o %s): refusing to overwrite it", parsemsg.Arg(dev), parsemsg.Arg(output))
	}
	fi, err := os.Stat(dev)
	block := err == nil && fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0
	if !block && (err == nil || errors.Is(err, fs.ErrNotExist)) {
		// A file: never under a system directory (a block device lies
		// under /dev, and is checked below).
		if err := cli.CheckPath("--device", dev); err != nil {
			return err
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--device %s: %w", parsemsg.Arg(dev), cli.UnwrapPath(err))
	case !block && !fi.Mode().IsRegular() && !fi.IsDir():
		return fmt.Errorf("--device %s: a %s: want a file or a block device", parsemsg.Arg(dev), outfile.TypeName(fi.Mode()))
	case fi.IsDir():
		return fmt.Errorf("--device %s: a directory (want a file or a block device; the directory layout is --layout dir --dir %s)", parsemsg.Arg(dev), parsemsg.Arg(dev))
	case fi.Mode().IsRegular() && !o.DeviceOverwrite:
		// An empty file too: the replay would grow it and leave data in it.
		return fmt.Errorf("--device %s: an existing file of %s: the replay would overwrite it (pass --device-overwrite if it holds nothing you need, or name a new file)",
			parsemsg.Arg(dev), cli.FormatBytes(fi.Size()))
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		if !o.AllowDevice {
			return fmt.Errorf("--device %s: a block device: the replay would overwrite its data (pass --allow-device if it holds nothing you need)", parsemsg.Arg(dev))
		}
		rdev, err := rdevOf(dev)
		if err != nil {
			return fmt.Errorf("--device %s: %w", parsemsg.Arg(dev), err)
		}
		return checkBlockDevice(sysBlock, dev, rdev, runFiles(traces, output))
	}
	return nil
}

// CheckPaths refuses, before anything runs, a trace that is a directory,
// a Dir that names something other than a directory (or none, without
// Mkdir), a Layout other than dir or extent, a Device kvreplay must not
// overwrite (CheckDevice) or without the extent layout, and a result
// file (output, -o) it must not write: a system path unless allowSystem,
// a trace or a trace's sidecar (cli.Files).
func (o Options) CheckPaths(traces []string, output string, allowSystem bool) []error {
	files := cli.Files{AllowSystem: allowSystem}
	for _, tr := range traces {
		files.Inputs = append(files.Inputs, cli.File{Flag: "trace", Path: tr, Sidecar: true})
	}
	// Without -o (or with -o -) the document, or the plan, goes to stdout,
	// which must not be a trace (kvreplay t.csv >> t.csv).
	files.Outputs = append(files.Outputs, cli.File{Flag: "-o", Path: cmp.Or(output, "-")})
	errs := files.Check()
	if o.Dir != "" {
		if err := cli.CheckPath("--dir", o.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	switch o.Layout {
	case "dir":
		if o.Device != "" {
			errs = append(errs, fmt.Errorf("--device %s: only with --layout extent", parsemsg.Arg(o.Device)))
		}
	case "extent":
	default:
		errs = append(errs, fmt.Errorf("--layout %s: want dir or extent", parsemsg.Arg(o.Layout)))
	}
	for _, tr := range traces {
		if fi, err := os.Stat(tr); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("trace %s: a directory (want a trace file, or - for stdin)", parsemsg.Arg(tr)))
		}
	}
	if o.Dir != "" {
		fi, err := os.Stat(o.Dir)
		switch {
		case err == nil && !fi.IsDir():
			errs = append(errs, fmt.Errorf("--dir %s: not a directory", parsemsg.Arg(o.Dir)))
		case err == nil && writable(o.Dir) != nil:
			// Before the plan, whose advice (a smaller --size-scale)
			// would not help.
			errs = append(errs, fmt.Errorf("--dir %s: %w", parsemsg.Arg(o.Dir), writable(o.Dir)))
		case errors.Is(err, fs.ErrNotExist) && !o.Mkdir:
			// A typo, or a drive not mounted at /mnt/nvme, must not
			// benchmark the disk that holds the root instead.
			errs = append(errs, fmt.Errorf("--dir %s: does not exist: create it, or pass --mkdir", parsemsg.Arg(o.Dir)))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("--dir %s: %w", parsemsg.Arg(o.Dir), cli.UnwrapPath(err)))
		}
	}
	if err := o.CheckDevice(traces, output); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// writable is why kvreplay cannot make its run directory in dir (a
// read-only file system, no permission), or nil.
func writable(dir string) error { return unix.Access(dir, unix.W_OK) }

// ExitError is a replay's error as kvreplay exits with it, after what:
// the user's input (exit 2, cli.Input) where the replay stopped on it
// (InputError), else a failure (exit 1); nil stays nil.
func ExitError(err error, what string) error {
	if err == nil {
		return nil
	}
	if what != "" {
		err = fmt.Errorf("%s%w", what, err)
	}
	if InputError(err) {
		return cli.Input(err)
	}
	return err
}

// InputError reports whether a replay stopped on the user's input: a
// malformed trace row found mid-stream (a pipe is not prescanned), a row
// on a tier --tier-map leaves unmapped, or a closed loop of traces without
// users. kvreplay then exits 2, after writing the partial result.
func InputError(err error) bool {
	var pe *trace.ParseError
	return errors.As(err, &pe) || errors.Is(err, replay.ErrUnmappedTier) || errors.Is(err, replay.ErrNoUsers) || errors.Is(err, replay.ErrSidecarMismatch)
}
