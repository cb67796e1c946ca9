package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/schema"
)

// defaultProbeWindow is a search probe's --duration when none is given.
const defaultProbeWindow = 30 * time.Second

// checkSearch validates the --search options and sets what a search
// implies: a users search is closed-loop.
func checkSearch(o *options) []error {
	var errs []error
	switch o.search {
	case "":
		return nil
	case search.KindUsers:
		o.cfg.ClosedLoop = true
		if o.cfg.Users != 0 {
			errs = append(errs, fmt.Errorf("--users %d: --search users chooses the users itself", o.cfg.Users))
		}
	case search.KindCapacity:
		if o.cfg.ClosedLoop {
			errs = append(errs, errors.New("--search capacity raises an open loop's --speed: drop --closed-loop"))
		}
		if o.speedGiven && o.cfg.Speed == 0 {
			errs = append(errs, errors.New("--speed max: --search capacity doubles --speed from where it starts: give the speed to start from (default: 0.25, a quarter of the trace's pace)"))
		}
	default:
		errs = append(errs, fmt.Errorf("--search %s: want users or capacity", o.search))
	}
	if o.searchProbes < 3 || o.searchProbes > 100 {
		errs = append(errs, fmt.Errorf("--search-probes %d: must be between 3 and 100", o.searchProbes))
	}
	if o.searchRepeat < 1 || o.searchRepeat > 10 {
		errs = append(errs, fmt.Errorf("--search-repeats %d: must be between 1 and 10", o.searchRepeat))
	}
	if o.cfg.Duration == 0 {
		o.cfg.Duration = defaultProbeWindow
	}
	return errs
}

// runSearch runs a search: each probe a replay of --duration on fresh
// backends, its progress on stderr; the search document goes where a
// result would.
func runSearch(ctx context.Context, o *options, plan *replay.Plan, srcs []replay.Source, args []string, toStdout bool, stdout, stderr io.Writer) error {
	once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
		res, err := replayOnce(ctx, o, cfg, plan, srcs, args, progress, stderr)
		if ctx.Err() != nil {
			// A signal stopped the search: its probe is no result.
			return nil, cmp.Or(err, ctx.Err())
		}
		return res, err
	}
	prog := &searchProgress{w: stderr, live: cli.IsTerminal(stderr), quiet: o.quiet, now: time.Now, max: o.searchProbes, window: o.cfg.Duration}
	return searchWith(o, plan, totalUsers(plan, srcs), once, prog, args, toStdout, stdout)
}

// replayFunc replays the traces once with cfg, drawing progress when set;
// a run stopped early returns its result, marked incomplete, with the
// error, and one that did not run (or that a signal stopped) no result.
type replayFunc func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error)

// searchWith runs the search o asks for with the traces' total users,
// each probe a call of once, and writes the search document. A probe that
// fails to run or is not a measurement stops the search: the document is
// written, marked not done with its answer a lower bound, and the error
// returned (exit status 1).
func searchWith(o *options, plan *replay.Plan, total int, once replayFunc, prog *searchProgress, args []string, toStdout bool, stdout io.Writer) error {
	var (
		traces   = plan.Traces
		warnings []string
	)
	probe := func(n int, speed float64) (search.Probe, error) {
		cfg := o.cfg
		what := fmt.Sprintf("speed=%gx", speed)
		if o.search == search.KindUsers {
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
		if len(warnings) == 0 {
			warnings = res.Warnings
		}
		p := search.Summarize(o.search, res)
		prog.end(probeResult(o.search, p))
		return p, nil
	}
	var (
		doc *search.Document
		err error
	)
	if o.search == search.KindUsers {
		if total <= 0 {
			return cli.Input(errors.New("--search users: the trace's users are unknown: give a trace file with a User column (kvtrace's), which kvreplay reads once before the search"))
		}
		doc, err = search.Users(search.UsersOptions{Total: total, MaxProbes: o.searchProbes, Repeats: o.searchRepeat}, probe)
	} else {
		start := 0.0 // search.DefaultCapacityStart
		if o.speedGiven {
			start = o.cfg.Speed
		}
		doc, err = search.Capacity(search.CapacityOptions{Start: start, MaxProbes: o.searchProbes}, probe)
	}
	doc.Format, doc.FormatVersion = schema.SearchFormat, schema.SearchFormatVersion
	doc.Tool, doc.ToolVersion = "kvreplay", cli.Version()
	doc.CommandLine = append([]string{"kvreplay"}, args...)
	doc.Label, doc.System = o.label, o.system
	doc.WindowS = o.cfg.Duration.Seconds()
	doc.Host = host.Facts()
	doc.Traces = traces
	doc.Config = configJSON(o)
	doc.Warnings = warnings
	if werr := writeJSON(o, doc, toStdout, stdout); werr != nil {
		return werr
	}
	if !o.quiet {
		fmt.Fprintln(prog.w, "kvreplay: search: "+doc.Reason)
	}
	if err != nil {
		return fmt.Errorf("search incomplete: %w", err)
	}
	return nil
}

// totalUsers is the traces' number of users: counted by the prescan, else
// the sidecars'.
func totalUsers(plan *replay.Plan, srcs []replay.Source) int {
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
	verdict := "PASS: " + p.Reason
	switch {
	case p.NotMeasured != "":
		verdict = "NOT A MEASUREMENT: " + p.NotMeasured
	case !p.Pass:
		verdict = "FAIL: " + p.Reason
	}
	if kind == search.KindCapacity {
		return fmt.Sprintf("%s/s, %.1f requests/s: %s", cli.FormatBytes(int64(p.BandwidthBps)), p.RequestsPerSecond, verdict)
	}
	return fmt.Sprintf("%.1f requests/s, %.0f tokens/s, p95 ms %s: %s", p.RequestsPerSecond, p.TokensPerSecond, p.P95s(), verdict)
}

// searchProgress shows a search's progress on stderr: on a terminal a
// live line while a probe runs, rewritten in place; everywhere one line
// per probe when it ends, which says which probe of how many it was, the
// search's time so far, what it probed and what it found. The clock is
// now, so that tests run on a fake one.
type searchProgress struct {
	w      io.Writer
	live   bool // w is a terminal
	quiet  bool
	now    func() time.Time
	max    int           // the most probes
	window time.Duration // a probe's --duration

	start time.Time // the search's, at the first probe
	k     int       // the probe running, from 1
	what  string
}

// head says which probe runs, the time so far and what it probes.
func (sp *searchProgress) head() string {
	return fmt.Sprintf("kvreplay: probe %d of at most %d, %v elapsed, %s", sp.k, sp.max, sp.now().Sub(sp.start).Round(time.Second), sp.what)
}

// begin starts probe k+1, of what.
func (sp *searchProgress) begin(what string) {
	if sp.k == 0 {
		sp.start = sp.now()
	}
	sp.k++
	sp.what = what
	if sp.live && !sp.quiet {
		fmt.Fprint(sp.w, "\r\033[K"+sp.head())
	}
}

// update is the replay's progress hook while a probe runs: nil unless
// the live line is drawn.
func (sp *searchProgress) update() func(replay.Progress) {
	if !sp.live || sp.quiet {
		return nil
	}
	return func(p replay.Progress) {
		mbps := float64(p.Bytes) / 1e6 / max(p.Elapsed.Seconds(), 1e-9)
		window := ""
		if sp.window > 0 {
			window = fmt.Sprintf(" of %v", sp.window)
		}
		fmt.Fprintf(sp.w, "\r\033[K%s: %v%s, %.0f MB/s", sp.head(), p.Elapsed.Round(time.Second), window, mbps)
	}
}

// end closes the probe with what it found.
func (sp *searchProgress) end(found string) {
	if sp.quiet {
		return
	}
	if sp.live {
		fmt.Fprint(sp.w, "\r\033[K")
	}
	fmt.Fprintln(sp.w, sp.head()+": "+found)
}
