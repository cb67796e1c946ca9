package main

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
)

// TestPerformanceProfileNote: --performance-profile changes no trace but
// picks the storage_health criteria of --output's statistics (as it does
// in kv-cache.py's trace mode: cache.py _evaluate_storage_performance),
// and kvtrace's note says so. It said "real-I/O only in the reference",
// telling a user the option did nothing while it changed the criteria.
func TestPerformanceProfileNote(t *testing.T) {
	for _, tc := range []struct {
		profile, criterion string
	}{
		{"latency", "Cache Hit Rate > 30%"},
		{"throughput", "Storage KV Read Bandwidth"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			o, err := parse(t, "--performance-profile", tc.profile, "--num-users", "10", "--duration", "10",
				"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "--generation-mode", "none")
			if err != nil {
				t.Fatal(err)
			}
			res, err := sim.Run(context.Background(), &o.Config, func(*schema.Record) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range res.Summary.CacheStats.StorageHealth.Criteria {
				names = append(names, c.Name)
			}
			if !strings.Contains(strings.Join(names, "\n"), tc.criterion) {
				t.Errorf("criteria %q, want %q among them", names, tc.criterion)
			}
			note := strings.Join(o.Config.NoEffect, "\n")
			if tc.profile == "latency" {
				return // the default, given: noted the same way
			}
			if !strings.Contains(note, "--performance-profile: no effect on a trace: it picks the storage_health criteria of --output's statistics") ||
				strings.Contains(note, "--performance-profile: no effect on a trace (real-I/O only") {
				t.Errorf("note %q: want it to say the option picks --output's storage_health criteria", note)
			}
		})
	}
}
