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
tier (scaled, aligned to 4096). It needs fio 3.31 or later.
  --layout extent: one file per tier, objects placed as kvreplay --layout
                   extent places them (Tier-2 in DIR/kvbench.extent, as
                   kvreplay; other tiers in DIR/kvbench.tier<N>.extent)
  --layout dir:    one file per object, named as kvreplay's NVMe backend
                   names them (Tier-2 in DIR, other tiers in DIR/tier<N>)

A trace file is read twice, first for its cold objects (read before any
write), which the job places first, as kvreplay's prescan does; a trace on
stdin is read once and they are placed at their first read, as kvreplay does
then. Either way the extent layout's offsets are kvreplay's.

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
--no-space-check. A trace file is sized by a pass before the export; a
trace on stdin is sized as it is exported, and nothing is kept when it does
not fit. On a terminal, stderr shows the progress of each pass.

A summary line goes to stderr.

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

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvtrace export", exportUsage, stderr)
	cli.AddStandard(fs)
	fioDef := export.DefaultFioOptions()
	sai3Def := export.DefaultSai3Options()
	to := fs.String("to", "", "what to write: fio or sai3 (required)")
	out := fs.StringP("output", "o", "", "the directory to write into, made if need be (required)")
	blockSize := cli.ByteSize(fioDef.BlockSize)
	fs.Var(&blockSize, "block-size", "fio: largest I/O an object operation is split into")
	tiers := fs.String("tiers", "Tier-2", "tiers to export, comma-separated: Tier-0, Tier-1, Tier-2 (or gpu, cpu, nvme)")
	layout := fs.String("layout", fioDef.Layout, "fio: extent or dir")
	scale := fs.String("size-scale", "1", "multiply every object's size by this number or fraction (such as 1/4096), as kvreplay does")
	dir := fs.String("dir", "", "fio: the directory the job's data files live in (required for fio)")
	speed := fs.String("speed", fioDef.Speed, "fio: asap (replay_no_stall) or timed (the trace's timestamps)")
	iodepth := fs.Int("iodepth", fioDef.IODepth, "fio: I/Os in flight per job")
	engine := fs.String("engine", fioDef.Engine, "fio: ioengine")
	buffered := fs.Bool("buffered", false, "fio: direct=0, for file systems without O_DIRECT (tmpfs)")
	noPrescan := fs.Bool("no-prescan", false, "fio: do not read a trace file twice to place its cold objects first, as kvreplay --no-prescan")
	prefix := fs.String("prefix", sai3Def.Prefix, "sai3: the URI prefix of the objects (the endpoint column)")
	allowSystem := fs.Bool(cli.AllowSystemPathFlag, false, "let --output lie under a system directory (/etc, /usr, ...), which export refuses by default")
	noSpaceCheck := fs.Bool("no-space-check", false, "fio: export even when --dir's file system, as this machine has it, lacks the space for the job's data files (a job for another machine)")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}

	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	switch len(rest) {
	case 0:
		bad("export: no trace given (want a file, or - for stdin)")
	case 1:
	default:
		bad("export: %d traces given (want one)", len(rest))
	}
	switch *out {
	case "":
		bad("--output: required (the directory to write into)")
	case "-":
		bad("--output -: export writes several files: give a directory, not stdout")
	default:
		if !*allowSystem {
			if err := cli.CheckPath("--output", *out); err != nil {
				problems = append(problems, fmt.Errorf("%w (--%s writes there anyway)", err, cli.AllowSystemPathFlag))
			}
		}
	}
	tierList, err := parseTiers(*tiers)
	if err != nil {
		problems = append(problems, err)
	}
	sizeScale, scaleErr := cli.Fraction("--size-scale", *scale)
	if scaleErr != nil {
		problems = append(problems, scaleErr)
	}
	// The options' zero values mean their defaults; on the command line
	// they are the user's and wrong.
	if fs.Changed("block-size") && blockSize == 0 {
		bad("--block-size 0: must be a power of two between 4KiB and 1GiB")
	}
	if *iodepth == 0 {
		bad("--iodepth 0: must be between 1 and 4096")
	}
	if scaleErr == nil && sizeScale == 0 {
		bad("--size-scale %s: must be greater than 0 and at most 1", *scale)
	}
	for _, n := range []string{"tiers", "layout", "speed", "engine", "prefix"} {
		if f := fs.Lookup(n); f.Changed && f.Value.String() == "" {
			bad("--%s: empty", n)
		}
	}
	only := func(target string, names ...string) {
		for _, n := range names {
			if fs.Changed(n) {
				bad("--%s: only for --to %s", n, target)
			}
		}
	}
	var fioOpt export.FioOptions
	var sai3Opt export.Sai3Options
	switch *to {
	case "fio":
		only("sai3", "prefix")
		fioOpt = export.FioOptions{BlockSize: int64(blockSize), Tiers: tierList, Layout: *layout, SizeScale: sizeScale,
			Speed: *speed, IODepth: *iodepth, Engine: *engine, Buffered: *buffered}
		if *dir != "" {
			fioOpt.Dir = *dir
			if err := cli.CheckPath("--dir", *dir); err != nil {
				problems = append(problems, err)
			} else if fioOpt.Dir, err = filepath.Abs(*dir); err != nil {
				bad("--dir %s: %w", *dir, err)
			}
		}
		if err := fioOpt.Validate(); err != nil {
			problems = append(problems, unjoin(err)...)
		}
	case "sai3":
		only("fio", "block-size", "layout", "dir", "speed", "iodepth", "engine", "buffered", "no-prescan", "no-space-check")
		sai3Opt = export.Sai3Options{Prefix: *prefix, Tiers: tierList, SizeScale: sizeScale}
		if err := sai3Opt.Validate(); err != nil {
			problems = append(problems, unjoin(err)...)
		}
	case "":
		bad("--to: required (want fio or sai3)")
	default:
		bad("--to %s: want fio or sai3", *to)
	}
	if len(problems) > 0 {
		return &cli.UsageError{Err: dedup(problems)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}

	name := rest[0]
	in, err := cli.OpenInput(ctx, name)
	if err != nil {
		return err
	}
	defer in.Close()
	prog := newPassProgress(stderr, name)
	var read atomic.Int64 // by the export's own pass
	r := trace.NewReader(ctxReader{ctx: ctx, r: in, n: &read})
	r.Name = name
	defer r.Close()
	if _, err := cli.MakeDirs("--output", *out); err != nil {
		return err
	}
	outAbs, err := filepath.Abs(*out)
	if err != nil {
		return cli.Input(fmt.Errorf("export: --output %s: %w", *out, err))
	}
	base := traceBase(name)
	files := outputs{input: name}
	defer files.abort()
	switch *to {
	case "fio":
		fioOpt.Source = name
		fioOpt.LogPath = func(t schema.Tier, k export.LogKind) string {
			return filepath.Join(outAbs, export.LogName(base, t, k))
		}
		space := exportSpace{out: outAbs, dir: fioOpt.Dir, layout: fioOpt.Layout, scale: sizeScale, checkDir: !*noSpaceCheck}
		sized := false
		if name != "-" && !*noPrescan && regularFile(name) {
			// As kvreplay's prescan: cold objects are placed before the
			// first row, so that the extents are the ones kvreplay uses.
			if fioOpt.Cold, err = coldObjects(ctx, name, prog.pass("prescan")); err != nil {
				return err
			}
			// Then what the export and the job will write, before
			// anything is: a pass that counts the iologs' bytes.
			need, err := sizeFio(ctx, name, fioOpt, prog.pass("sizing"))
			if err != nil {
				return err
			}
			prog.done()
			if err := space.check(stderr, need); err != nil {
				return err
			}
			sized = true
		}
		var logBytes countWriter
		logs := func(t schema.Tier, k export.LogKind) (io.Writer, error) {
			w, err := files.create(ctx, fioOpt.LogPath(t, k))
			return io.MultiWriter(w, &logBytes), err
		}
		jobPath := filepath.Join(*out, base+".fio")
		job, err := files.create(ctx, jobPath)
		if err != nil {
			return err
		}
		prog.watch("export", &read)
		st, err := export.Fio(r, fioOpt, logs, io.MultiWriter(job, &logBytes))
		prog.done()
		if err != nil {
			return exportError(err)
		}
		if !sized {
			// A trace read once is sized by its export: nothing is kept
			// when its job does not fit.
			if err := space.check(stderr, exportNeed{st: st, logBytes: int64(logBytes), written: true}); err != nil {
				return err
			}
		}
		if err := files.commit(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "kvtrace: export: %d rows -> %s%s\n", st.Rows, fioSummary(&st, fioOpt), jobPath)
	case "sai3":
		tsvPath := filepath.Join(*out, base+".tsv")
		tsv, err := files.create(ctx, tsvPath)
		if err != nil {
			return err
		}
		prog.watch("export", &read)
		st, err := export.Sai3(r, tsv, sai3Opt)
		prog.done()
		if err != nil {
			return exportError(err)
		}
		if err := files.commit(); err != nil {
			return err
		}
		// The data the operations move is in GB, decimal, as every kvbench
		// output gives data moved.
		fmt.Fprintf(stderr, "kvtrace: export: %d rows -> %d GET %s, %d PUT %s, %d DELETE -> %s\n", st.Rows,
			st.Ops[schema.OpRead], results.FormatData(st.Bytes[schema.OpRead]),
			st.Ops[schema.OpWrite], results.FormatData(st.Bytes[schema.OpWrite]), st.Ops[schema.OpDelete], tsvPath)
	}
	return nil
}

// coldObjects reads the trace file once for its cold objects, counting
// the bytes it reads in n.
func coldObjects(ctx context.Context, name string, n *atomic.Int64) ([]export.ColdObject, error) {
	f, err := cli.OpenInput(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := trace.NewReader(ctxReader{ctx: ctx, r: f, n: n})
	r.Name = name
	defer r.Close()
	cold, err := export.ColdObjects(r)
	if err != nil {
		return nil, exportError(err)
	}
	return cold, nil
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

// exportError marks a malformed trace as the user's (exit 2); other errors
// (writing, an interrupt) are failures.
func exportError(err error) error {
	if _, ok := errors.AsType[*trace.ParseError](err); ok {
		return cli.Input(err)
	}
	return err
}

// parseTiers parses a comma-separated list of tiers, by trace name (Tier-2)
// or the reference's short name (nvme).
func parseTiers(s string) ([]schema.Tier, error) {
	var tiers []schema.Tier
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		t, err := schema.ParseTier(f)
		if err != nil {
			found := false
			for c := range schema.Tier(schema.NumTiers) {
				if c.Name() == f {
					t, found = c, true
				}
			}
			if !found {
				return nil, fmt.Errorf("--tiers %s: %q: want Tier-0, Tier-1 or Tier-2 (or gpu, cpu, nvme)", s, f)
			}
		}
		tiers = append(tiers, t)
	}
	return tiers, nil
}

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

// unjoin splits an errors.Join of problems into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// dedup joins problems, dropping repeated messages (--tiers and
// --size-scale are checked twice).
func dedup(problems []error) error {
	seen := map[string]bool{}
	var out []error
	for _, p := range problems {
		if !seen[p.Error()] {
			seen[p.Error()] = true
			out = append(out, p)
		}
	}
	return errors.Join(out...)
}

// outputs are the files of one export: all appear, or none.
type outputs struct {
	input string // the trace, which no output may be
	files []*cli.OutputFile
}

// create starts writing the output at path, unless it is the trace or its
// sidecar (a link, or a file of the trace's name in --output).
func (o *outputs) create(ctx context.Context, path string) (io.Writer, error) {
	for _, in := range []string{o.input, o.input + trace.MetaSuffix} {
		if cli.SameFile(path, in) {
			return nil, cli.Usagef("export: %s is the trace %s or its sidecar: refusing to overwrite an input", path, o.input)
		}
	}
	f, err := cli.CreateFile(ctx, path)
	if err != nil {
		return nil, err
	}
	o.files = append(o.files, f)
	return f, nil
}

func (o *outputs) commit() error {
	for _, f := range o.files {
		if err := f.Close(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
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
