package replay_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/results"
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
