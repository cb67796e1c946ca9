package main

import (
	"fmt"
	"time"

	"github.com/kvbench/kvbench/internal/results"
	"github.com/kvbench/kvbench/replay"
)

// progressLine is the live progress line kvreplay rewrites on a terminal:
// percent done and an estimate of the time left when the total is known
// (total is the plan's rows; 0 for a pipe nothing sized), the bytes moved
// per second so far (GB/s, decimal, as every kvbench bandwidth) and the
// lag. The tool's name leads it, so it is told from kvtrace's in a
// pipeline.
func progressLine(p replay.Progress, total int64) string {
	gbps := float64(p.Bytes) / results.GB / max(p.Elapsed.Seconds(), 1e-9)
	tail := fmt.Sprintf("%.3f GB/s, lag %v", gbps, p.Lag.Round(time.Microsecond))
	if total <= 0 {
		return fmt.Sprintf("kvreplay: %d rows done, %s", p.RowsDone, tail)
	}
	done := min(p.RowsDone, total)
	eta := "ETA -"
	if done > 0 && p.Elapsed > 0 {
		left := time.Duration(float64(p.Elapsed) * float64(total-done) / float64(done))
		eta = "ETA " + left.Round(time.Second).String()
	}
	return fmt.Sprintf("kvreplay: %5.1f%% (%d of %d rows), %s, %s", 100*float64(done)/float64(total), done, total, tail, eta)
}
