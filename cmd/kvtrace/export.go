package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

const exportUsage = `kvtrace export: convert a trace into the inputs of other benchmarks: fio
iolog version 3 logs with a job file that replays them, or a sai3-bench op-log.

Usage:
  kvtrace export --to fio --dir DIR [options] -o OUTDIR TRACE
  kvtrace export --to sai3 [--prefix URI] [options] -o OUTDIR TRACE

TRACE is a file, plain or zstd (detected by content), or "-" for stdin; BASE
is its name without .csv and .zst ("stdin" for -).

--to fio writes OUTDIR/BASE.tier<N>.iolog for every tier of --tiers (and
OUTDIR/BASE.tier<N>.prep.iolog in the dir layout) and the job file
OUTDIR/BASE.fio, which names the iologs by absolute path and keeps its data
files in --dir (made absolute), on the drive under test. The job's prep jobs
write the data files first, then its replay jobs replay the iologs; each
replay job reports read and write io_bytes equal to the trace's bytes on its
tier (scaled, aligned to --align). It needs fio 3.31 or later.
  --align:         kvreplay sizes and places objects at multiples of the
                   drive's alignment: 4KiB, or the device's logical block
                   size or the file system's direct-I/O alignment when
                   larger (cat /sys/block/DEV/queue/logical_block_size);
                   export takes it from --dir's file system as kvreplay
                   does, unless given (or --no-space-check: a job for
                   another machine, whose drive's it is to give)
  --layout extent: one file per tier, objects placed as kvreplay --layout
                   extent places them (Tier-2 in DIR/kvbench.extent, as
                   kvreplay; other tiers in DIR/kvbench.tier<N>.extent)
  --layout dir:    one file per object and tier in DIR, named as
                   kvreplay's NVMe backend names them (DIR/2_KEY for
                   Tier-2's KEY, escaped; DIR/1_KEY for Tier-1's)
The job tunes fio as its experts tune it where that is safe on any Linux
machine: on an asynchronous engine (io_uring, libaio, posixaio) completions
are reaped, and in an asap job submissions made, in batches of up to
--iodepth. Its header says what it does not set, and why:
  --iomem shmhuge: huge-page buffers (fio's iomem; default malloc), which
                   fio fails without: reserve the huge pages the header
                   counts first, as root (echo N > /proc/sys/vm/nr_hugepages)
  --fixedbufs:     io_uring's registered buffers (fixedbufs=1), which pin
                   --iodepth x --block-size a job: a user without
                   CAP_IPC_LOCK needs a ulimit -l that allows it (8 MiB by
                   default), else fio fails (ENOMEM)
fio refuses registerfiles=1, and sqthread_poll=1 which needs it, for a job
whose files an iolog opens: neither is set.
Two defaults are not kvreplay's: --layout extent (kvreplay's is dir) and
--speed asap (kvreplay's --speed 1 is --speed timed here; asap is kvreplay
--speed max); --iodepth is per tier's replay job. So the job file, and
stderr, name the kvreplay command line that does the job's I/O (its
layout, pace, block size, queue depth, engine, scale, the exported tiers
on nvme in --dir and the others on null), the run to set beside fio's,
and the job file says what of the job no kvreplay option gives. Neither
syncs (kvreplay's --fsync is off by default) nor trims: kvreplay frees a
deleted object's extent in memory only; its directory layout's unlink,
which an iolog cannot do, is one of the notes. Where kvreplay does
buffered I/O on --dir's file system (tmpfs, or one that refuses O_DIRECT),
the job does too (direct=0), unless --no-space-check.

A trace file is read twice: first for its cold objects (read before any
write), which the job places first, as kvreplay's prescan does, and for
what the export writes; then for the export. A trace with cold objects is
read once more between them, to size its export with them placed first. A
trace on stdin is read once and they are placed at their first read, as
kvreplay does then. Either way the extent layout's offsets are kvreplay's.

--to sai3 writes OUTDIR/BASE.tsv: one GET, PUT or DELETE per row of --tiers,
the object's URI being --prefix followed by its key, with RFC 3339 start
times (the trace's epoch, or 1970-01-01 plus its virtual time).

Before it writes, --to fio says on stderr how much it will write: its
iologs in OUTDIR, and the job's data files in --dir, which fio's prep jobs
write (at full size, the peak of the trace's live bytes on each tier: a
600 s MLPerf 8B trace needs 124 TiB). It refuses (exit 2) when OUTDIR's or
--dir's file system lacks the space, naming the figures and the
--size-scale that fits; --dir is checked on this machine (its deepest
existing directory), so a job exported for another machine passes
--no-space-check. A trace file is sized before the export, by a read that
counts the iologs' lines without writing them (seconds for the 8B trace's
41 GiB of iologs in full); a trace on stdin is sized as it is exported,
its iologs no longer written once they outgrow OUTDIR's free space, and
nothing is kept when it does not fit. On a terminal, stderr shows the
progress of each pass.

A tier of --tiers on which the trace has no rows is refused (exit 2) once
the trace is read, naming the tiers it has rows on: its job or op-log
would do no I/O there. A summary line goes to stderr.

Examples:
  # the README's MLPerf 8B trace at 1/65536: a 2.4 GiB data file (124 TiB in full)
  kvtrace export --to fio --dir /mnt/nvme/kv --size-scale 1/65536 -o fio run.csv.zst
  fio --output-format=json fio/run.fio > fio.json
  jq '.jobs[] | select(.jobname | startswith("replay")) | {jobname, r: .read.io_bytes, w: .write.io_bytes}' fio.json
  kvtrace export --to fio --dir /mnt/nvme/kv --size-scale 1/65536 --speed timed --tiers Tier-1,Tier-2 -o fio run.csv.zst
  # all on Tier-2 (no GPU or CPU tier), so that the job reads what it wrote
  kvtrace --num-users 10 --duration 30 --gpu-mem-gb 0 --cpu-mem-gb 0 -o - | kvtrace export --to fio --dir /mnt/nvme/kv --size-scale 1/64 -o fio -
  kvtrace export --to sai3 --prefix s3://bucket/kv/ -o out run.csv.zst
  sai3-bench replay --op-log out/run.tsv --target file:///mnt/nvme/kv/
`

// runExport is kvtrace export: the command line checked, then the trace
// exported.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags, err := parseExportFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := flags.config()
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return exportTrace(ctx, cfg, stderr)
}

// exportJob is one export under way: the trace being read and the
// outputs being written.
type exportJob struct {
	cfg    *exportConfig
	r      *trace.Reader
	read   *atomic.Int64 // what r has read, for the progress line
	prog   *passProgress
	files  *outputs
	outAbs string // cfg.out, absolute
	base   string // the outputs' names: the trace's, see traceBase
	stderr io.Writer
}

// exportTrace exports the trace cfg names into cfg.out: every output, or
// none.
func exportTrace(ctx context.Context, cfg *exportConfig, stderr io.Writer) (err error) {
	in, err := openTrace(ctx, cfg.trace)
	if err != nil {
		return err
	}
	defer in.Close()
	j := &exportJob{cfg: cfg, read: new(atomic.Int64), prog: newPassProgress(stderr, cfg.trace),
		files: &outputs{input: cfg.trace, allowSystem: cfg.allowSystem}, base: traceBase(cfg.trace), stderr: stderr}
	j.r = trace.NewReader(ctxReader{ctx: ctx, r: in, n: j.read})
	j.r.Name = cfg.trace
	defer j.r.Close()
	made, err := cli.MakeDirs("--output", cfg.out)
	if err != nil {
		return err
	}
	// An export that writes nothing leaves no directory it made.
	defer func() {
		if err != nil {
			outfile.RemoveDirs(made)
		}
	}()
	if j.outAbs, err = filepath.Abs(cfg.out); err != nil {
		return cli.Input(fmt.Errorf("export: --output %s: %w", quoteArg(cfg.out), err))
	}
	defer j.files.abort()
	for _, n := range cfg.notes {
		fmt.Fprintf(stderr, "kvtrace: export: %s\n", n)
	}
	if cfg.to == "fio" {
		return j.fio(ctx)
	}
	return j.sai3(ctx)
}

// fio writes the iologs and the job file. A trace file is sized before
// any of them is written; a trace read once, by its export, which is then
// kept only when its job fits.
func (j *exportJob) fio(ctx context.Context) error {
	opt := j.cfg.fio
	opt.Source = j.cfg.trace
	opt.LogPath = func(t schema.Tier, k export.LogKind) string {
		return filepath.Join(j.outAbs, export.LogName(j.base, t, k))
	}
	space := exportSpace{out: j.outAbs, dir: opt.Dir, layout: opt.Layout, scale: j.cfg.scale, checkDir: j.cfg.checkDir}
	sized, err := j.prepass(ctx, &opt, space)
	if err != nil {
		return err
	}
	var logBytes countWriter
	// A trace read once writes its iologs while it is sized: they stop
	// going to disk where they outgrow OUTDIR's free space.
	guard := &spaceGuard{left: -1}
	if !sized {
		if f := space.freeBytes(j.outAbs); f >= 0 {
			guard.left = f
		}
	}
	logs := func(t schema.Tier, k export.LogKind) (io.Writer, error) {
		w, err := j.files.create(ctx, opt.LogPath(t, k))
		return io.MultiWriter(guard.writer(w), &logBytes), err
	}
	jobPath := filepath.Join(j.cfg.out, j.base+".fio")
	job, err := j.files.create(ctx, jobPath)
	if err != nil {
		return err
	}
	j.prog.watch("export", j.read)
	st, err := export.Fio(j.r, opt, logs, io.MultiWriter(guard.writer(job), &logBytes))
	j.prog.done()
	if err != nil {
		return exportError(err)
	}
	if !sized {
		// A trace read once is sized by its export: nothing is kept
		// when its job does not fit.
		need := exportNeed{st: st, logBytes: int64(logBytes), written: !guard.over}
		if guard.over {
			j.files.abort()
		}
		if err := space.check(j.stderr, need); err != nil {
			return err
		}
		if guard.over {
			return fmt.Errorf("export: the iologs need %s in %s, more than its file system had free when the export began; nothing is written: run it again",
				cli.FormatBytes(need.logBytes), j.outAbs)
		}
	}
	if err := j.files.commit(); err != nil {
		return err
	}
	fmt.Fprintf(j.stderr, "kvtrace: export: %d rows -> %s%s\n", st.Rows, fioSummary(&st, opt), jobPath)
	// Several of kvreplay's defaults are not the job's: the run to set
	// beside fio's is named (and in the job file, with what no option
	// of kvreplay gives).
	fmt.Fprintf(j.stderr, "kvtrace: export: kvreplay does the job's I/O as: %s\n", opt.KvreplayLine())
	return nil
}

// prepass reads a trace file before its fio export, unless --no-prescan,
// for its cold objects, which it sets in opt, and for what the export and
// the job will write, which it checks against space: in one read when the
// trace has no cold objects, else in two. It reports whether the export
// is sized; a trace read once (stdin, a pipe) is not.
func (j *exportJob) prepass(ctx context.Context, opt *export.FioOptions, space exportSpace) (bool, error) {
	name := j.cfg.trace
	if name == "-" || !j.cfg.prescan || !regularFile(name) {
		return false, nil
	}
	// As kvreplay's prescan: cold objects are placed before the first
	// row, so that the extents are the ones kvreplay uses. What the
	// export and the job will write is counted, before anything is
	// written, by a read that finds them too; it is the export's size
	// when there are none to place first.
	need, cold, err := sizeFio(ctx, name, *opt, true, j.prog.pass("prescan"))
	if err != nil {
		return false, err
	}
	if opt.Cold = cold; len(cold) > 0 {
		if need, _, err = sizeFio(ctx, name, *opt, false, j.prog.pass("sizing")); err != nil {
			return false, err
		}
	}
	j.prog.done()
	if err := space.check(j.stderr, need); err != nil {
		return false, err
	}
	return true, nil
}

// sai3 writes the op-log.
func (j *exportJob) sai3(ctx context.Context) error {
	tsvPath := filepath.Join(j.cfg.out, j.base+".tsv")
	tsv, err := j.files.create(ctx, tsvPath)
	if err != nil {
		return err
	}
	j.prog.watch("export", j.read)
	st, err := export.Sai3(j.r, tsv, j.cfg.sai3)
	j.prog.done()
	if err != nil {
		return exportError(err)
	}
	if err := j.files.commit(); err != nil {
		return err
	}
	// The data the operations move is in GB, decimal, as every kvbench
	// output gives data moved.
	fmt.Fprintf(j.stderr, "kvtrace: export: %d rows -> %d GET %s, %d PUT %s, %d DELETE -> %s\n", st.Rows,
		st.Ops[schema.OpRead], results.FormatData(st.Bytes[schema.OpRead]),
		st.Ops[schema.OpWrite], results.FormatData(st.Bytes[schema.OpWrite]), st.Ops[schema.OpDelete], tsvPath)
	return nil
}

// fioSummary renders what Fio wrote per tier, for the summary line: the
// data read and written in GB, decimal, as every kvbench output gives data
// moved; the files' size on disk, a size, in binary units as disk free is.
func fioSummary(st *export.FioStats, opt export.FioOptions) string {
	var b strings.Builder
	for _, t := range opt.Tiers {
		s := st.Tier[t]
		fmt.Fprintf(&b, "%s: %d reads %s, %d writes %s in %d I/Os, %s on disk; ", t,
			s.ReadOps, results.FormatData(s.ReadBytes), s.WriteOps, results.FormatData(s.WriteBytes), s.Ops, cli.FormatBytes(s.FileSize))
	}
	fmt.Fprintf(&b, "%d cold reads -> ", st.ColdReads)
	return b.String()
}

// exportError marks a malformed trace, and --tiers naming a tier the
// trace has no rows on, as the user's (exit 2); other errors (writing, an
// interrupt) are failures.
func exportError(err error) error {
	if _, ok := errors.AsType[*trace.ParseError](err); ok {
		return cli.Input(err)
	}
	if _, ok := errors.AsType[*export.NoRowsError](err); ok {
		return cli.Input(err)
	}
	return err
}

// openTrace opens a trace for one read (cli.OpenInput; tests count them).
var openTrace = cli.OpenInput

// regularFile reports whether name is a regular file, which can be read
// more than once (a named pipe, like stdin, is read once).
func regularFile(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// traceBase names the outputs after the trace: its file name without .csv
// and .zst, "stdin" for -.
func traceBase(name string) string {
	if name == "-" {
		return "stdin"
	}
	base := filepath.Base(name)
	for {
		trimmed := strings.TrimSuffix(strings.TrimSuffix(base, ".zst"), ".csv")
		if trimmed == base || trimmed == "" {
			break
		}
		base = trimmed
	}
	return base
}

// outputs are the files of one export: all appear, or none.
type outputs struct {
	input       string // the trace, which no output may be
	allowSystem bool   // outputs may lie under a system directory
	files       []*cli.OutputFile
}

// create starts writing the output at path, unless cli.Files refuses it:
// a path kvbench must not write (a link in --output into a system
// directory, a directory of the output's name), the trace or its sidecar
// (a link, or a file of the trace's name in --output), the file a trace on
// stdin comes from, or an output created before (a link of one's name to
// another's).
func (o *outputs) create(ctx context.Context, path string) (io.Writer, error) {
	files := cli.Files{AllowSystem: o.allowSystem,
		Inputs:  []cli.File{{Flag: "the trace", Path: o.input, Sidecar: true}},
		Outputs: []cli.File{{Flag: "--output", Path: path}}}
	for _, f := range o.files {
		files.Outputs = append(files.Outputs, cli.File{Flag: "--output", Path: f.Name()})
	}
	if errs := files.Check(); len(errs) > 0 {
		return nil, cli.Input(fmt.Errorf("export: %w", errors.Join(errs...)))
	}
	f, err := cli.CreateFile(ctx, path)
	if err != nil {
		return nil, err
	}
	o.files = append(o.files, f)
	return f, nil
}

// commit puts every output in place, or none (outfile.CloseAll).
func (o *outputs) commit() error {
	if err := outfile.CloseAll(o.files...); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func (o *outputs) abort() {
	for _, f := range o.files {
		_ = f.Abort()
	}
}

// ctxReader stops a read of the trace once ctx is done, so that ^C ends an
// export of a long trace, and counts the bytes read in n (when set), for
// the progress line.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
	n   *atomic.Int64
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if c.n != nil {
		c.n.Add(int64(n))
	}
	return n, err
}
