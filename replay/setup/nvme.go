package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
)

// What kvreplay may overwrite or delete: only what it created. The NVMe
// tier lives in a run directory of its own inside --dir (or the system
// temp dir), removed at the end unless --keep; --device names the one file
// it writes in place, never the trace or the result, and an existing file
// of data only with --device-overwrite (CheckDevice).

// RunDirTool names kvreplay's run directories: kvreplay-PID-RANDOM.
const RunDirTool = "kvreplay"

// newNVMe makes the NVMe tier: the extent layout on --device, or either
// layout in a run directory of kvreplay's own inside --dir (the system
// temp dir by default), removed after the backend closes unless --keep.
func newNVMe(b *builder) (backend.Backend, error) {
	o := b.opts
	onDevice := o.Layout == "extent" && o.Device != ""
	parent, flag := o.Dir, "--dir"
	if parent == "" {
		parent, flag = os.TempDir(), "the temp dir"
	}
	where := parent
	if onDevice {
		where = filepath.Dir(o.Device)
	}
	if err := b.checkFree(where); err != nil {
		return nil, err
	}
	b.boundUnplanned(where)
	if b.cfg.ClosedLoop && b.plan.Scanned {
		// What a closed loop may keep beyond the trace's peak, past
		// what --dir has free (replay.Advise's note), said before it fills.
		for _, n := range Advise(b.cfg, b.plan, o).Notes {
			if strings.HasPrefix(n, "nvme: ") {
				b.warn(n)
			}
		}
	}
	var rd *cli.RunDir
	if !onDevice {
		if o.Dir != "" {
			for _, l := range cli.LeftoverRunDirs(o.Dir, RunDirTool) {
				b.warn(fmt.Sprintf("--dir %s: %s is left by an earlier run (killed, or run with --keep): kvreplay leaves it alone; remove it if nothing needs it", parsemsg.Arg(o.Dir), parsemsg.Arg(l)))
			}
		}
		var err error
		if rd, err = cli.MakeRunDir(b.ctx, flag, parent, RunDirTool); err != nil {
			return nil, err
		}
	}
	untrack := func() {}
	if onDevice && !o.Keep {
		// The file extent makes on --device, which its Close removes: a
		// tool stopped before that names it.
		if _, err := os.Lstat(o.Device); errors.Is(err, fs.ErrNotExist) {
			untrack = outfile.Track(b.ctx, outfile.Leftover{Path: o.Device, What: "the extent file made for --device, with the NVMe tier's objects"})
		}
	}
	be, err := b.nvmeBackend(rd)
	if err == nil && rd != nil && b.env.cufile != nil {
		if err = gdsProbe(b.env.cufile, rd.Path(), parent, !o.Buffered); err != nil {
			be.Close()
			err = cli.Input(err)
		}
	}
	if err != nil {
		untrack()
		// A full file system (the extent file's preallocation) is named,
		// as the replay names one that fills later.
		root := o.Device
		if rd != nil {
			root = rd.Path()
		} else if fi, serr := os.Stat(o.Device); serr == nil && fi.Mode().Type() == fs.ModeDevice {
			root = "" // a raw block device: no file system
		}
		err = cli.FullFileSystem(root, err)
		if rd != nil {
			rd.Remove()
		}
		return nil, err
	}
	pi := host.PathFacts("nvme", o.Device)
	if !onDevice {
		pi = host.PathFacts("nvme", rd.Path())
	}
	pi.Direct = be.Caps().Direct
	b.where(pi)
	for _, w := range be.Caps().Warnings {
		b.print("warning: " + w)
	}
	b.after(func() {
		untrack()
		switch {
		case rd == nil:
		case o.Keep:
			rd.Keep()
			b.print("--keep: the NVMe tier's objects are in " + rd.Path())
		default:
			if err := rd.Remove(); err != nil {
				b.print(fmt.Sprintf("warning: %v", err))
			}
		}
	})
	return be, nil
}

// nvmeBackend opens the layout's backend: the extent file (on --device,
// or in the run directory rd), or the directory layout in rd.
func (b *builder) nvmeBackend(rd *cli.RunDir) (backend.Backend, error) {
	o := b.opts
	if o.Layout != "extent" {
		return nvme.New(rd.Path(), nvme.Options{Direct: !o.Buffered, Keep: o.Keep})
	}
	path := o.Device
	if path == "" {
		path = filepath.Join(rd.Path(), "kvbench.extent")
	}
	size, err := b.extentSize(path)
	if err != nil {
		return nil, err
	}
	// The note comes once extent has checked the path, from the prewrite
	// itself; ctx (SIGINT, SIGTERM) stops it and removes the file.
	return extent.NewContext(b.ctx, path, extent.Options{Size: size, Direct: !o.Buffered, Keep: o.Keep, AllowDevice: o.AllowDevice,
		Prewrite: o.Prewrite, Objects: int(min(b.plan.Objects, 1<<20)), OnPrewrite: func(n int64) {
			if n >= 1<<30 && !o.Quiet {
				b.print(fmt.Sprintf("writing %s once before the replay (%s; --prewrite=false skips it)", path, cli.FormatBytes(n)))
			}
		}})
}

// ExtentSize sizes the extent layout's file from the plan: the peak live
// bytes with room for first-fit fragmentation and a few of the largest
// objects (replay.ExtentBytes).
func ExtentSize(plan *replay.Plan) int64 {
	return replay.ExtentBytes(plan.Peak["nvme"], plan.MaxObjectOf["nvme"])
}

// extentSize is the size of the extent layout's file or device at path:
// the plan's (ExtentSize); for traces nothing sized (a pipe, --no-prescan
// without sidecars), one that holds --capacity, all of a block device or
// of an existing file, and else none: the plan of nothing made a file of
// 1 MiB, and the replay stopped at its first larger object (exit 1).
func (b *builder) extentSize(path string) (int64, error) {
	if Planned(b.plan) {
		return ExtentSize(b.plan), nil
	}
	if c := b.cfg.Capacity; c > 0 && b.cfg.TierMap[schema.TierNVMe] == "nvme" {
		return replay.ExtentBytes(c, 0), nil
	}
	if fi, err := os.Stat(path); err == nil && (fi.Mode().Type() == fs.ModeDevice || fi.Mode().IsRegular() && fi.Size() > 0) {
		return 0, nil // all of it
	}
	return 0, cli.Input(errors.New("--layout extent: the traces were not read before the replay (a pipe, or --no-prescan) and have no sidecar, so nothing sizes the extent file: " +
		"give --capacity, which it then holds, or the trace files, which kvreplay reads once first"))
}

// checkFree refuses a trace whose NVMe peak does not fit in the free space
// of the file system that will hold the tier (where: --dir, or the
// directory of a --device file, which need not exist yet). A block device
// is the extent backend's to size. A search's probe is checked with its
// own plan first (probeFits).
func (b *builder) checkFree(where string) error {
	plan, o := b.plan, b.opts
	if !plan.Scanned {
		return nil
	}
	var have int64
	if o.Layout == "extent" && o.Device != "" {
		fi, err := os.Stat(o.Device)
		if err == nil && !fi.Mode().IsRegular() {
			return nil
		}
		if err == nil {
			have = fi.Size() // its blocks are reused
		}
	}
	peak := plan.Peak["nvme"] + plan.MaxObjectOf["nvme"]
	if free := cli.FreeBytes(where); free >= 0 && peak > free+have {
		return cli.Input(b.notFit(fmt.Errorf("the trace keeps %s live on the NVMe tier at its peak and %s has %s free (%s): use --capacity (kvreplay then evicts LRU objects) or --size-scale",
			cli.FormatBytes(peak), where, cli.FormatBytes(free), cli.DescribePath(where))))
	}
	return nil
}

// boundUnplanned bounds Tier-2 on the nvme backend (--capacity) at half
// the space free in where when the traces were not read before the replay
// (a pipe, --no-prescan) and nothing else bounds it: nothing then says how
// much the replay keeps live (a sidecar's peak, where there is one, that
// fits in that half needs no bound), and such a replay filled --dir's file
// system until a write met ENOSPC, and every other writer there with it
// (the default --dir is the system temp dir). Beyond the bound kvreplay
// evicts its least recently used objects, as under --capacity, and the
// result's eviction warning says why (CapacityWhy), and its configuration
// holds the bound. The half is the plan's share (replay.FitShare). Only
// Tier-2 is bounded: other tiers put on nvme by --tier-map are not.
func (b *builder) boundUnplanned(where string) {
	cfg, plan := b.cfg, b.plan
	if plan.Scanned || cfg.Capacity > 0 || cfg.TierMap[schema.TierNVMe] != "nvme" || b.opts.Layout == "extent" {
		return
	}
	free := cli.FreeBytes(where)
	bound := int64(replay.FitShare*float64(free)) &^ (1<<20 - 1)
	if bound <= 0 || (plan.FromMeta && plan.Peak["nvme"] > 0 && plan.Peak["nvme"] <= bound) {
		return
	}
	cfg.Capacity = bound
	cfg.CapacityWhy = fmt.Sprintf("Tier-2 bounded at %s, half of the %s free in %s, since the traces were not read before the replay "+
		"(a pipe, or --no-prescan) and nothing said how much it keeps live: give --capacity, or a trace file, which is read first, to size it yourself",
		cli.FormatBytes(bound), cli.FormatBytes(free), where)
}
