package setup

import (
	"context"
	"encoding/json"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// Clocked is the optional capability of a backend that tells the work of
// the replay's measured window from its setup's (an S3 tier's requests,
// which a user prices and judges a run by): StartClock is called once
// the untimed preparation is done, as the clock starts; the window ends
// when the backend is closed.
type Clocked interface {
	StartClock()
}

// Replay makes the tiers of cfg (Build), replays srcs on them (calling
// ready once the tiers are made and the cold objects written, before the
// clock starts: a start time to wait for; nil: none), closes
// them, and returns the result with what setup knows of the run: the
// host's facts, the tier paths, the peak RSS, the tiers' warnings and the
// traces' sidecars. The tiers are closed before they are described, so
// that what a tier reports of its requests counts its clean-up (an S3
// tier's deletes and listings at Close), and what the clean-up could not
// remove is among the warnings. The caller adds its identity (tool, command line,
// labels). A run stopped early returns its result with the error; one
// that did not run, no result.
func Replay(ctx context.Context, env *Env, cfg *replay.Config, plan *replay.Plan, srcs []replay.Source, opts Options,
	ready func() error, progress func(replay.Progress)) (*schema.Result, error) {
	// A closed loop of --users N replays its sample's plan (the users
	// search plans the whole trace once, and each probe its sample here).
	plan, err := replay.SamplePlan(ctx, cfg, srcs, plan)
	if err != nil {
		return nil, err
	}
	tiers, err := Build(ctx, env, cfg, plan, opts)
	if err != nil {
		return nil, err
	}
	defer tiers.Close()
	start := func() error {
		if ready != nil {
			if err := ready(); err != nil {
				return err
			}
		}
		for _, b := range tiers.Backends {
			if c, ok := b.(Clocked); ok {
				c.StartClock()
			}
		}
		return nil
	}
	res, runErr := replay.Run(ctx, cfg, plan, srcs, tiers.Backends, replay.Hooks{Progress: progress, Movers: tiers.Movers, Ready: start})
	if res == nil {
		return nil, runErr
	}
	tiers.Close()
	res.Host = host.Facts()
	res.Replay.PeakRSSBytes = host.PeakRSS()
	tiers.Describe(res)
	res.Warnings = append(res.Warnings, tiers.Warnings...)
	for i := range res.Traces {
		if i < len(srcs) && srcs[i].Meta != nil {
			meta, _ := json.Marshal(srcs[i].Meta)
			res.Traces[i].Meta = schema.SnakeCaseKeys(meta)
		}
	}
	return res, runErr
}
