package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
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
// labels). A run stopped early returns its result with the error, as does
// one that failed before it started, making its tiers (replay.Unclocked);
// one refused (the input's error: it does not fit, a tier this machine
// does not have), no result.
func Replay(ctx context.Context, env *Env, cfg *replay.Config, plan *replay.Plan, srcs []replay.Source, opts Options,
	ready func() error, progress func(replay.Progress)) (*schema.Result, error) {
	// A search plans the whole trace (a capacity search) or all its users
	// (a users search) once; each probe replays its own window's plan and
	// its sample's (a closed loop of --users N), made here.
	plan, err := replay.WindowPlan(ctx, cfg, srcs, plan)
	if err != nil {
		return nil, err
	}
	if plan, err = replay.SamplePlan(ctx, cfg, srcs, plan); err != nil {
		return nil, err
	}
	if err := probeFits(cfg, plan, &opts); err != nil {
		return nil, err
	}
	tiers, err := Build(ctx, env, cfg, plan, opts)
	if cli.ExitCode(err) == cli.ExitUsage {
		return nil, err // refused: the input asks what this machine cannot give
	}
	if err != nil {
		// A failure (a full disk or an I/O error preallocating the extent
		// file, a signal): a result that says so, as a run stopped later.
		res, err := replay.Unclocked(cfg, plan, srcs, "making the tiers", err)
		describe(res, &Tiers{}, srcs)
		return res, err
	}
	defer tiers.Close()
	var cpu cpuPressure
	start := func() error {
		if ready != nil {
			if err := ready(); err != nil {
				return err
			}
		}
		cpu.start()
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
	cpu.end(res)
	tiers.Close()
	describe(res, tiers, srcs)
	return res, runErr
}

// cpuPressureWarn is the share of a run with some task waiting for a
// CPU from which its result warns that its figures may be the CPU's: a
// replay alone on the idle 2-core development VM showed 11 % (its own
// workers), one that stalled beside other work 60-93 %.
const cpuPressureWarn = 0.25

// cpuPressure measures the share of the measured run during which some
// task on the machine waited for a CPU (host.CPUStall), from the clock's
// start to the replay's end.
type cpuPressure struct {
	at    time.Time
	stall time.Duration
	ok    bool
}

func (c *cpuPressure) start() {
	c.at = time.Now()
	c.stall, c.ok = host.CPUStall()
}

// end records the share in res, and warns where it reaches
// cpuPressureWarn.
func (c *cpuPressure) end(res *schema.Result) {
	stall, ok := host.CPUStall()
	wall := time.Since(c.at)
	if !c.ok || !ok || wall <= 0 || stall < c.stall {
		return
	}
	share := min(1, float64(stall-c.stall)/float64(wall))
	res.Replay.CPUPressure = &share
	if w := cpuPressureWarning(share); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
}

// cpuPressureWarning is the result's warning of a run during share of
// which some task waited for a CPU, "" below cpuPressureWarn.
func cpuPressureWarning(share float64) string {
	if share < cpuPressureWarn {
		return ""
	}
	return fmt.Sprintf("CPU PRESSURE: for %.0f %% of the run some task on this machine waited for a CPU (/proc/pressure/cpu; replay.cpu_pressure): "+
		"kvreplay, or what ran beside it, was short of CPUs, so its lag and latencies may be the CPU's and not the storage's; rerun on a quieter machine, or with fewer workers beside it", 100*share)
}

// describe adds to res what setup knows of the run: the host's facts,
// the peak RSS, the tiers' paths and warnings, the traces' sidecars.
func describe(res *schema.Result, tiers *Tiers, srcs []replay.Source) {
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
}

// ErrProbeNotRun is the error of a search's probe that Replay did not run:
// it does not fit this machine.
var ErrProbeNotRun = errors.New("not run")

// probeFits checks a search's probe (opts.Probe) as CheckFits checks a
// replay, with the probe's own plan (its window, its users), before any
// I/O: a probe that does not fit is not run, rather than run until the
// disk is full (a probe that hit ENOSPC is no measurement, and a full
// disk fails what else writes there) or refused by Build's checks as the
// input's error in the middle of a search. Its error is the search's
// failure (exit 1), not the input's: the probes before it ran. Where the
// search's plan fits (not opts.MayFill), the probe's is a users sample
// that needs more than every user's (replay.SamplePlan): the objects the
// users left out wrote, which its users read, written before its clock.
func probeFits(cfg *replay.Config, plan *replay.Plan, opts *Options) error {
	if !opts.Probe || !plan.Scanned {
		return nil
	}
	a := searchAdvice(cfg, plan, opts)
	if a.Runs {
		return nil
	}
	fix := "--fit, or a smaller --size-scale, makes every probe fit"
	if !opts.MayFill {
		fix = "the search's plan fits, but this probe's needs more; a smaller --size-scale makes it fit"
		if cfg.Users > 0 {
			fix = fmt.Sprintf("the search's plan fits, but this probe's sample of %d users needs more: the objects that users left out wrote and its users read are written before its clock; a smaller --size-scale makes it fit", cfg.Users)
		}
		if len(a.Options) > 0 {
			fix += " (" + a.Options[0].Option + " for this probe)"
		}
	}
	return fmt.Errorf("%w: the probe does not fit this machine: %s: %s", ErrProbeNotRun, strings.Join(a.Blockers, "; "), fix)
}
