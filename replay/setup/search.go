package setup

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/launch"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// ReplayFunc replays the traces once with cfg, drawing progress when set;
// a run stopped early returns its result, marked incomplete, with the
// error, and one that did not run (or that a signal stopped) no result.
type ReplayFunc func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error)

// SearchOptions are a search's: its kind (search.KindUsers or
// search.KindCapacity), the most probes, how many times a users search
// probes its answer, and the Config every probe starts from (its
// --duration the probe's window; a capacity search starts at its Speed
// when SpeedGiven, else at search.DefaultCapacityStart).
type SearchOptions struct {
	Kind    string
	Probes  int
	Repeats int
	Config  replay.Config
	// SpeedGiven, ProbesGiven and RepeatsGiven say that --speed,
	// --search-probes and --search-repeats were given; DurationGiven
	// that --duration was.
	SpeedGiven, ProbesGiven, RepeatsGiven, DurationGiven bool
	// Rank is this process's place in its run, whose ranks (Rank.Ranks)
	// a search refuses beyond one; Keep says --keep was given.
	Rank launch.Rank
	Keep bool
}

// DefaultProbeWindow is a search probe's --duration when none is given.
const DefaultProbeWindow = 30 * time.Second

// Check validates --search (Kind), --search-probes and --search-repeats
// against cfg, the replay's configuration, and sets on cfg what a search
// implies: a users search is closed-loop, and a probe's window defaults
// to DefaultProbeWindow. A search's own options do nothing without it,
// and --search-repeats nothing to a capacity search (it probes each speed
// once): they are refused, as --fit-time without --fit is, not ignored.
func (so *SearchOptions) Check(cfg *replay.Config) []error {
	var errs []error
	if r := so.Rank; so.Kind != "" && r.Ranks > 1 {
		// Nothing coordinates the ranks' probes: each would bracket on
		// its own shard, at its own time, beside the others' unrelated
		// loads, and write its own answer. The ranks may be a batch
		// script's, not the user's (SLURM_NTASKS in an sbatch script):
		// the error says where they came from.
		errs = append(errs, fmt.Errorf("--search %s under %d ranks: each rank would choose its own probes, at its own times, so no probe would load the system as one (the %d ranks: %s): to search on one host, %s; or give every rank the same --speed (or --closed-loop --users N) and merge their results",
			so.Kind, r.Ranks, r.Ranks, r.RanksOrigin(), r.OneProcess()))
	}
	if so.Kind != "" && so.Keep {
		// Each probe is a replay on fresh tiers: kept, each probe's
		// objects stay, and the next probes run beside them, on a fuller
		// disk, each warned of the one before as of a killed run.
		errs = append(errs, fmt.Errorf("--keep with --search %s: each probe would leave its objects in --dir, and the probes after it would run on a disk they fill: drop --keep (a single replay keeps its objects with it)", so.Kind))
	}
	if so.Kind == "" && so.ProbesGiven {
		errs = append(errs, fmt.Errorf("--search-probes %d: bounds the probes of a search: add --search users or --search capacity", so.Probes))
	}
	if so.Kind != search.KindUsers && so.RepeatsGiven {
		errs = append(errs, fmt.Errorf("--search-repeats %d: how many times a users search probes its answer: only with --search users", so.Repeats))
	}
	if so.Kind == "" {
		return errs
	}
	switch so.Kind {
	case search.KindUsers:
		cfg.ClosedLoop = true
		if cfg.Users != 0 {
			errs = append(errs, fmt.Errorf("--users %d: --search users chooses the users itself", cfg.Users))
		}
		if !cfg.Prescan {
			errs = append(errs, errors.New("--search users --no-prescan: a users search reads the traces once first, to sample each probe's users by QoS class "+
				"(without it a probe of n users replays the first n to appear, and measures which classes come first): drop --no-prescan"))
		}
	case search.KindCapacity:
		if cfg.ClosedLoop {
			errs = append(errs, errors.New("--search capacity raises an open loop's --speed: drop --closed-loop"))
		}
		if so.SpeedGiven && cfg.Speed == 0 {
			errs = append(errs, errors.New("--speed max: --search capacity doubles --speed from where it starts: give the speed to start from (default: 0.25, a quarter of the trace's pace)"))
		}
	default:
		errs = append(errs, fmt.Errorf("--search %s: want users or capacity", parsemsg.Arg(so.Kind)))
	}
	if so.Probes < 3 || so.Probes > 100 {
		errs = append(errs, fmt.Errorf("--search-probes %d: must be between 3 and 100", so.Probes))
	}
	if so.Repeats < 1 || so.Repeats > 10 {
		errs = append(errs, fmt.Errorf("--search-repeats %d: must be between 1 and 10", so.Repeats))
	}
	if cfg.Duration == 0 && so.DurationGiven {
		// --duration 0 means the whole trace to a replay; a search's
		// probes are windows, and it became 30 s without a word.
		errs = append(errs, fmt.Errorf("--duration 0: a search's probes are windows of the trace (%v when --duration is not given): give the window, e.g. --duration 10m", DefaultProbeWindow))
	}
	if cfg.Duration == 0 {
		cfg.Duration = DefaultProbeWindow
	}
	return errs
}

// Refusal says err, an error of the prescan, in the search's words: a
// users search of a trace without users (replay.NoUsersError) is refused
// naming --search users and the search such a trace takes, --search
// capacity (the closed loop's own message, which --search users sets,
// said to replay it open-loop, which the user never asked to close).
// Other errors, and every error without a search, are err.
func (so *SearchOptions) Refusal(err error) error {
	var nu *replay.NoUsersError
	if so.Kind != search.KindUsers || !errors.As(err, &nu) {
		return err
	}
	return cli.Input(fmt.Errorf("--search users: %s has no User column, so it has no users to search over: %s; "+
		"--search capacity finds the most load it serves, open-loop, or make the trace with kvtrace, which writes Request and User: %w",
		nu.Trace, replay.NoUsersWhy, replay.ErrNoUsers))
}

// SearchSources refuses a search of kind over traces of which one cannot
// be read from its start again (stdin, a named pipe): each probe replays
// the traces from their start, and a pipe gives its rows once, so the
// second probe read the rest of it (a capacity search's first probe
// measured, its second "not a measurement: bad header").
func SearchSources(kind string, srcs []replay.Source) error {
	for _, s := range srcs {
		if !s.Rescan {
			return cli.Input(fmt.Errorf("--search %s: trace %s is a pipe: each probe replays the traces from their start, which a pipe gives once: give trace files", kind, parsemsg.Arg(s.Name)))
		}
	}
	return nil
}

// SearchFits is CheckFits for a search of kind, and marks opts as a
// search's (Options.Probe): Replay checks each probe with its own plan
// before any I/O. A plan whose only
// blocker is the NVMe tier's space (the whole trace's peak, or all its
// users', beyond what --dir has free) is a warning, returned, not a
// refusal, and opts.MayFill is set: a search's probes replay windows of
// the trace, which grow with a capacity search's --speed and a users
// search's users, and the first probes may fit where the last do not.
// Each probe is then checked with its own plan before any I/O, as a
// replay is (Replay): the first that does not fit is not run, and stops
// the search, not done, its answer what the probes before it measured
// (exit 1); no probe fills the disk on the plan's word. Memory is refused
// as for a replay.
func SearchFits(kind string, cfg *replay.Config, plan *replay.Plan, opts *Options) (warning string, err error) {
	opts.Probe = true
	if !Planned(plan) {
		return "", nil
	}
	a := searchAdvice(cfg, plan, opts)
	if a.Runs {
		return "", nil
	}
	for _, b := range a.Blockers {
		if !strings.HasPrefix(b, "disk: ") {
			return "", cli.Input(notFitError(a))
		}
	}
	opts.MayFill = true
	return fmt.Sprintf("--search %s: the largest probes may not fit: %v; each probe is checked against the free space with its own window and users before it runs, "+
		"and the first that does not fit is not run: it stops the search (done: false, exit 1), its answer what the probes before it measured", kind, notFitError(a)), nil
}

// searchAdvice is Advise for a search and its probes, its options those
// that a search can take: a smaller --size-scale, a --capacity or a
// --ram-budget, which bound the space every probe needs. A --duration is
// the probes' window, which a shorter one (100ms) makes useless, and a
// search sets the loop and the pace its probes replay at itself
// (--closed-loop, --speed): a refusal of a search or of a probe suggests
// none of them.
func searchAdvice(cfg *replay.Config, plan *replay.Plan, opts *Options) *replay.Advice {
	a := Advise(cfg, plan, opts)
	a.Options = slices.DeleteFunc(a.Options, func(o replay.Option) bool {
		flag, _, _ := strings.Cut(o.Option, " ")
		return flag != "--size-scale" && flag != "--capacity" && flag != "--ram-budget"
	})
	return a
}

// Search runs the search so asks over the traces' total users, each probe
// a call of once with its own data seed (probeSeed), and returns its
// document, its identity (tool, command line, host, config) for the
// caller to fill. A probe that fails to run or
// is not a measurement stops the search: the document is returned, marked
// not done with its answer a lower bound, with the error. A users search
// of traces whose users are unknown, or were not read (plan.Scanned: their
// classes, which each probe samples, are unknown), is the input's error,
// with no document.
func Search(so SearchOptions, plan *replay.Plan, total int, once ReplayFunc, prog *SearchProgress) (*search.Document, error) {
	var (
		traces   = plan.Traces
		warnings search.Warnings
		probes   int // the probes that gave a result
		begun    int // the probes begun
	)
	probe := func(n int, speed float64) (search.Probe, error) {
		cfg := so.Config
		cfg.Seed = probeSeed(so.Config.Seed, begun)
		begun++
		what := fmt.Sprintf("speed=%gx", speed)
		if so.Kind == search.KindUsers {
			cfg.Users = n
			what = usersWhat(plan, n)
		} else {
			cfg.Speed = speed
		}
		prog.begin(what)
		res, err := once(&cfg, prog.update())
		if res == nil {
			// A probe that did not run, or one a signal stopped, ends the
			// search as it is.
			if err == nil {
				err = errors.New("the replay returned no result")
			}
			prog.end("stopped: " + err.Error())
			return search.Probe{}, err
		}
		if len(traces) == 0 {
			traces = res.Traces
		}
		// Every probe's warnings, each kind once (search.Warnings): the
		// first probe's alone dropped what only a later one met (rows run
		// out of their objects' order, what a clean-up left).
		probes++
		warnings.Add(probes, res.Warnings)
		storage, known := storageOf(plan, &so.Config)
		if !known {
			storage = search.StorageOf(res)
		}
		p := search.Summarize(so.Kind, res, storage)
		prog.end(probeResult(so.Kind, p))
		return p, nil
	}
	var (
		doc *search.Document
		err error
	)
	if so.Kind == search.KindUsers {
		if total <= 0 {
			return nil, cli.Input(errors.New("--search users: the trace's users are unknown: give a trace file with a User column (kvtrace's), which kvreplay reads once before the search"))
		}
		if !plan.Scanned {
			// Each probe's users are a sample by QoS class of the users the
			// prescan found; without them a probe of n users would be the
			// first n to appear, whatever their classes.
			return nil, cli.Input(errors.New("--search users: the traces were not read before the search (--no-prescan), so their users' QoS classes are unknown: drop --no-prescan"))
		}
		doc, err = search.Users(search.UsersOptions{Total: total, MaxProbes: so.Probes, Repeats: so.Repeats,
			Classes: replay.UsersByQoS(plan.Users)}, probe)
	} else {
		start := 0.0 // search.DefaultCapacityStart
		if so.SpeedGiven {
			start = so.Config.Speed
		}
		doc, err = search.Capacity(search.CapacityOptions{Start: start, MaxProbes: so.Probes}, probe)
	}
	if so.Kind == search.KindCapacity && len(doc.Probes) > 0 {
		doc.Reason += "; " + offeredMeasure(plan, &so.Config)
	}
	doc.Format, doc.FormatVersion = schema.SearchFormat, schema.SearchFormatVersion
	doc.WindowS = so.Config.Duration.Seconds()
	doc.Traces = traces
	doc.Warnings = warnings.List()
	if !prog.Quiet {
		fmt.Fprintln(prog.W, "kvreplay: search: "+doc.Reason)
	}
	if err != nil {
		if len(doc.Probes) > 0 {
			err = &stoppedError{err}
		}
		return doc, fmt.Errorf("search incomplete: %w", err)
	}
	return doc, nil
}

// stoppedError is the error of a search that a probe stopped after
// others ran: a run's failure (exit 1), as every probe that did not
// complete is (design section 6), even one refused as the input's error
// (cli.Input: an S3 tier whose credentials expired during the search),
// which would have said that the command line the probes before it
// measured with was wrong (exit 2). Its message is the error's.
type stoppedError struct{ err error }

func (e *stoppedError) Error() string { return e.err.Error() }

// Unwrap returns the error, without its mark as the input's.
func (e *stoppedError) Unwrap() error {
	if u, ok := errors.AsType[*cli.UsageError](e.err); ok {
		return u.Err
	}
	return e.err
}

// probeSeed is the data seed of a search's probe k (from 0): the first's
// is seed (--seed), each later one's another, so that no probe writes
// the bytes an earlier one wrote. With the same seed every probe wrote
// the same bytes under the same keys, and with --layout extent on a
// --device, at the same offsets: a deduplicating store, or a file system
// that skips a write of the data a block already holds (ZFS's nop-write),
// served the later probes' writes without writing them, and the search
// measured that, not the device.
func probeSeed(seed uint64, k int) uint64 {
	return seed ^ uint64(k)*0xbf58476d1ce4e5b9 // splitmix64's multiplier; the ranks' is another (replay's dataSeed)
}

// storageOf is the tiers whose bytes a search's offered loads count
// (search.Summarize): those the traces use on the backend Tier-2 maps to
// (by --tier-map's name: the result names a backend as it names itself,
// "extent" for the nvme tier's --layout extent) when the traces have
// Tier-2 rows, none (every tier) when they have none; known says the
// prescan read them. A search's probes then offer load to one measure,
// whatever each probe's window reached.
func storageOf(plan *replay.Plan, cfg *replay.Config) (tiers []string, known bool) {
	if plan.Used[schema.TierNVMe] {
		for t, b := range cfg.TierMap {
			if b == cfg.TierMap[schema.TierNVMe] && plan.Used[t] {
				tiers = append(tiers, schema.Tier(t).String())
			}
		}
	}
	return tiers, plan.Scanned
}

// offeredMeasure says which tiers' bytes a search's offered loads count
// (storageOf), as its reason ends: the figures name no tier.
func offeredMeasure(plan *replay.Plan, cfg *replay.Config) string {
	tiers, known := storageOf(plan, cfg)
	switch {
	case !known:
		return "offered load: the reads and writes of the tiers on Tier-2's backend over each probe's elapsed time where it moved Tier-2 bytes, else every tier's (the traces were not read before the search)"
	case len(tiers) == 0:
		return "offered load: every tier's reads and writes over each probe's elapsed time (the traces have no Tier-2 row)"
	case len(tiers) == 1:
		return "offered load: Tier-2's reads and writes over each probe's elapsed time"
	}
	return fmt.Sprintf("offered load: the reads and writes of every tier on Tier-2's backend, %s (%s), over each probe's elapsed time", cfg.TierMap[schema.TierNVMe], strings.Join(tiers, ", "))
}

// TotalUsers is the traces' number of users: counted by the prescan, else
// the sidecars'.
func TotalUsers(plan *replay.Plan, srcs []replay.Source) int {
	if plan.Scanned {
		return len(plan.Users)
	}
	n := 0
	for _, s := range srcs {
		if s.Meta == nil {
			return 0
		}
		n += int(s.Meta.Counts.Users)
	}
	return n
}

// usersWhat names what a users probe of n replays: its users by class,
// when the prescan knows them.
func usersWhat(plan *replay.Plan, n int) string {
	s := fmt.Sprintf("users=%d", n)
	if len(plan.Users) == 0 {
		return s
	}
	by := replay.UsersByQoS(replay.SelectUsers(plan.Users, n))
	var parts []string
	for q := range schema.QoS(schema.NumQoS) {
		if c := by[q.String()]; c > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(q.String(), "no class"), c))
		}
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// probeResult is what a probe found, in a line.
func probeResult(kind string, p search.Probe) string {
	verdict := results.ProbeVerdict(p)
	if kind == search.KindCapacity {
		// GB/s, decimal, as the search's reason and kvreport's probe table
		// give the same figure: the offered load delivered, bytes over the
		// probe's elapsed time.
		return fmt.Sprintf("offered load %s, %.1f requests/s: %s", replay.FormatRate(p.OfferedBps), p.RequestsPerSecond, verdict)
	}
	return fmt.Sprintf("%.1f requests/s, %.0f tokens/s, p95 ms %s: %s", p.RequestsPerSecond, p.TokensPerSecond, p.P95s(), verdict)
}

// SearchProgress shows a search's progress on W (stderr): on a terminal
// (Live) a live line while a probe runs, rewritten in place; everywhere
// one line per probe when it ends, which says which probe of how many it
// was, the search's time so far, what it probed and what it found; and
// the search's reason at its end, unless Quiet. The clock is Now, so that
// tests run on a fake one.
type SearchProgress struct {
	W      io.Writer
	Live   bool // W is a terminal
	Quiet  bool
	Now    func() time.Time
	Max    int           // the most probes
	Window time.Duration // a probe's --duration

	start time.Time // the search's, at the first probe
	k     int       // the probe running, from 1
	what  string
}

// head says which probe runs, the time so far and what it probes.
func (sp *SearchProgress) head() string {
	return fmt.Sprintf("kvreplay: probe %d of at most %d, %v elapsed, %s", sp.k, sp.Max, sp.Now().Sub(sp.start).Round(time.Second), sp.what)
}

// begin starts probe k+1, of what.
func (sp *SearchProgress) begin(what string) {
	if sp.k == 0 {
		sp.start = sp.Now()
	}
	sp.k++
	sp.what = what
	if sp.Live && !sp.Quiet {
		fmt.Fprint(sp.W, "\r\033[K"+sp.head())
	}
}

// update is the replay's progress hook while a probe runs: nil unless
// the live line is drawn.
func (sp *SearchProgress) update() func(replay.Progress) {
	if !sp.Live || sp.Quiet {
		return nil
	}
	return func(p replay.Progress) {
		offered := float64(p.Bytes) / max(p.Elapsed.Seconds(), 1e-9)
		window := ""
		if sp.Window > 0 {
			window = fmt.Sprintf(" of %v", sp.Window)
		}
		// Every tier's bytes, as the replay counts them so far: named
		// apart from the probe's offered load (Tier-2's when the traces
		// have Tier-2 rows), which its line gives when it ends.
		fmt.Fprintf(sp.W, "\r\033[K%s: %v%s, every tier's offered load %s", sp.head(), p.Elapsed.Round(time.Second), window, replay.FormatRate(offered))
	}
}

// end closes the probe with what it found.
func (sp *SearchProgress) end(found string) {
	if sp.Quiet {
		return
	}
	if sp.Live {
		fmt.Fprint(sp.W, "\r\033[K")
	}
	fmt.Fprintln(sp.W, sp.head()+": "+found)
}
