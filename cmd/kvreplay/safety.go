package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// What kvreplay may overwrite or delete: only what it created. The NVMe
// tier lives in a run directory of its own inside --dir (or the system temp
// dir), removed at the end unless --keep; --device names the one file it
// writes in place, never the trace or the result, and an existing file of
// data only with --device-overwrite.

// runDirTool names kvreplay's run directories: kvreplay-PID-RANDOM.
const runDirTool = "kvreplay"

// checkPaths refuses, before anything runs, a trace that is a directory, a
// --dir that names something other than a directory, a --device kvreplay
// must not overwrite, and a -o it must not write (a system path, a trace
// or a trace's sidecar: cli.Files).
func checkPaths(o *options) []error {
	files := cli.Files{AllowSystem: o.allowSystem}
	for _, tr := range o.traces {
		files.Inputs = append(files.Inputs, cli.File{Flag: "trace", Path: tr, Sidecar: true})
	}
	if o.output != "" {
		files.Outputs = append(files.Outputs, cli.File{Flag: "-o", Path: o.output})
	}
	errs := files.Check()
	for _, tr := range o.traces {
		if fi, err := os.Stat(tr); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("trace %s: a directory (want a trace file, or - for stdin)", tr))
		}
	}
	if o.dir != "" {
		fi, err := os.Stat(o.dir)
		switch {
		case err == nil && !fi.IsDir():
			errs = append(errs, fmt.Errorf("--dir %s: not a directory", o.dir))
		case errors.Is(err, fs.ErrNotExist) && !o.mkdir:
			// A typo, or a drive not mounted at /mnt/nvme, must not
			// benchmark the disk that holds the root instead.
			errs = append(errs, fmt.Errorf("--dir %s: does not exist: create it, or pass --mkdir", o.dir))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("--dir %s: %w", o.dir, cli.UnwrapPath(err)))
		}
	}
	if o.layout == "extent" && o.device != "" {
		if err := checkDevice(o); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// checkDevice refuses a --device that is a trace being replayed or the
// result's file, a directory, an existing regular file unless
// --device-overwrite, and a block device unless --allow-device, or when it
// holds the trace or the result (checkBlockDevice).
func checkDevice(o *options) error {
	dev := o.device
	for _, tr := range o.traces {
		if tr != "-" && samePath(dev, tr) {
			return fmt.Errorf("--device %s: is the trace %s: refusing to overwrite it", dev, tr)
		}
	}
	if o.output != "" && o.output != "-" && samePath(dev, o.output) {
		return fmt.Errorf("--device %s: is the result file (-o %s): refusing to overwrite it", dev, o.output)
	}
	fi, err := os.Stat(dev)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--device %s: %w", dev, cli.UnwrapPath(err))
	case fi.IsDir():
		return fmt.Errorf("--device %s: a directory (want a file or a block device; the directory layout is --layout dir --dir %s)", dev, dev)
	case fi.Mode().IsRegular() && !o.deviceOverwrite:
		// An empty file too: the replay would grow it and leave data in it.
		return fmt.Errorf("--device %s: an existing file of %s: the replay would overwrite it (pass --device-overwrite if it holds nothing you need, or name a new file)",
			dev, cli.FormatBytes(fi.Size()))
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		if !o.allowDev {
			return fmt.Errorf("--device %s: a block device: the replay would overwrite its data (pass --allow-device if it holds nothing you need)", dev)
		}
		rdev, err := rdevOf(dev)
		if err != nil {
			return fmt.Errorf("--device %s: %w", dev, err)
		}
		return checkBlockDevice(sysBlock, dev, rdev, runFiles(o))
	}
	return nil
}

// samePath reports whether a and b name the same file: the same inode
// where both exist, the same absolute path where neither does.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	if errA == nil || errB == nil {
		return false
	}
	absA, err1 := filepath.Abs(a)
	absB, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && absA == absB
}

// inputError reports whether the replay stopped on the user's input: a
// malformed trace row found mid-stream (a pipe is not prescanned), or a row
// on a tier --tier-map leaves unmapped. kvreplay then exits 2, after
// writing the partial result.
func inputError(err error) bool {
	var pe *trace.ParseError
	return errors.As(err, &pe) || errors.Is(err, replay.ErrUnmappedTier) || errors.Is(err, replay.ErrNoUsers)
}

// openOutput creates -o's temporary file before the replay, so that a path
// that cannot be written fails now (exit 2), not after the whole replay.
// The result goes into it at the end (writeResult); run aborts it on
// failure.
func openOutput(ctx context.Context, o *options) error {
	if o.output == "" || o.output == "-" {
		return nil
	}
	f, err := cli.CreateFile(ctx, o.output)
	if err != nil {
		return cli.Input(fmt.Errorf("-o %s: %w", o.output, cli.UnwrapPath(err)))
	}
	o.out = f
	return nil
}

// makeNVMe builds the NVMe tier's backend: the extent layout on --device,
// or either layout in a run directory of kvreplay's own inside --dir (the
// system temp dir by default). done closes the backend and removes the run
// directory (unless --keep); warnings are also in o.warnings, for the
// result.
func makeNVMe(ctx context.Context, o *options, plan *replay.Plan, stderr io.Writer) (b backend.Backend, pi schema.PathInfo, done func(), err error) {
	warn := func(w string) {
		o.warnings = append(o.warnings, w)
		fmt.Fprintf(stderr, "kvreplay: warning: %s\n", w)
	}
	onDevice := o.layout == "extent" && o.device != ""
	parent, flag := o.dir, "--dir"
	if parent == "" {
		parent, flag = os.TempDir(), "the temp dir"
	}
	where := parent
	if onDevice {
		where = filepath.Dir(o.device)
	}
	if err := checkFree(o, plan, where); err != nil {
		return nil, pi, nil, err
	}
	var rd *cli.RunDir
	if !onDevice {
		if o.dir != "" {
			for _, l := range cli.LeftoverRunDirs(o.dir, runDirTool) {
				warn(fmt.Sprintf("--dir %s: %s is left by an earlier run (killed, or run with --keep): kvreplay leaves it alone; remove it if nothing needs it", o.dir, l))
			}
		}
		if rd, err = cli.MakeRunDir(flag, parent, runDirTool); err != nil {
			return nil, pi, nil, err
		}
	}
	if o.layout == "extent" {
		path := o.device
		if path == "" {
			path = filepath.Join(rd.Path(), "kvbench.extent")
		}
		// The message comes once extent has checked the path, from the
		// prewrite itself; ctx (SIGINT, SIGTERM) stops it and removes the file.
		b, err = extent.NewContext(ctx, path, extent.Options{Size: extentSize(plan), Direct: !o.buffered, Keep: o.keep, AllowDevice: o.allowDev, Prewrite: o.prewrite,
			Objects: int(min(plan.Objects, 1<<20)), OnPrewrite: func(n int64) {
				if n >= 1<<30 && !o.quiet {
					fmt.Fprintf(stderr, "kvreplay: writing %s once before the replay (%s; --prewrite=false skips it)\n", path, cli.FormatBytes(n))
				}
			}})
	} else {
		b, err = nvme.New(rd.Path(), nvme.Options{Direct: !o.buffered, Keep: o.keep})
	}
	if err != nil {
		if rd != nil {
			rd.Remove()
		}
		return nil, pi, nil, err
	}
	if onDevice {
		pi = host.PathFacts("nvme", o.device)
	} else {
		pi = host.PathFacts("nvme", rd.Path())
	}
	pi.Direct = b.Caps().Direct
	for _, w := range b.Caps().Warnings {
		fmt.Fprintf(stderr, "kvreplay: warning: %s\n", w)
	}
	done = func() {
		b.Close()
		switch {
		case rd == nil:
		case o.keep:
			rd.Keep()
			fmt.Fprintf(stderr, "kvreplay: --keep: the NVMe tier's objects are in %s\n", rd.Path())
		default:
			if err := rd.Remove(); err != nil {
				fmt.Fprintf(stderr, "kvreplay: warning: %v\n", err)
			}
		}
	}
	return b, pi, done, nil
}

// checkFree refuses a trace whose NVMe peak does not fit in the free space
// of the file system that will hold the tier (where: --dir, or the
// directory of a --device file, which need not exist yet). A block device
// is the extent backend's to size.
func checkFree(o *options, plan *replay.Plan, where string) error {
	if !plan.Scanned {
		return nil
	}
	var have int64
	if o.layout == "extent" && o.device != "" {
		fi, err := os.Stat(o.device)
		if err == nil && !fi.Mode().IsRegular() {
			return nil
		}
		if err == nil {
			have = fi.Size() // its blocks are reused
		}
	}
	peak := plan.Peak["nvme"] + plan.MaxObjectOf["nvme"]
	if free := freeBytes(where); free > 0 && peak > free+have {
		if a := advise(o, plan); !a.Runs {
			return cli.Input(notFitError(a))
		}
		return cli.Input(fmt.Errorf("the trace keeps %s live on the NVMe tier at its peak and %s has %s free: use --capacity (kvreplay then evicts LRU objects) or --size-scale",
			cli.FormatBytes(peak), where, cli.FormatBytes(free)))
	}
	return nil
}

// freeBytes is the space available to an unprivileged writer on the file
// system that holds path, or will hold it once made (its deepest existing
// ancestor); 0 when unknown.
func freeBytes(path string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(cli.DeepestExisting(path), &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * st.Bsize
}
