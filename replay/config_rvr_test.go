package replay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestSLOAtSpeedMax: --slo-ms of an open loop at --speed max is refused:
// there a request's latency measures the trace's backlog, which is why
// the result's QoS SLA is "not measured", and an attainment of the same
// latencies was written beside that as if it were one (0.24 of the
// interactive requests within 50 ms, with storage_health PASS). At a pace,
// or in a closed loop at any speed, it stands.
func TestSLOAtSpeedMax(t *testing.T) {
	slo := results.SLO{All: 500 * time.Millisecond}
	for _, tc := range []struct {
		speed  float64
		closed bool
		ok     bool
	}{
		{0, false, false},
		{1, false, true},
		{4, false, true},
		{0, true, true},
	} {
		cfg := replay.DefaultConfig()
		cfg.SLO, cfg.Speed, cfg.ClosedLoop = slo, tc.speed, tc.closed
		err := cfg.Validate()
		if (err == nil) != tc.ok || (err != nil && !strings.HasPrefix(err.Error(), "--slo-ms with --speed max: ")) {
			t.Errorf("--speed %g, closed loop %v: %v; want refused: %v", tc.speed, tc.closed, err, !tc.ok)
		}
	}
	cfg := replay.DefaultConfig()
	cfg.Speed = 0
	if err := cfg.Validate(); err != nil {
		t.Errorf("--speed max without --slo-ms: %v", err)
	}
}

// TestMemoryBlockerNamesBuffers: a replay whose memory is mostly its I/O
// buffers (--queue-depth 32 x --block-size 1 GiB: 32 GiB for objects of
// a few MiB) names them with the flags that size them, since no
// --size-scale makes it fit; the blocker called all of it "the engine's
// state", and the refusal named no flag to change.
func TestMemoryBlockerNamesBuffers(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
	cfg.BlockSize, cfg.Speed = 1<<30, 0
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{memTrace(t, windowTrace())})
	if err != nil {
		t.Fatal(err)
	}
	a := replay.Advise(plan, &cfg, replay.Sizing{}, replay.Machine{MemAvailable: 16 << 30, MemTotal: 16 << 30, DiskFree: 1 << 40})
	b := strings.Join(a.Blockers, "\n")
	if a.Runs || !strings.Contains(b, "the I/O buffers 32.00 GiB (--queue-depth 32 x --block-size 1.00 GiB), the engine's state 312.00 MiB for 20 objects") {
		t.Errorf("blockers:\n%s", b)
	}
}
