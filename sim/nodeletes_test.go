package sim

import (
	"context"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestNoDeletesPeakOnlyAsked: the peaks of the trace without its Delete
// rows (the mlperf dialect's sidecar) keep each deleted object until its
// key is written again, memory that grew with the run under a bounded
// tier (kvtrace at 2400 s, 150 users, a 100 GB Tier-2: 236 MB of RSS, 127
// MB without): only a run that asks for them keeps it, and the trace is
// the same either way.
func TestNoDeletesPeakOnlyAsked(t *testing.T) {
	run := func(asked bool) (*Result, int) {
		cfg := DefaultConfig()
		cfg.NumUsers, cfg.Duration, cfg.Seed, cfg.GenerationMode = 20, 20*time.Second, 7, "none"
		cfg.GPUMemGB, cfg.CPUMemGB, cfg.StorageCapacityGB = 0, 1, 2
		cfg.NoDeletesPeak = asked
		rows := 0
		res, err := Run(context.Background(), &cfg, func(*schema.Record) error { rows++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return res, rows
	}
	res, rows := run(false)
	if res.Kvbench.Deletes == 0 {
		t.Fatal("the run deleted nothing: the test needs a bounded Tier-2 that evicts")
	}
	if res.Kvbench.PeakLiveBytesNoDeletes != nil {
		t.Errorf("not asked: peaks without deletes %v", res.Kvbench.PeakLiveBytesNoDeletes)
	}
	resA, rowsA := run(true)
	if rowsA != rows {
		t.Errorf("asked: %d rows, %d not asked", rowsA, rows)
	}
	if got, peak := resA.Kvbench.PeakLiveBytesNoDeletes["Tier-2"], resA.Kvbench.PeakLiveBytes["Tier-2"]; got <= peak {
		t.Errorf("asked: Tier-2's peak without deletes %d, want more than its peak %d", got, peak)
	}
}
