package sim

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestQoSProfilesDepart: qos_profiles from --config that change a class's
// priority or p95 target make the run say it departs from kv-cache.py,
// whose queue and SLA checks keep the built-in profiles (it said
// nothing); the built-in values, as the shipped config.yaml has them, and
// a change of the other targets, which decide nothing, say nothing.
func TestQoSProfilesDepart(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		said string
	}{
		{"priority and target", "qos_profiles:\n  interactive:\n    target_latency_p95_ms: 10\n    priority: 1\n",
			"config.yaml qos_profiles: interactive priority 1 (built-in 3), interactive p95 target 10 ms (built-in 50 ms): kvtrace queues requests"},
		{"built-in values", "qos_profiles:\n  batch:\n    target_latency_p95_ms: 1000\n    priority: 1\n", ""},
		{"p99 only", "qos_profiles:\n  responsive:\n    target_latency_p99_ms: 300\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if err := LoadYAML(strings.NewReader(tc.yaml), "q.yaml", &cfg); err != nil {
				t.Fatal(err)
			}
			cfg.NumUsers, cfg.Duration, cfg.GPUMemGB, cfg.GenerationMode = 5, 5*time.Second, 0, "none"
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), &cfg, func(*schema.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			deps := strings.Join(res.Kvbench.Departures, "\n")
			if tc.said == "" {
				if deps != "" {
					t.Errorf("departures %q, want none", deps)
				}
				return
			}
			if !strings.Contains(deps, DeparturePrefix+tc.said) {
				t.Errorf("departures %q, want one saying %q", deps, tc.said)
			}
		})
	}
}
