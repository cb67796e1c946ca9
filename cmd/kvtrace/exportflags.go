package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/export"
	"github.com/spf13/pflag"
)

// exportFlags is kvtrace export's command line as given, before it is
// checked; fs says which options were given.
type exportFlags struct {
	fs   *pflag.FlagSet
	args []string // the operands: the trace

	to, out                    string
	tiers, scale               string
	layout, dir, speed, engine string // fio
	iomem                      string
	fixedBufs                  bool
	blockSize, align           cli.ByteSize
	iodepth                    int
	buffered, noPrescan        bool
	noSpaceCheck               bool
	prefix                     string // sai3
	allowSystem                bool
}

// exportConfig is a checked export: the trace it reads, the directory it
// writes into and the options of its exporter (fio or sai3, by to).
type exportConfig struct {
	to    string // fio or sai3
	trace string // the trace's name, "-" for stdin
	out   string // --output, as given
	scale float64
	fio   export.FioOptions
	sai3  export.Sai3Options
	// fio only
	prescan  bool // read a trace file first for its cold objects and size
	checkDir bool // refuse a job whose data files --dir lacks the space for
	// allowSystem lets the outputs lie under a system directory.
	allowSystem bool
	// notes say what export took from --dir's file system (fioDrive).
	notes []string
}

// parseExportFlags parses kvtrace export's command line; its errors are
// pflag's (an unknown option, --help).
func parseExportFlags(args []string, stderr io.Writer) (*exportFlags, error) {
	f := &exportFlags{fs: cli.NewFlagSet("kvtrace export", exportUsage, stderr)}
	fs := f.fs
	cli.AddStandard(fs)
	fioDef := export.DefaultFioOptions()
	sai3Def := export.DefaultSai3Options()
	fs.StringVar(&f.to, "to", "", "what to write: fio or sai3 (required)")
	fs.StringVarP(&f.out, "output", "o", "", "the directory to write into, made if need be (required)")
	f.blockSize = cli.ByteSize(fioDef.BlockSize)
	fs.Var(&f.blockSize, "block-size", "fio: largest I/O an object operation is split into")
	f.align = cli.ByteSize(fioDef.Align)
	fs.Var(&f.align, "align", "fio: alignment of object sizes and offsets, as kvreplay finds it on the drive under test (its logical block size where above 4KiB; default: --dir's, as kvreplay takes it, or 4KiB)")
	fs.StringVar(&f.tiers, "tiers", "Tier-2", "tiers to export, comma-separated: Tier-0, Tier-1, Tier-2, Tier-3 (or gpu, cpu, nvme, object)")
	fs.StringVar(&f.layout, "layout", fioDef.Layout, "fio: extent or dir")
	fs.StringVar(&f.scale, "size-scale", "1", "multiply every object's size by this number or fraction (such as 1/4096), as kvreplay does")
	fs.StringVar(&f.dir, "dir", "", "fio: the directory the job's data files live in (required for fio)")
	fs.StringVar(&f.speed, "speed", fioDef.Speed, "fio: asap (replay_no_stall) or timed (the trace's timestamps)")
	fs.IntVar(&f.iodepth, "iodepth", fioDef.IODepth, "fio: I/Os in flight per job")
	fs.StringVar(&f.engine, "engine", fioDef.Engine, "fio: ioengine")
	fs.StringVar(&f.iomem, "iomem", fioDef.IOMem, "fio: iomem, where fio's buffers come from: "+strings.Join(export.IOMems, ", ")+" (shmhuge and mmaphuge: huge pages, which must be reserved first: the job file says how many)")
	fs.BoolVar(&f.fixedBufs, "fixedbufs", false, "fio: fixedbufs=1, io_uring's registered buffers (--engine io_uring only): they pin iodepth blocks a job, which ulimit -l must allow a user without CAP_IPC_LOCK, else fio fails")
	fs.BoolVar(&f.buffered, "buffered", false, "fio: direct=0, for file systems without O_DIRECT (taken where --dir's has none, as kvreplay takes it: tmpfs)")
	fs.BoolVar(&f.noPrescan, "no-prescan", false, "fio: do not read a trace file twice to place its cold objects first, as kvreplay --no-prescan")
	fs.StringVar(&f.prefix, "prefix", sai3Def.Prefix, "sai3: the URI prefix of the objects (the endpoint column)")
	fs.BoolVar(&f.allowSystem, cli.AllowSystemPathFlag, false, "let --output lie under a system directory (/etc, /usr, ...), which export refuses by default")
	fs.BoolVar(&f.noSpaceCheck, "no-space-check", false, "fio: export even when --dir's file system, as this machine has it, lacks the space for the job's data files (a job for another machine)")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	f.args = rest
	return f, nil
}

// config checks the command line and returns the export it asks for, or
// a usage error that names every problem, one per line.
func (f *exportFlags) config() (*exportConfig, error) {
	var p problems
	f.checkOperands(&p)
	tiers, scale := f.checkShared(&p)
	cfg := &exportConfig{to: f.to, out: f.out, scale: scale, prescan: !f.noPrescan, checkDir: !f.noSpaceCheck, allowSystem: f.allowSystem}
	switch f.to {
	case "fio":
		cfg.fio, cfg.notes = f.fioOptions(&p, tiers, scale)
	case "sai3":
		cfg.sai3 = f.sai3Options(&p, tiers, scale)
	case "":
		p.addf("--to: required (want fio or sai3)")
	default:
		p.addf("--to %s: want fio or sai3", quoteArg(f.to))
	}
	if len(p) > 0 {
		return nil, &cli.UsageError{Err: dedup(p)}
	}
	cfg.trace = f.args[0]
	return cfg, nil
}

// checkOperands checks the trace and --output: one trace, and a directory
// export may write into.
func (f *exportFlags) checkOperands(p *problems) {
	switch len(f.args) {
	case 0:
		p.addf("export: no trace given (want a file, or - for stdin)")
	case 1:
	default:
		p.addf("export: %d traces given (want one)", len(f.args))
	}
	switch f.out {
	case "":
		p.addf("--output: required (the directory to write into)")
	case "-":
		p.addf("--output -: export writes several files: give a directory, not stdout")
	default:
		if !f.allowSystem {
			if err := cli.CheckPath("--output", f.out); err != nil {
				p.add(fmt.Errorf("%w (--%s writes there anyway)", err, cli.AllowSystemPathFlag))
			}
		}
	}
}

// checkShared checks the options both exporters take and returns the
// tiers and the size scale, as parsed even when they are wrong: the
// exporters' Validate reports them again, and dedup drops the repeats.
func (f *exportFlags) checkShared(p *problems) ([]schema.Tier, float64) {
	tiers, err := parseTiers(f.tiers)
	p.add(err)
	scale, scaleErr := cli.Fraction("--size-scale", f.scale)
	p.add(scaleErr)
	// The options' zero values mean their defaults; on the command line
	// they are the user's and wrong.
	if f.fs.Changed("block-size") && f.blockSize == 0 {
		p.addf("--block-size 0: must be a power of two between 4KiB and 1GiB")
	}
	if f.fs.Changed("align") && f.align == 0 {
		p.addf("--align 0: must be a power of two between 4KiB and 1GiB")
	}
	if f.iodepth == 0 {
		p.addf("--iodepth 0: must be between 1 and 4096")
	}
	if scaleErr == nil && scale == 0 {
		p.addf("--size-scale %s: must be greater than 0 and at most 1", quoteArg(f.scale))
	}
	for _, n := range []string{"tiers", "layout", "speed", "engine", "iomem", "prefix"} {
		if fl := f.fs.Lookup(n); fl.Changed && fl.Value.String() == "" {
			p.addf("--%s: empty", n)
		}
	}
	return tiers, scale
}

// fioOptions checks the options of --to fio and returns them, --dir made
// absolute and its drive's alignment and direct I/O taken as kvreplay
// takes them (fioDrive), with notes of what that changed.
func (f *exportFlags) fioOptions(p *problems, tiers []schema.Tier, scale float64) (export.FioOptions, []string) {
	f.only(p, "sai3", "prefix")
	opt := export.FioOptions{BlockSize: int64(f.blockSize), Align: int64(f.align), Tiers: tiers, Layout: f.layout, SizeScale: scale,
		Speed: f.speed, IODepth: f.iodepth, Engine: f.engine, Buffered: f.buffered, NoPrescan: f.noPrescan,
		IOMem: f.iomem, FixedBufs: f.fixedBufs}
	var notes []string
	if f.dir != "" {
		opt.Dir = f.dir
		if err := cli.CheckPath("--dir", f.dir); err != nil {
			p.add(err)
		} else if opt.Dir, err = filepath.Abs(f.dir); err != nil {
			p.addf("--dir %s: %w", quoteArg(f.dir), err)
		} else if !f.noSpaceCheck {
			notes = f.fioDrive(p, &opt)
		}
	}
	p.add(unjoin(opt.Validate())...)
	f.checkLogNames(p)
	return opt, notes
}

// checkLogNames refuses an --output, or a trace name, that fio could not
// read in the iologs' absolute paths (OUTDIR/BASE.tier<N>.prep.iolog is
// the longest), before the export writes anything (exit 2), not when it
// opens them.
func (f *exportFlags) checkLogNames(p *problems) {
	if len(f.args) != 1 || f.out == "" || f.out == "-" {
		return
	}
	abs, err := filepath.Abs(f.out)
	if err != nil {
		return // said when the export makes it absolute
	}
	if err := export.CheckFioName("--output", abs); err != nil {
		p.add(err)
		return
	}
	longest := export.LogName(traceBase(f.args[0]), schema.NumTiers-1, export.PrepLog)
	p.add(export.CheckFioName("export: fio: iolog", filepath.Join(abs, longest)))
}

// probeDirectIO is host.ProbeDirectIO; tests replace it.
var probeDirectIO = host.ProbeDirectIO

// fioDrive takes, for a job whose --dir is on this machine (its deepest
// existing directory, as the space check takes it), what kvreplay's NVMe
// tier takes from the drive there, so that the job's I/O is the one
// kvreplay does there by default: the alignment of objects, unless
// --align is given (the file system's direct-I/O alignment where above
// 4KiB), and buffered I/O, unless --buffered is given, where kvreplay
// falls back to it (a memory file system such as tmpfs, whose files are
// the page cache, or one that refuses O_DIRECT, where fio's direct=1
// fails). It returns what it changed, or a warning about a --align below
// what the drive needs, for stderr. A job for another machine
// (--no-space-check) takes nothing from this one.
func (f *exportFlags) fioDrive(p *problems, opt *export.FioOptions) []string {
	where := cli.DeepestExisting(opt.Dir)
	d := probeDirectIO(where)
	if !d.Known {
		return nil
	}
	fsName := d.FileSystem
	if fsName == "" {
		fsName = "file system of unknown type"
	}
	var notes []string
	switch given := f.fs.Changed("align"); {
	case !given && d.Align > opt.Align && opt.BlockSize > 0 && d.Align > opt.BlockSize:
		// Said once, as the drive's: --align was not given.
		p.addf("--dir %s: the direct-I/O alignment of %s (%s) is %s, above --block-size %s: give a --block-size of %s or more",
			quoteArg(opt.Dir), quoteArg(where), fsName, cli.ByteSize(d.Align), cli.ByteSize(opt.BlockSize), cli.ByteSize(d.Align))
	case !given && d.Align > opt.Align:
		opt.Align = d.Align
		notes = append(notes, fmt.Sprintf("--align %s: the direct-I/O alignment of %s (%s), which kvreplay sizes and places objects with there", cli.ByteSize(d.Align), where, fsName))
	case given && d.Align > opt.Align && !f.buffered:
		notes = append(notes, fmt.Sprintf("warning: --align %s is below the direct-I/O alignment of %s (%s), %s: fio's direct I/O there fails, and kvreplay there aligns to %s",
			cli.ByteSize(opt.Align), where, fsName, cli.ByteSize(d.Align), cli.ByteSize(d.Align)))
	}
	if opt.Buffered {
		return notes
	}
	switch {
	case backend.MemoryFS(d.FileSystem):
		opt.Buffered = true
		notes = append(notes, fmt.Sprintf("--buffered: %s is on %s, a memory file system, where kvreplay does buffered I/O (its files are the page cache, with no device behind O_DIRECT)", where, fsName))
	case d.Refused:
		opt.Buffered = true
		notes = append(notes, fmt.Sprintf("--buffered: %s (%s) refuses O_DIRECT, where fio's direct=1 fails and kvreplay does buffered I/O", where, fsName))
	}
	return notes
}

// sai3Options checks the options of --to sai3 and returns them.
func (f *exportFlags) sai3Options(p *problems, tiers []schema.Tier, scale float64) export.Sai3Options {
	f.only(p, "fio", "block-size", "align", "layout", "dir", "speed", "iodepth", "engine", "iomem", "fixedbufs", "buffered", "no-prescan", "no-space-check")
	opt := export.Sai3Options{Prefix: f.prefix, Tiers: tiers, SizeScale: scale}
	p.add(unjoin(opt.Validate())...)
	return opt
}

// only reports each of names given on the command line as an option of
// the other exporter, target.
func (f *exportFlags) only(p *problems, target string, names ...string) {
	for _, n := range names {
		if f.fs.Changed(n) {
			p.addf("--%s: only for --to %s", n, target)
		}
	}
}

// problems collects what is wrong with a command line, so that all of it
// is reported at once.
type problems []error

// add appends the errors that are not nil.
func (p *problems) add(errs ...error) {
	for _, err := range errs {
		if err != nil {
			*p = append(*p, err)
		}
	}
}

func (p *problems) addf(format string, args ...any) {
	*p = append(*p, fmt.Errorf(format, args...))
}

// parseTiers parses a comma-separated list of tiers, by trace name (Tier-2)
// or the reference's short name (nvme). An empty list is none (the caller
// says --tiers is empty); an empty item among others is an error.
func parseTiers(s string) ([]schema.Tier, error) {
	var tiers []schema.Tier
	if s == "" {
		return nil, nil
	}
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			return nil, fmt.Errorf("--tiers %s: an empty item: want tiers separated by single commas, such as Tier-1,Tier-2", quoteArg(s))
		}
		t, err := schema.ParseTier(f)
		if err != nil {
			found := false
			for c := range schema.Tier(schema.NumTiers) {
				if c.Name() == f {
					t, found = c, true
				}
			}
			if !found {
				return nil, fmt.Errorf("--tiers %s: %q: want %s (or gpu, cpu, nvme, object)", quoteArg(s), f, schema.TierChoices)
			}
		}
		tiers = append(tiers, t)
	}
	return tiers, nil
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
func dedup(errs []error) error {
	seen := map[string]bool{}
	var out []error
	for _, p := range errs {
		if !seen[p.Error()] {
			seen[p.Error()] = true
			out = append(out, p)
		}
	}
	return errors.Join(out...)
}
