package main

import (
	"context"
	"io"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/replay/setup"
)

// Planning a replay for this machine (design section 5): before any I/O,
// the prescan says what the replay needs and the machine what it has.
// --plan prints both with the options that make the replay fit; --fit
// applies them and records why in the result; a replay that cannot start
// here stops with the same figures and options (replay/setup's Fitting,
// over replay.Advise, is the one computation of all three).

// fitter is what --fit-time and --search say of the plan: a capacity
// search speeds its probes up, so their --duration windows reach further
// than the configured speed's, and its plan covers the whole trace.
func (o *options) fitter() setup.Fitting {
	f := o.fitting
	f.WholeTrace = o.search.Kind == search.KindCapacity
	return f
}

// runPlan prints the plan of the replay o describes (--plan): what it
// needs, what this machine has, and the options that make it fit. It
// reads the traces and makes no backend.
func runPlan(ctx context.Context, o *options, stdout io.Writer) error {
	srcs, plan, err := prescan(ctx, o)
	if err != nil {
		return err
	}
	return o.fitter().WritePlan(ctx, stdout, o.fitting.Format, o.traces, srcs, &o.cfg, plan, &o.tiers)
}
