package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

// TestExportDefaultsAreKvreplays: where kvtrace export's fio job and
// kvreplay do the same thing by default, their defaults agree: block
// size, I/Os in flight, engine, direct I/O, size scale, prescan. The two
// that differ (--layout, --speed) are what the job's kvreplay line gives
// (TestExportedKvreplayLine).
func TestExportDefaultsAreKvreplays(t *testing.T) {
	o, err := parse([]string{"t.csv"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	d := export.DefaultFioOptions()
	if d.BlockSize != o.cfg.BlockSize || d.IODepth != o.cfg.QueueDepth || export.KvreplayEngines[d.Engine] != o.cfg.Engine ||
		d.Buffered != o.tiers.Buffered || d.SizeScale != o.cfg.SizeScale || !o.cfg.Prescan || o.cfg.Fsync {
		t.Errorf("export's defaults %+v, kvreplay's %+v and %+v", d, o.cfg, o.tiers)
	}
	if d.Layout == o.tiers.Layout || d.Speed != export.SpeedASAP || o.cfg.Speed != 1 {
		t.Errorf("the defaults the job's kvreplay line sets: export --layout %s --speed %s, kvreplay --layout %s --speed %g",
			d.Layout, d.Speed, o.tiers.Layout, o.cfg.Speed)
	}
}

// TestExportedKvreplayLine: the kvreplay options an exported fio job
// names as its own (export.FioOptions.Kvreplay, in the job file and on
// stderr) are kvreplay's, and replay what the job does: its layout in
// its --dir, the exported tiers there and the others without I/O (null),
// its block size, I/Os in flight, engine, pace, scale, buffered I/O and
// prescan, and no fsync (the job syncs nothing). The job's defaults are
// not kvreplay's (the extent layout, asap, Tier-2 alone): a user who
// compared fio's figures with a default kvreplay run compared different
// I/O.
func TestExportedKvreplayLine(t *testing.T) {
	dir := t.TempDir()
	for _, opt := range []export.FioOptions{
		{Dir: dir, Source: "run.csv.zst"},
		{Dir: dir, Source: "-", Layout: export.LayoutDir, Speed: export.SpeedTimed, BlockSize: 256 << 10, IODepth: 8, Engine: "psync",
			SizeScale: 1.0 / 65536, Buffered: true, NoPrescan: true, Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}},
		{Dir: dir, Source: "a b.csv", SizeScale: 0.3, Align: 16 << 10, Engine: "libaio"},
	} {
		args, notes := opt.Kvreplay()
		o, err := parse(args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		d := export.DefaultFioOptions()
		want := func(v, def int64) int64 {
			if v == 0 {
				return def
			}
			return v
		}
		speed := 0.0
		if opt.Speed == export.SpeedTimed {
			speed = 1
		}
		layout := opt.Layout
		if layout == "" {
			layout = d.Layout
		}
		scale := opt.SizeScale
		if scale == 0 {
			scale = 1
		}
		tiers := opt.Tiers
		if len(tiers) == 0 {
			tiers = d.Tiers
		}
		var tierMap [schema.NumTiers]string
		for tr := range schema.Tier(schema.NumTiers) {
			tierMap[tr] = "null"
			if slices.Contains(tiers, tr) {
				tierMap[tr] = "nvme"
			}
		}
		engine, mapped := export.KvreplayEngines[opt.Engine]
		if opt.Engine == "" {
			engine, mapped = "uring", true
		}
		if !mapped {
			engine = replay.DefaultConfig().Engine
			if len(notes) == 0 {
				t.Errorf("%v: ioengine=%s has no kvreplay engine, and no note says so", args, opt.Engine)
			}
		}
		c := o.cfg
		switch {
		case c.BlockSize != want(opt.BlockSize, d.BlockSize), c.QueueDepth != int(want(int64(opt.IODepth), int64(d.IODepth))), c.Engine != engine,
			c.Speed != speed, c.SizeScale != scale, c.TierMap != tierMap, c.Prescan == opt.NoPrescan, c.Fsync, c.Capacity != 0,
			o.tiers.Layout != layout, o.tiers.Buffered != opt.Buffered, o.tiers.Dir != opt.Dir,
			len(o.traces) != 1 || o.traces[0] != opt.Source:
			t.Errorf("%+v:\nkvreplay %v\nreplays %+v, %+v, traces %q", opt, args, c, o.tiers, o.traces)
		}
	}
}

// TestExportedKvreplayLineMovesTheJobsBytes: kvreplay run with the options
// of an exported job's kvreplay line reads and writes, on each exported
// tier, exactly the bytes the job's iologs move (physical: scaled and
// aligned, as fio moves them), in both layouts. A default kvreplay run
// also moves the Tier-1 rows, in RAM, and paces the trace.
func TestExportedKvreplayLineMovesTheJobsBytes(t *testing.T) {
	const ref = "../../testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv"
	for _, opt := range []export.FioOptions{
		{SizeScale: 1.0 / 4096, Layout: export.LayoutExtent},
		{SizeScale: 1.0 / 4096, Layout: export.LayoutDir, Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}, BlockSize: 64 << 10, IODepth: 4},
	} {
		t.Run(opt.Layout, func(t *testing.T) {
			dir := t.TempDir()
			opt.Dir, opt.Source = dir, ref
			if !directIO(dir) {
				opt.Buffered = true
			}
			r, err := trace.Open(ref)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			st, _, err := export.FioSize(r, opt)
			if err != nil {
				t.Fatal(err)
			}
			args, _ := opt.Kvreplay()
			res, stderr := replayDoc(t, append([]string{"-q", "-o", "-"}, args...)...)
			got := map[string]schema.TierTotals{}
			for _, ts := range res.Tiers {
				got[ts.Tier] = ts
			}
			for tr := range schema.Tier(schema.NumTiers) {
				s, g := st.Tier[tr], got[tr.String()]
				if !s.Exported {
					if g.Backend != "" && g.Backend != "null" {
						t.Errorf("%s, not exported, is on %s", tr, g.Backend)
					}
					continue
				}
				if s.Ops == 0 || g.PhysicalReadBytes != s.ReadBytes || g.PhysicalWriteBytes != s.WriteBytes {
					t.Errorf("%s: kvreplay %v read %d and wrote %d bytes, the job %d and %d\n%s", tr, args, g.PhysicalReadBytes, g.PhysicalWriteBytes,
						s.ReadBytes, s.WriteBytes, stderr)
				}
			}
		})
	}
}

// directIO reports whether dir's file system takes O_DIRECT, as the job's
// direct=1 needs.
func directIO(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, ".probe"), os.O_CREATE|os.O_RDWR|syscall.O_DIRECT, 0o644)
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
