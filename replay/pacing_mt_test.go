package replay_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestPacedRowsNotEarly: at --speed 1 no row is issued before its time
// in the trace (rows 1 ms apart, operations of 0.3 ms whose completions
// wake the scheduler between them): a row released early would lower
// the run's lag and its latency from schedule, and make the system look
// better than it is. (A mutation-testing gap: releasing rows up to 1 ms
// early went unnoticed.)
func TestPacedRowsNotEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := writes(20, time.Millisecond)
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed = 1
		rb := fault.Record(fault.Delay(newRAM(t, 16<<20), 300*time.Microsecond))
		if _, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb}); err != nil {
			t.Fatal(err)
		}
		first := map[string]time.Time{}
		for _, c := range rb.Log() {
			if c.Op&fault.OpWrite == 0 {
				continue
			}
			if s, ok := first[c.Key]; !ok || c.Start.Before(s) {
				first[c.Key] = c.Start
			}
		}
		if len(first) != len(recs) {
			t.Fatalf("test setup: %d objects written, want %d", len(first), len(recs))
		}
		// The first row is issued at the clock's start: every other row
		// comes at least its time in the trace after it. Keys are the
		// tier's ("1_" for Tier-1) and the row's.
		base := first["1_k0"]
		if base.IsZero() {
			t.Fatalf("test setup: no write of 1_k0 among %d objects", len(first))
		}
		for i := range recs {
			if at := first[fmt.Sprint("1_k", i)].Sub(base); at < time.Duration(i)*time.Millisecond {
				t.Errorf("row %d (due at %v) written at %v", i, time.Duration(i)*time.Millisecond, at)
			}
		}
	})
}
