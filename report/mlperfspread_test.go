package report

import (
	"strings"
	"testing"
)

// TestMLPerfTrialSpread: kvreport --aggregate mlperf of 3 trials whose
// summed read bandwidths were 1.342, 0.882 and 1.089 GB/s (CV 21 %)
// printed their mean with no warning, while kvreport flags trials whose
// figures vary by more than 10 % (VARIES OVER TRIALS). The aggregation
// says it, with the same bound and words, headline figures first, by
// their names in the summary.
func TestMLPerfTrialSpread(t *testing.T) {
	steady := func(read float64) ruleTrial {
		return ruleTrial{read: read, write: 0.2, storTP: 1000, readP95: 5, writeP95: 9, found: 2}
	}
	for _, tt := range []struct {
		name   string
		trials []ruleTrial
		want   []string // "" for no warning
	}{
		// The bound is kvbench's: neither Rules.md 6.3 nor mlpstorage's
		// aggregation bounds the trials' spread, and the warning said
		// "MLPerf Storage scores its headline over trials" with no word
		// of whose bound it was.
		{"F11", []ruleTrial{steady(1.342), steady(0.882), steady(1.089)},
			[]string{"VARIES OVER TRIALS: 1 metrics vary by more than 10% (CV) over 3 trials (headline aggregated_read_bandwidth_gbps 0.21)",
				"MLPerf Storage scores its headline over trials",
				"the 10% is kvbench's bound: MLPerf Storage's rules (6.3.4) and mlpstorage set none, and accept any spread"}},
		{"within 10 %", []ruleTrial{steady(1.0), steady(1.1), steady(0.95)}, nil},
		{"one trial", []ruleTrial{steady(1.342)}, nil},
		// A trial that left no rank result adds 0 to the rule's means
		// (missing_trials names it): no spread of measurements.
		{"a trial missing", []ruleTrial{steady(1.0), {}, steady(1.05)}, nil},
		{"a trial missing, two measured that vary", []ruleTrial{steady(1.342), {}, steady(0.7)},
			[]string{"over 2 trials (headline aggregated_read_bandwidth_gbps"}},
		{"a device p95 and the write bandwidth", []ruleTrial{steady(1), {read: 1, write: 0.4, storTP: 1000, readP95: 5, writeP95: 30, found: 2}},
			[]string{"2 metrics vary by more than 10% (CV) over 2 trials (headline aggregated_device_write_p95_ms 0.76; others aggregated_write_bandwidth_gbps 0.47)",
				"and run at least 3"}},
	} {
		got := trialSpread(tt.trials)
		if len(tt.want) == 0 && got != "" {
			t.Errorf("%s: %q, want none", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q, want %q in it", tt.name, got, w)
			}
		}
	}
}
