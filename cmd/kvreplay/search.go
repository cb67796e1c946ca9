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
	"github.com/kvbench/kvbench/replay/setup"
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
		if !o.cfg.Prescan {
			errs = append(errs, errors.New("--search users --no-prescan: a users search reads the traces once first, to sample each probe's users by QoS class "+
				"(without it a probe of n users replays the first n to appear, and measures which classes come first): drop --no-prescan"))
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

// searchFits is setup.CheckFits for a search. A plan whose only blocker
// is the NVMe tier's space (the whole trace's peak, or all its users',
// beyond what --dir has free) is a warning, not a refusal: a search's
// probes replay windows of the trace, which grow with a capacity search's
// --speed and a users search's users, and the probe that fills the disk
// stops the search, not done, its answer what the probes before it
// measured (exit 1). Memory is refused as for a replay.
func searchFits(o *options, plan *replay.Plan) error {
	err := setup.CheckFits(&o.cfg, plan, &o.tiers)
	if err == nil {
		return nil
	}
	for _, b := range setup.Advise(&o.cfg, plan, &o.tiers).Blockers {
		if !strings.HasPrefix(b, "disk: ") {
			return err
		}
	}
	w := fmt.Sprintf("--search %s: the last probes may not fit: %v; a probe that fills the disk stops the search (done: false, exit 1), "+
		"its answer what the probes before it measured", o.search, err)
	o.warnings = append(o.warnings, w)
	o.tiers.MayFill = true
	if o.tiers.Stderr != nil && !o.quiet {
		fmt.Fprintln(o.tiers.Stderr, "kvreplay: warning: "+w)
	}
	return nil
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
	prog := &setup.SearchProgress{W: stderr, Live: cli.IsTerminal(stderr), Quiet: o.quiet, Now: time.Now, Max: o.searchProbes, Window: o.cfg.Duration}
	return searchWith(o, plan, setup.TotalUsers(plan, srcs), once, prog, args, toStdout, stdout)
}

// searchWith runs the search o asks for (setup.Search) and writes its
// document, with kvreplay's identity, where a result would go. A search
// that a probe stopped is written, then its error returned (exit 1).
func searchWith(o *options, plan *replay.Plan, total int, once setup.ReplayFunc, prog *setup.SearchProgress, args []string, toStdout bool, stdout io.Writer) error {
	so := setup.SearchOptions{Kind: o.search, Probes: o.searchProbes, Repeats: o.searchRepeat, Config: o.cfg, SpeedGiven: o.speedGiven}
	doc, err := setup.Search(so, plan, total, once, prog)
	if doc == nil {
		return err
	}
	doc.Tool, doc.ToolVersion = "kvreplay", cli.Version()
	doc.CommandLine = append([]string{"kvreplay"}, args...)
	doc.Label, doc.System = o.label, o.system
	doc.Host = host.Facts()
	doc.Config = setup.ConfigJSON(&o.cfg, &o.tiers)
	if werr := writeJSON(o, doc, toStdout, stdout); werr != nil {
		return werr
	}
	return err
}
