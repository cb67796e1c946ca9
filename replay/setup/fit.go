package setup

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/schema"
)

// Planning a replay for this machine (design section 5): before any I/O,
// the prescan says what the replay needs and the machine what it has.
// --plan prints both with the options that make the replay fit; --fit
// applies them and records why in the result; a replay that cannot start
// here stops with the same figures and options (replay.Advise is the one
// computation of all three).

// Fitting is what --plan and --fit ask beside the replay's Config and
// Options: Time bounds the replay --fit keeps at the trace's pace
// (--fit-time; 0: no bound), and WholeTrace plans the whole trace whatever
// the --duration window (a capacity search speeds its probes up, so their
// windows reach further than the configured speed's).
type Fitting struct {
	Time       time.Duration
	WholeTrace bool
	Print      bool   // --plan: print the plan and replay nothing
	Apply      bool   // --fit: apply the plan's options (Fit), then replay
	Format     string // --plan's --format: text or json
}

// DefaultFitTime is --fit-time's default: a replay that --fit applies
// takes at most two minutes at the trace's pace, so that a trace
// simulated for longer (the MLPerf runs' 600 s) gives an answer on the
// machine at hand in minutes; --fit-time 0 replays all of it.
const DefaultFitTime = 2 * time.Minute

// Check checks --plan, --fit, --fit-time and --format against each other
// and against -o (output) and --search, saying which flag to change.
// formatGiven and timeGiven say that --format and --fit-time were given.
func (f *Fitting) Check(output, search string, formatGiven, timeGiven bool) []error {
	var errs []error
	switch f.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--format %s: want text or json", parsemsg.Arg(f.Format)))
	}
	if formatGiven && !f.Print {
		errs = append(errs, fmt.Errorf("--format %s: the format of --plan's output: add --plan (a replay's result is always JSON)", parsemsg.Arg(f.Format)))
	}
	if f.Print && f.Apply {
		errs = append(errs, errors.New("--plan and --fit: --plan prints the plan and replays nothing; --fit applies it and replays: give one"))
	}
	if f.Print && output != "" && output != "-" {
		errs = append(errs, fmt.Errorf("-o %s: --plan prints its plan on stdout and writes no result", output))
	}
	if timeGiven && !f.Print && !f.Apply {
		errs = append(errs, fmt.Errorf("--fit-time %s: bounds what --fit applies: add --fit (or --duration to bound a run yourself)", f.Time))
	}
	if f.Time < 0 {
		errs = append(errs, fmt.Errorf("--fit-time %s: must not be negative (0: no bound)", f.Time))
	}
	if f.Print && search != "" {
		errs = append(errs, fmt.Errorf("--plan and --search %s: give one", search))
	}
	return errs
}

// Prepare prescans the traces srcs for the replay of cfg (replay.Prepare),
// over the whole trace with f.WholeTrace.
func (f Fitting) Prepare(ctx context.Context, cfg *replay.Config, srcs []replay.Source) (*replay.Plan, error) {
	c := *cfg
	if f.WholeTrace {
		c.Duration = 0
	}
	return replay.Prepare(ctx, &c, srcs)
}

// sizing is how Build sizes the backends o describes.
func (o *Options) sizing() replay.Sizing {
	return replay.Sizing{RAMBudget: o.RAMBudget, Extent: o.Layout == "extent"}
}

// machine is what this machine offers the replay o describes: its memory,
// and the space where the NVMe tier would live, and whether that is an
// object store's gateway (an s3fs mount as --dir).
func (o *Options) machine() replay.Machine {
	m := o.space()
	if !m.DiskIsDevice {
		m.DiskGateway = host.ObjectGateway(m.Disk)
	}
	m.ObjectRequests = cmp.Or(o.S3.Concurrency, s3.DefaultConcurrency)
	return m
}

// space is machine's memory and space.
func (o *Options) space() replay.Machine {
	var m replay.Machine
	m.MemAvailable, m.MemTotal = host.Memory()
	if o.Layout == "extent" && o.Device != "" {
		m.Disk = o.Device
		fi, err := os.Stat(o.Device)
		switch {
		case err == nil && !fi.Mode().IsRegular():
			m.DiskIsDevice, m.DiskFree = true, deviceSize(o.Device)
		case err == nil:
			if m.DiskFree = cli.FreeBytes(filepath.Dir(o.Device)); m.DiskFree >= 0 {
				m.DiskFree += fi.Size() // its blocks are reused
			}
			m.DiskSpace = cli.DescribePath(o.Device)
		default:
			m.DiskFree = cli.FreeBytes(filepath.Dir(o.Device))
			m.DiskSpace = cli.DescribePath(o.Device)
		}
		return m
	}
	m.Disk = o.Dir
	if m.Disk == "" {
		m.Disk = os.TempDir()
	}
	m.DiskFree = cli.FreeBytes(m.Disk)
	m.DiskSpace = cli.DescribePath(m.Disk)
	return m
}

// deviceSize is a block device's size, 0 when it cannot be read.
func deviceSize(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0
	}
	return n
}

// Planned reports whether a plan knows the traces' sizes: from a prescan,
// or from their sidecars.
func Planned(plan *replay.Plan) bool { return plan.Scanned || plan.FromMeta }

// Advise is the plan of the replay of cfg with opts on this machine.
func Advise(cfg *replay.Config, plan *replay.Plan, opts *Options) *replay.Advice {
	return replay.Advise(plan, cfg, opts.sizing(), opts.machine())
}

// CheckFits stops, before any I/O, a replay that cannot start on this
// machine (exit 2), naming the figures and the options that make it fit.
func CheckFits(cfg *replay.Config, plan *replay.Plan, opts *Options) error {
	if !Planned(plan) {
		return nil
	}
	if a := Advise(cfg, plan, opts); !a.Runs {
		return cli.Input(notFitError(a))
	}
	return nil
}

// fitOptions are the options of a that make its replay fit, which a
// refusal (notFitError) and --plan's text offer alike: all of them where
// the replay runs here and only its pace asks too much, else none that
// changes only the pace (replay.Option.Pace), which saves no memory or
// space.
func fitOptions(a *replay.Advice) []replay.Option {
	if a.Runs {
		return a.Options
	}
	var out []replay.Option
	for _, op := range a.Options {
		if !op.Pace {
			out = append(out, op)
		}
	}
	return out
}

// notFitError says, in one line, why a replay cannot start here (or,
// for --fit, why it asks too much of this machine) and what would make it
// fit: only options that do, so not a pace's (--closed-loop, --speed)
// for a replay short of memory or space, and "--fit applies the first"
// only where the first is what --fit applies.
func notFitError(a *replay.Advice) error {
	why := a.Blockers
	if len(why) == 0 {
		why = a.Problems
	}
	msg := "the replay does not fit this machine: " + strings.Join(why, "; ")
	var opts []string
	for _, op := range fitOptions(a) {
		opts = append(opts, op.Option+" ("+op.Effect+")")
	}
	switch {
	case len(opts) == 0:
		// Each blocker names its fix: a bound below every object, I/O
		// buffers beyond the memory.
		return errors.New(msg + "; no --size-scale alone makes it fit (kvreplay --plan shows the plan)")
	case a.Fit == nil:
		return errors.New(msg + ": use " + strings.Join(opts, ", or ") + " (kvreplay --plan shows the plan)")
	}
	return errors.New(msg + ": use " + strings.Join(opts, ", or ") + "; kvreplay --plan shows the plan, --fit applies the first")
}

// noPlan is the error of --plan and --fit where nothing says the traces'
// sizes: a pipe without a sidecar, or --no-prescan.
func noPlan(flag string) error {
	return cli.Input(fmt.Errorf("%s: the traces were not read before the replay (a pipe, or --no-prescan) and have no sidecar, so nothing says their sizes: give the trace files, which kvreplay reads once first", flag))
}

// timeBound is the --duration that --fit applies to keep the replay of
// cfg within --fit-time, 0 when it needs none: a --duration at most
// --fit-time already bounds it, or the trace at its pace takes no longer,
// or, at --speed max, where the pace is the machine's, its bytes at the
// rates assumed take no longer. A closed loop issues each user's
// requests no earlier than the trace does, so it takes at least as long
// as the trace at its pace.
func (f Fitting) timeBound(cfg *replay.Config, plan *replay.Plan, m replay.Machine) time.Duration {
	limit := f.Time
	if limit <= 0 || (cfg.Duration > 0 && cfg.Duration <= limit) {
		return 0
	}
	if cfg.Speed <= 0 {
		if plan.AssumedTime(m) <= limit {
			return 0
		}
		return limit
	}
	if wall := time.Duration(float64(plan.Span) / cfg.Speed); wall <= limit {
		return 0
	}
	return limit
}

// timeLine says, in a line, why --fit bounds the replay at d.
func (f Fitting) timeLine(cfg *replay.Config, plan *replay.Plan, m replay.Machine, d time.Duration) string {
	if cfg.Speed <= 0 {
		return fmt.Sprintf("--duration %s: at --speed max the replay's bytes and requests take %.1f s at the rates assumed (not measured), longer than --fit-time %s; the replay stops at the window (--fit-time 0 replays it all)",
			d, plan.AssumedTime(m).Seconds(), f.Time)
	}
	keeps := fmt.Sprintf("the replay keeps the trace's pace for its first %.1f s", d.Seconds()*cfg.Speed)
	if cfg.Speed != 1 {
		keeps = fmt.Sprintf("the replay runs the first %.1f s of the trace at --speed %g", d.Seconds()*cfg.Speed, cfg.Speed)
	}
	return fmt.Sprintf("--duration %s: the trace's %.1f s at --speed %g take %.1f s, longer than --fit-time %s; %s (--fit-time 0 replays it all)",
		d, plan.Span.Seconds(), cfg.Speed, plan.Span.Seconds()/cfg.Speed, f.Time, keeps)
}

// Fit applies the plan's options (--fit) to cfg and opts and returns the
// plan of the replay they make and what it applied and why, for the
// result, or an error when none makes it fit; a warning says what it
// applied on opts.Stderr and in the result (warn). First, a tier the
// trace uses and nothing here serves goes to its stand-in (Tier-0
// without a GPU to RAM, Tier-3 without a bucket to NVMe: replay.StandIn),
// and a replay that would run longer than --fit-time at the trace's pace
// is bounded (--duration); then the sizes are planned for what it reaches.
func (f Fitting) Fit(ctx context.Context, cfg *replay.Config, opts *Options, srcs []replay.Source, plan *replay.Plan) (fitted *replay.Plan, fit *schema.Fit, warn string, err error) {
	if !Planned(plan) {
		return nil, nil, "", noPlan("--fit")
	}
	whole := plan
	// First what the machine lacks and the time: each changes the plan.
	var pre, whys []string
	for t := range schema.Tier(schema.NumTiers) {
		if plan.Used[t] && cfg.TierMap[t] == "" {
			b := replay.StandIn(t)
			cfg.TierMap[t] = b
			pre = append(pre, fmt.Sprintf("--tier-map %s=%s", t, b))
			whys = append(whys, fmt.Sprintf("--tier-map %s=%s: the trace has %d %s rows and the tier map gives that tier nothing%s, so %s serves them and their figures are %s's",
				t, b, plan.UsedRows[t], t, replay.TierHint(t), b, b))
		}
	}
	m := opts.machine()
	stood, stoodCfg := len(pre), *cfg
	if d := f.timeBound(cfg, plan, m); d > 0 {
		whys = append(whys, f.timeLine(cfg, plan, m, d))
		cfg.Duration = d
		pre = append(pre, "--duration "+d.String())
	}
	if len(pre) > 0 {
		if plan, err = f.Prepare(ctx, cfg, srcs); err != nil {
			return nil, nil, "", err
		}
	}
	a := Advise(cfg, plan, opts)
	if a.Fits {
		if len(pre) > 0 {
			fit = &schema.Fit{Applied: pre, Why: strings.Join(whys, "; ") + "; so, the replay fits this machine: " + needsLine(a, a.Needs) + "; " + machineLine(a)}
			return plan, fit, fitWarning(opts, pre), nil
		}
		return plan, &schema.Fit{Applied: []string{}, Why: "the replay fits this machine as it is: " + needsLine(a, a.Needs) + "; " + machineLine(a)}, "", nil
	}
	if a.Fit == nil {
		return nil, nil, "", cli.Input(fmt.Errorf("--fit: %w", notFitError(a)))
	}
	if a.Fit.Speed > 0 {
		// The time bound and the window change with the pace: settled
		// again at it, without the ones of the trace's pace.
		*cfg = stoodCfg
		return f.fitPace(ctx, cfg, opts, srcs, whole, a, pre[:stood], whys[:stood])
	}
	applyFit(cfg, opts, a.Fit)
	if fitted, err = f.Prepare(ctx, cfg, srcs); err != nil {
		return nil, nil, "", err
	}
	after := Advise(cfg, fitted, opts)
	if !after.Runs {
		return nil, nil, "", cli.Input(fmt.Errorf("--fit: %s: %w", strings.Join(a.Fit.Flags, " "), notFitError(after)))
	}
	applied := append(pre, a.Fit.Flags...)
	why := fitWhy(whys, a, after, a.Fit.Flags)
	return fitted, &schema.Fit{Applied: applied, Why: why}, fitWarning(opts, applied), nil
}

// fitWhy is the result's fit.why: the reasons of what --fit applied first
// (whys: stand-in tiers, the time bound), what the replay as given
// needed and why it did not fit (first's), and what it needs with flags
// (after's).
func fitWhy(whys []string, first, after *replay.Advice, flags []string) string {
	why := "as given, " + needsLine(first, first.Needs) + ": " + strings.Join(append(first.Blockers, first.Problems...), "; ") +
		"; with " + strings.Join(flags, " ") + ", " + needsLine(after, after.Needs) + "; " + machineLine(first)
	return strings.Join(append(slices.Clone(whys), why), "; ")
}

// applyFit sets what fit applies on cfg and opts.
func applyFit(cfg *replay.Config, opts *Options, fit *replay.Fit) {
	cfg.SizeScale = fit.Scale
	if fit.Capacity > 0 {
		cfg.Capacity = fit.Capacity
	}
	if fit.RAMBudget > 0 {
		opts.RAMBudget = fit.RAMBudget
	}
	if fit.Speed > 0 {
		cfg.Speed = fit.Speed
	}
}

// maxPaceSteps bounds how many times fitPace slows the pace again.
const maxPaceSteps = 8

// fitPace applies first, a fit that slows the pace (an object store's
// requests ask more than it is assumed to serve at the trace's pace,
// which a size scale changes only for objects above the s3 tier's part
// size: Plan.Ops), and settles it: at the slower pace the
// replay takes longer, so --fit-time bounds it again (--duration), and
// that window reaches less of the trace, its start, which may ask more
// requests a second than the whole did. Each window is planned and
// advised again, and what its advice applies is applied, until it fits,
// at most maxPaceSteps times; a fit it cannot settle is refused. cfg
// holds the options as given with the stand-in tiers (pre, whys).
func (f Fitting) fitPace(ctx context.Context, cfg *replay.Config, opts *Options, srcs []replay.Source, whole *replay.Plan, first *replay.Advice, pre, whys []string) (*replay.Plan, *schema.Fit, string, error) {
	given, budget, m := *cfg, opts.RAMBudget, opts.machine()
	a := first
	for step := 0; ; step++ {
		applyFit(cfg, opts, a.Fit)
		cfg.Duration = given.Duration
		var timeWhy string
		if d := f.timeBound(cfg, whole, m); d > 0 {
			cfg.Duration, timeWhy = d, f.timeLine(cfg, whole, m, d)
		}
		fitted, err := f.Prepare(ctx, cfg, srcs)
		if err != nil {
			return nil, nil, "", err
		}
		after := Advise(cfg, fitted, opts)
		flags := append(slices.Clone(pre), paceFlags(&given, cfg, budget, opts.RAMBudget)...)
		if after.Fits {
			reasons := whys
			if timeWhy != "" {
				reasons = append(slices.Clone(whys), timeWhy)
			}
			return fitted, &schema.Fit{Applied: flags, Why: fitWhy(reasons, first, after, flags[len(pre):])}, fitWarning(opts, flags), nil
		}
		if after.Fit == nil || step == maxPaceSteps {
			return nil, nil, "", cli.Input(fmt.Errorf("--fit: %s: %w", strings.Join(flags, " "), notFitError(after)))
		}
		a = after
	}
}

// paceFlags are the options fitPace changed from given, as a command line
// gives them: the window, the size scale, the bounds and the pace.
func paceFlags(given, cfg *replay.Config, budget, fitBudget int64) []string {
	var out []string
	if cfg.Duration != given.Duration {
		out = append(out, "--duration "+cfg.Duration.String())
	}
	if cfg.SizeScale != given.SizeScale {
		out = append(out, "--size-scale "+replay.FormatScale(cfg.SizeScale))
	}
	if cfg.Capacity != given.Capacity {
		out = append(out, "--capacity "+cli.FormatBytes(cfg.Capacity))
	}
	if fitBudget != budget {
		out = append(out, "--ram-budget "+cli.FormatBytes(fitBudget))
	}
	if cfg.Speed != given.Speed {
		out = append(out, "--speed "+replay.FormatSpeed(cfg.Speed))
	}
	return out
}

// fitWarning prints what --fit applies on opts.Stderr, before the
// replay ("replaying with"), and returns it for the result, written
// after the replay ("replayed with").
func fitWarning(opts *Options, applied []string) string {
	flags := strings.Join(applied, " ")
	if opts.Stderr != nil {
		fmt.Fprintf(opts.Stderr, "kvreplay: --fit: replaying with %s, so that the replay fits this machine (the result's fit will say why)\n", flags)
	}
	return fmt.Sprintf("--fit: replayed with %s, so that the replay fits this machine (the result's fit says why)", flags)
}

// needsLine says what n asks, in a line.
func needsLine(a *replay.Advice, n replay.Needs) string {
	var parts []string
	for _, b := range n.Backends {
		s := fmt.Sprintf("%s %s at its peak", b.Backend, cli.FormatBytes(b.Peak))
		if b.Rate > 0 {
			s += ", asking " + replay.FormatRate(b.Rate)
		}
		if ops := a.OpsText(b); ops != "" {
			s += " in " + ops
		}
		parts = append(parts, s)
	}
	pace := fmt.Sprintf("%.1f s of trace", n.SpanS)
	if n.WallS > 0 {
		pace += fmt.Sprintf(" in %.1f s", n.WallS)
	}
	return fmt.Sprintf("the replay at --size-scale %s (%s) needs %s of memory and %s of disk: %s", replay.FormatScale(n.Scale), pace,
		cli.FormatBytes(n.Memory), cli.FormatBytes(n.Disk), strings.Join(parts, "; "))
}

// diskFree is the free space of the machine's disk, or that it is
// unknown.
func diskFree(m replay.Machine) string {
	if m.DiskFree < 0 {
		return "unknown space"
	}
	return cli.FormatBytes(m.DiskFree)
}

// machineLine says what the machine has and what a plan assumes of it.
func machineLine(a *replay.Advice) string {
	m := a.Machine
	disk := fmt.Sprintf("%s free in %s", diskFree(m), m.Disk)
	if m.DiskIsDevice {
		disk = fmt.Sprintf("%s in the device %s", cli.FormatBytes(m.DiskFree), m.Disk)
	}
	return fmt.Sprintf("this machine has %s of memory available of %s and %s; a replay that fits asks at most %.0f %% of them and of the rates assumed (not measured): RAM %s, disk %s, object store %s and %s",
		cli.FormatBytes(m.MemAvailable), cli.FormatBytes(m.MemTotal), disk, a.Share*100, replay.FormatRate(a.AssumedRAMRate), replay.FormatRate(a.AssumedDiskRate),
		replay.FormatRate(a.AssumedObjectRate), objectRequests(a))
}

// objectRequests says the request rate assumed of an object store: the
// s3 tier's requests in flight, each taking AssumedObjectRequest.
func objectRequests(a *replay.Advice) string {
	return fmt.Sprintf("%.0f requests/s (%d in flight, %s each)", a.Machine.OpsRate("s3"), a.Machine.InFlight("s3"), replay.AssumedObjectRequest)
}

// PlanDoc is --plan's document (--format json).
type PlanDoc struct {
	Traces  []string `json:"traces"`
	Rows    int64    `json:"rows"`
	Objects int64    `json:"objects"`
	Speed   float64  `json:"speed"`
	Scanned bool     `json:"prescanned"`
	// FitDurationS is the --duration --fit applies to keep the replay
	// within --fit-time (0: none), and FitDuration why.
	FitDurationS float64 `json:"fit_duration_s,omitempty"`
	FitDuration  string  `json:"fit_duration,omitempty"`
	// FitApplies is what kvreplay --fit applies (empty: the replay fits
	// as it is), planned as --fit plans it: over the --duration window
	// and the stand-in tiers it adds first, which the plan's options,
	// over the traces as given, do not see; FitRefuses says instead why
	// --fit would refuse.
	FitApplies []string       `json:"fit_applies"`
	FitRefuses string         `json:"fit_refuses,omitempty"`
	Advice     *replay.Advice `json:"plan"`
	// Leftovers are the run directories earlier runs left in --dir
	// (killed, or run with --keep): the space they hold is not free,
	// and a replay warns of them too.
	Leftovers []string `json:"leftover_run_dirs,omitempty"`
}

// WritePlan prints the plan of the replay of cfg and opts over traces
// (read from srcs) (--plan), as text or JSON (format): what it needs, what
// this machine has, the options that make it fit, and what --fit applies.
func (f Fitting) WritePlan(ctx context.Context, w io.Writer, format string, traces []string, srcs []replay.Source, cfg *replay.Config, plan *replay.Plan, opts *Options) error {
	if !Planned(plan) {
		return noPlan("--plan")
	}
	a := Advise(cfg, plan, opts)
	doc := PlanDoc{Traces: traces, Rows: plan.Rows, Objects: plan.Objects, Speed: cfg.Speed, Scanned: plan.Scanned, Advice: a}
	if opts.Dir != "" && !(opts.Layout == "extent" && opts.Device != "") {
		doc.Leftovers = cli.LeftoverRunDirs(opts.Dir, RunDirTool)
	}
	if d := f.timeBound(cfg, plan, a.Machine); d > 0 {
		doc.FitDurationS, doc.FitDuration = d.Seconds(), f.timeLine(cfg, plan, a.Machine, d)
	}
	if err := f.preview(ctx, &doc, cfg, opts, srcs, plan); err != nil {
		return err
	}
	if format == "json" {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(doc)
	}
	// The text is many small writes whose errors it does not check: the
	// first one is the plan's (a full disk, a closed pipe: --plan | head -1).
	ew := &errWriter{w: w}
	if err := f.writePlan(ew, &doc, cfg, plan, opts); err != nil && ew.err == nil {
		return err
	}
	return ew.err
}

// errWriter writes to w until a write fails, then keeps that error (err)
// and writes nothing more.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// preview fills doc's FitApplies or FitRefuses: Fit on copies of cfg and
// opts, so that --plan says what --fit does where Fit plans again (a
// --duration window, a stand-in tier: kvreplay --plan of MLPerf's 8B
// trace offered --size-scale 1/8192 "(--fit applies this)", the whole
// trace's option, while --fit applied --duration 2m0s --size-scale
// 1/4096, its window's). Only ctx's end is an error.
func (f Fitting) preview(ctx context.Context, doc *PlanDoc, cfg *replay.Config, opts *Options, srcs []replay.Source, plan *replay.Plan) error {
	c, o := *cfg, *opts
	o.Stderr = nil
	_, fit, _, err := f.Fit(ctx, &c, &o, srcs, plan)
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case err != nil:
		doc.FitApplies, doc.FitRefuses = []string{}, err.Error()
	default:
		doc.FitApplies = fit.Applied
	}
	return nil
}

// fitLine says what --fit applies, in a line.
func fitLine(doc *PlanDoc) string {
	switch {
	case doc.FitRefuses != "":
		// The figures and the options above say why (fit_refuses, in
		// JSON, says it whole).
		return "kvreplay --fit refuses it: nothing it applies makes the replay fit (--format json says why, in fit_refuses)."
	case len(doc.FitApplies) == 0:
		return "kvreplay --fit applies nothing: it fits as it is."
	}
	return "kvreplay --fit applies " + strings.Join(doc.FitApplies, " ") + "."
}

// writePlan renders a plan for people.
func (f Fitting) writePlan(w io.Writer, doc *PlanDoc, cfg *replay.Config, plan *replay.Plan, o *Options) error {
	writeHeader(w, doc, cfg, plan)
	writeNeeds(w, doc.Advice, o)
	for _, l := range doc.Leftovers {
		fmt.Fprintf(w, "  note     %s is left by an earlier run (killed, or run with --keep): its space is not free; kvreplay leaves it alone: remove it if nothing needs it\n", l)
	}
	return writeVerdict(w, doc)
}

// writeHeader renders what the plan is of: the traces, the window, the
// users, the tiers mapped to nothing and --fit's time bound.
func writeHeader(w io.Writer, doc *PlanDoc, cfg *replay.Config, plan *replay.Plan) {
	traces, a := doc.Traces, doc.Advice
	n := a.Needs
	pace := "--speed max: as fast as the machine serves, so the trace's pace asks no bandwidth"
	if cfg.Speed > 0 {
		pace = fmt.Sprintf("a replay of %.1f s at --speed %g", n.WallS, cfg.Speed)
	}
	fmt.Fprintf(w, "kvreplay plan: %s: %d rows, %d objects, %.1f s of trace (%s)\n", strings.Join(traces, ", "), plan.Rows, n.Objects, n.SpanS, pace)
	if a.WindowS > 0 {
		// The traces replay merged by time, paced from the first row of
		// them all: a trace that starts later has its rows later in the
		// window, or none in it.
		what, its := "the trace", "its"
		if len(traces) > 1 {
			what, its = "the traces, merged by time from the first row of any", "their"
		}
		fmt.Fprintf(w, "  --duration %g: the first %.1f s of %s (%d of %s %d rows), all that the window can reach, is planned\n",
			cfg.Duration.Seconds(), a.WindowS, what, plan.WindowRows, its, plan.Rows)
	}
	if !plan.Scanned {
		fmt.Fprintln(w, "  not read before the replay: the sizes are the sidecars', the bytes moved and their bandwidth unknown")
	}
	if plan.UserLimit > 0 {
		fmt.Fprintf(w, "  --closed-loop --users %d: what the %d of the trace's %d users it replays (a sample that keeps the QoS mix: %s) need is planned: their requests' rows, the rows outside users' requests, and the Evict and Delete rows of their objects that the others' requests carry\n",
			plan.UserLimit, plan.UserLimit, len(plan.Users), strings.TrimPrefix(usersWhat(plan, plan.UserLimit), fmt.Sprintf("users=%d ", plan.UserLimit)))
	}
	for t := range schema.Tier(schema.NumTiers) {
		if plan.Used[t] && cfg.TierMap[t] == "" {
			fmt.Fprintf(w, "  %s: %d rows and --tier-map maps it to nothing: a replay refuses them, --fit maps them to %s (--tier-map %s=%s; the plan below leaves them out)\n",
				t, plan.UsedRows[t], replay.StandIn(t), t, replay.StandIn(t))
		}
	}
	if doc.FitDuration != "" {
		fmt.Fprintf(w, "  --fit replays with %s (the plan below is the whole trace's; --fit plans the window)\n", doc.FitDuration)
	}
}

// writeNeeds renders what the replay needs beside what this machine has.
func writeNeeds(w io.Writer, a *replay.Advice, o *Options) {
	n := a.Needs
	exact := "exact"
	if !n.Exact {
		exact = "at most"
	}
	fmt.Fprintf(w, "\nWhat the replay needs (--size-scale %s, %s):\n", replay.FormatScale(n.Scale), exact)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  backend\ttiers\tpeak live\tlargest object\twritten\tread\tasks at the trace's pace\t")
	for _, b := range n.Backends {
		rate := "-"
		if b.Rate > 0 {
			rate = replay.FormatRate(b.Rate)
		}
		if ops := a.OpsText(b); ops != "" {
			rate += ", " + ops
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b.Backend, strings.Join(b.Tiers, ","), cli.FormatBytes(b.Peak), cli.FormatBytes(b.MaxObject),
			replay.FormatData(b.Written), replay.FormatData(b.Read), rate)
	}
	tw.Flush()
	arena := "the RAM arena"
	for _, b := range n.Backends {
		if b.Backend == "ram" && b.Reach > b.Peak && o.RAMBudget == 0 {
			arena = fmt.Sprintf("the RAM arena, %s at most, sized for a closed loop, whose order is not the trace's: it may keep up to %s live there, more than the trace's peak of %s, which is prefaulted;",
				cli.FormatBytes(n.Arena), cli.FormatBytes(b.Reach), cli.FormatBytes(b.Peak))
		}
	}
	fmt.Fprintf(w, "  memory  %s (%s and the engine's state for %d objects)\n", cli.FormatBytes(n.Memory), arena, n.Objects)
	for _, note := range a.Notes {
		fmt.Fprintf(w, "  note: %s\n", note)
	}
	if n.Disk > 0 {
		fmt.Fprintf(w, "  disk    %s (the NVMe tier at its peak, with its largest object%s)\n", cli.FormatBytes(n.Disk), map[bool]string{true: ", in an extent file"}[o.Layout == "extent"])
	}
	m := a.Machine
	fmt.Fprintln(w, "\nWhat this machine has:")
	fmt.Fprintf(w, "  memory   %s available of %s\n", cli.FormatBytes(m.MemAvailable), cli.FormatBytes(m.MemTotal))
	if m.DiskIsDevice {
		fmt.Fprintf(w, "  disk     %s: a device of %s\n", m.Disk, cli.FormatBytes(m.DiskFree))
	} else {
		fmt.Fprintf(w, "  disk     %s: %s free%s\n", m.Disk, diskFree(m), m.SpaceText())
	}
	disk := "disk " + replay.FormatRate(a.AssumedDiskRate)
	if m.DiskGateway != "" {
		disk = fmt.Sprintf("disk %s (%s is on %s, an object store's gateway: the object store's rate)", replay.FormatRate(a.AssumedDiskRate), m.Disk, m.DiskGateway)
	}
	fmt.Fprintf(w, "  assumed  RAM %s, %s, object store %s and %s (conservative, not measured); a replay that fits asks at most %.0f %% of each, of the memory and of the space\n",
		replay.FormatRate(a.AssumedRAMRate), disk, replay.FormatRate(a.AssumedObjectRate), objectRequests(a), a.Share*100)
}

// writeVerdict renders whether the replay fits, why not, the options that
// make it fit and what --fit applies.
func writeVerdict(w io.Writer, doc *PlanDoc) error {
	a := doc.Advice
	switch {
	case a.Fits:
		fmt.Fprintln(w, "\nIt fits: nothing to change.")
		if len(doc.FitApplies) > 0 {
			fmt.Fprintln(w, fitLine(doc))
		}
		return nil
	case a.Runs:
		fmt.Fprintln(w, "\nIt runs, but asks more of this machine than a replay that keeps the trace's pace should:")
	default:
		fmt.Fprintln(w, "\nIt does not fit: kvreplay would refuse to start it.")
	}
	for _, p := range append(a.Blockers, a.Problems...) {
		fmt.Fprintf(w, "  %s\n", p)
	}
	offered := fitOptions(a)
	if len(offered) == 0 {
		fmt.Fprintln(w, "\nNo --size-scale alone makes it fit: change what is named above.")
		fmt.Fprintln(w, fitLine(doc))
		return nil
	}
	fmt.Fprintln(w, "\nOptions that make it fit:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, op := range offered {
		if i == 0 && a.Fit != nil && slices.Equal(a.Fit.Flags, doc.FitApplies) {
			op.Effect += " (--fit applies this)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", op.Option, op.Effect)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\n"+fitLine(doc))
	return err
}
