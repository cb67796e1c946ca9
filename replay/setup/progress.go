package setup

import (
	"fmt"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/results"
)

// ProgressView is what the progress line knows of a run beside its
// Progress: the rows it can do and the window that bounds it.
type ProgressView struct {
	// total is the rows the run does when nothing stops it: the plan's
	// (this rank's), less the setup rows run before the clock, which the
	// run's RowsDone never counts; 0 when unknown (a pipe nothing sized, or a closed
	// loop of a sample of the users the plan did not count: a search's
	// probe).
	total int64
	// window is --duration: nothing is released after it (0: none).
	window time.Duration
}

// NewProgressView is the view of a run of cfg with plan.
func NewProgressView(cfg *replay.Config, plan *replay.Plan) ProgressView {
	v := ProgressView{total: plan.Rows, window: cfg.Duration}
	if cfg.ClosedLoop && cfg.Users > 0 {
		v.total = 0
		if plan.UserLimit == cfg.Users {
			v.total = plan.UserRows
		}
	}
	if v.total > 0 {
		v.total = max(v.total-plan.SetupRows, 0)
	}
	return v
}

// ProgressLine is the live progress line kvreplay rewrites on a terminal:
// the rows done (of how many, when known), the bytes moved per second so
// far (GB/s, decimal, as every kvbench bandwidth), the lag, and an
// estimate of the time left. The estimate extrapolates the rows done, and
// never passes the end of the --duration window, after which nothing is
// released: "12s of the 15s window left", then "window closed: finishing
// released rows". The tool's name leads the line, so it is told from
// kvtrace's in a pipeline.
func ProgressLine(p replay.Progress, v ProgressView) string {
	gbps := float64(p.Bytes) / results.GB / max(p.Elapsed.Seconds(), 1e-9)
	tail := fmt.Sprintf("%.3f GB/s, lag %v", gbps, p.Lag.Round(time.Microsecond))
	var eta string
	var left time.Duration = -1 // the rows' estimate; -1 unknown
	done := p.RowsDone
	if v.total > 0 {
		done = min(done, v.total)
		if done > 0 && p.Elapsed > 0 {
			left = time.Duration(float64(p.Elapsed) * float64(v.total-done) / float64(done))
		}
	}
	switch w := v.window - p.Elapsed; {
	case v.window > 0 && w <= 0:
		eta = "window closed: finishing released rows"
	case v.window > 0 && (left < 0 || w < left):
		eta = fmt.Sprintf("%v of the %v window left", w.Round(time.Second), v.window)
	case left >= 0:
		eta = "ETA " + left.Round(time.Second).String()
	case v.total > 0:
		eta = "ETA -"
	}
	line := fmt.Sprintf("kvreplay: %s rows done, %s", cli.FormatCount(done), tail)
	if v.total > 0 {
		line = fmt.Sprintf("kvreplay: %5.1f%% (%s of %s rows), %s", 100*float64(done)/float64(v.total),
			cli.FormatCount(done), cli.FormatCount(v.total), tail)
	}
	if eta != "" {
		line += ", " + eta
	}
	return line
}
