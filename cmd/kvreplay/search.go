package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
// backends, its line on stderr; the search document goes where a result
// would.
func runSearch(ctx context.Context, o *options, plan *replay.Plan, srcs []replay.Source, args []string, toStdout bool, stdout, stderr io.Writer) error {
	var (
		traces   = plan.Traces
		warnings []string
	)
	probe := func(n int, speed float64) (search.Probe, error) {
		cfg := o.cfg
		if o.search == search.KindUsers {
			cfg.Users = n
		} else {
			cfg.Speed = speed
		}
		res, err := replayOnce(ctx, o, &cfg, plan, srcs, args, false, stderr)
		if res == nil || ctx.Err() != nil {
			if err == nil {
				err = ctx.Err()
			}
			return search.Probe{}, err
		}
		if len(traces) == 0 {
			traces = res.Traces
		}
		if len(warnings) == 0 {
			warnings = res.Warnings
		}
		p := search.Summarize(res)
		if !o.quiet {
			fmt.Fprintln(stderr, probeLine(o.search, n, speed, p))
		}
		return p, nil
	}
	var (
		doc *search.Document
		err error
	)
	if o.search == search.KindUsers {
		total := totalUsers(plan, srcs)
		if total <= 0 {
			return cli.Input(errors.New("--search users: the trace's users are unknown: give a trace file with a User column (kvtrace's), which kvreplay reads once before the search"))
		}
		doc, err = search.Users(search.UsersOptions{Total: total, MaxProbes: o.searchProbes, Repeats: o.searchRepeat}, probe)
	} else {
		// From --speed (max, 0, starts at the trace's pace).
		doc, err = search.Capacity(search.CapacityOptions{Start: o.cfg.Speed, MaxProbes: o.searchProbes}, probe)
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
	if err != nil {
		doc.Done = false
		doc.Reason = fmt.Sprintf("stopped: %v (after %d probes)", err, len(doc.Probes))
	}
	if werr := writeJSON(o, doc, toStdout, stdout); werr != nil {
		return werr
	}
	if !o.quiet {
		fmt.Fprintln(stderr, "kvreplay: search: "+doc.Reason)
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
		return len(plan.UserRequests)
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

// probeLine is a probe's line on stderr.
func probeLine(kind string, n int, speed float64, p search.Probe) string {
	if kind == search.KindCapacity {
		return fmt.Sprintf("kvreplay: probe --speed %g: %s/s, %.1f requests/s, %s", speed, cli.FormatBytes(int64(p.BandwidthBps)), p.RequestsPerSecond, p.Health)
	}
	verdict := "PASS"
	if !p.Pass {
		verdict = "FAIL (" + p.Reason + ")"
	}
	return fmt.Sprintf("kvreplay: probe %d users: %.1f requests/s, %.0f tokens/s, p95 %v ms: %s", n, p.RequestsPerSecond, p.TokensPerSecond, p.P95s(), verdict)
}
