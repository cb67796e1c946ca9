package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/schema"
)

// Planning a replay for this machine (design section 5): before any I/O,
// the prescan says what the replay needs and the machine what it has.
// --plan prints both with the options that make the replay fit; --fit
// applies them and records why in the result; a replay that cannot start
// here stops with the same figures and options (replay/setup's Fitting,
// over replay.Advise, is the one computation of all three).

// fitting is what --plan and --fit ask.
type fitting struct {
	plan   bool          // --plan: print the plan and exit
	fit    bool          // --fit: apply the plan's options, then replay
	format string        // --format of --plan: text or json
	time   time.Duration // --fit-time: the longest replay --fit keeps at the trace's pace
	result *schema.Fit   // what --fit applied, for the result
}

// defaultFitTime is --fit-time's default: a replay that --fit applies
// takes at most two minutes at the trace's pace, so that a trace
// simulated for longer (the MLPerf runs' 600 s) gives an answer on the
// machine at hand in minutes; --fit-time 0 replays all of it.
const defaultFitTime = 2 * time.Minute

// checkFitting checks --plan, --fit, --fit-time and --format.
func checkFitting(o *options, formatGiven, timeGiven bool) []error {
	var errs []error
	f := &o.fitting
	switch f.format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--format %s: want text or json", f.format))
	}
	if formatGiven && !f.plan {
		errs = append(errs, fmt.Errorf("--format %s: the format of --plan's output: add --plan (a replay's result is always JSON)", f.format))
	}
	if f.plan && f.fit {
		errs = append(errs, errors.New("--plan and --fit: --plan prints the plan and replays nothing; --fit applies it and replays: give one"))
	}
	if f.plan && o.output != "" && o.output != "-" {
		errs = append(errs, fmt.Errorf("-o %s: --plan prints its plan on stdout and writes no result", o.output))
	}
	if timeGiven && !f.plan && !f.fit {
		errs = append(errs, fmt.Errorf("--fit-time %s: bounds what --fit applies: add --fit (or --duration to bound a run yourself)", f.time))
	}
	if f.time < 0 {
		errs = append(errs, fmt.Errorf("--fit-time %s: must not be negative (0: no bound)", f.time))
	}
	if f.plan && o.search != "" {
		errs = append(errs, fmt.Errorf("--plan and --search %s: give one", o.search))
	}
	return errs
}

// fitter is what --fit-time and --search say of the plan: a capacity
// search speeds its probes up, so their --duration windows reach further
// than the configured speed's, and its plan covers the whole trace.
func (o *options) fitter() setup.Fitting {
	return setup.Fitting{Time: o.fitting.time, WholeTrace: o.search == search.KindCapacity}
}

// runPlan prints the plan of the replay o describes (--plan): what it
// needs, what this machine has, and the options that make it fit. It
// reads the traces and makes no backend.
func runPlan(ctx context.Context, o *options, stdout io.Writer) error {
	_, plan, err := prescan(ctx, o)
	if err != nil {
		return err
	}
	return o.fitter().WritePlan(stdout, o.fitting.format, o.traces, &o.cfg, plan, &o.tiers)
}
