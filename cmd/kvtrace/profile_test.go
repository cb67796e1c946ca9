package main

import (
	"context"
	"slices"
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

// TestNotAppliedNotes: kv-cache.py writes its validation block
// (--validation-trace) and its Excel summary (--xlsx-output) in trace mode
// too (cli.py main; benchmark.py run), so kvtrace's notes say it does not
// apply them. They said "no effect on a trace (real-I/O only in the
// reference)".
func TestNotAppliedNotes(t *testing.T) {
	o, err := parse(t, "--validation-trace", "v.json", "--xlsx-output", "r.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--validation-trace: not applied: kv-cache.py adds a validation block to its results (its cache hit rate compared with the file's), in trace mode too; kvtrace's --output has none",
		"--xlsx-output: not written: kv-cache.py writes its results as an Excel (or CSV) summary, in trace mode too; kvtrace does not (kvreport --format xlsx renders --output's statistics)",
	}
	if !slices.Equal(o.Config.NoEffect, want) {
		t.Errorf("notes\n %q\nwant\n %q", o.Config.NoEffect, want)
	}
}
