package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/trace"
)

// TestMLPerfOption: each CLOSED Option sets Table KVCache-1's parameters
// and seed 42; an option given beside it overrides it, with a warning
// that the workload is OPEN.
func TestMLPerfOption(t *testing.T) {
	tests := []struct {
		args     []string
		model    string
		users    int
		cpu      float64
		allocs   int
		duration time.Duration
		seed     int64
		warning  string
	}{
		{[]string{"--mlperf-option", "1"}, "llama3.1-8b", 200, 0, 16, 300 * time.Second, 42, ""},
		{[]string{"--mlperf-option", "2"}, "llama3.1-8b", 100, 4, 16, 300 * time.Second, 42, ""},
		{[]string{"--mlperf-option", "3"}, "llama3.1-70b-instruct", 70, 0, 4, 300 * time.Second, 42, ""},
		// A rank's seed (base + rank) is no override.
		{[]string{"--mlperf-option", "3", "--seed", "43"}, "llama3.1-70b-instruct", 70, 0, 4, 300 * time.Second, 43, ""},
		// Options given win, as in the OPEN division, and say so.
		{[]string{"--num-users", "5", "--mlperf-option", "1", "--duration", "10"}, "llama3.1-8b", 5, 0, 16, 10 * time.Second, 42,
			"--mlperf-option 1 (Max Storage Stress) with --duration 10s, --num-users 5: an OPEN-division workload"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			o, err := parseSimFlags(tt.args, &stderr)
			if err != nil {
				t.Fatal(err)
			}
			c := o.Config
			if c.Model != tt.model || c.NumUsers != tt.users || c.CPUMemGB != tt.cpu || c.GPUMemGB != 0 || c.MaxConcurrentAllocs != tt.allocs ||
				c.Duration != tt.duration || c.GenerationMode != "none" || c.Seed != tt.seed {
				t.Errorf("config: %s %d users cpu %g gpu %g allocs %d %v %s seed %d", c.Model, c.NumUsers, c.CPUMemGB, c.GPUMemGB,
					c.MaxConcurrentAllocs, c.Duration, c.GenerationMode, c.Seed)
			}
			w := strings.Join(o.Warnings, "\n")
			if tt.warning == "" && strings.Contains(w, "OPEN") || !strings.Contains(w, tt.warning) {
				t.Errorf("warnings %q, want %q", w, tt.warning)
			}
		})
	}
	for _, bad := range []string{"0", "4"} {
		var stderr bytes.Buffer
		if _, err := parseSimFlags([]string{"--mlperf-option", bad}, &stderr); err == nil || !strings.Contains(err.Error(), "--mlperf-option "+bad+": must be 1") {
			t.Errorf("--mlperf-option %s: %v", bad, err)
		}
	}
}

// TestMLPerfOptionOverrides: the Option's workload is OPEN when any option
// beside it changes it (Rules.md 6.6.1 fixes everything but the Option's
// parameters, and 6.3.2.2 forbids autoscaling), and stays CLOSED when the
// options restate it, as mlpstorage's own kv-cache.py command line does
// (with its config.yaml, the reference's).
func TestMLPerfOptionOverrides(t *testing.T) {
	custom := filepath.Join(t.TempDir(), "custom.yaml")
	if err := os.WriteFile(custom, []byte("eviction:\n  target_usage_ratio: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	harness := "--model llama3.1-8b --num-users 200 --duration 300 --gpu-mem-gb 0 --cpu-mem-gb 0 --max-concurrent-allocs 16 " +
		"--generation-mode none --seed 43 --cache-dir " + t.TempDir() + " --output r.json --config " + referenceConfigYAML
	tests := []struct{ args, warning string }{
		{"--mlperf-option 1 " + harness, ""},
		{"--mlperf-option 2 --gpu-mem-gb 0 --cpu-mem-gb 4 --format mlperf --performance-profile throughput", ""},
		{"--mlperf-option 1 --enable-autoscaling", "with --enable-autoscaling true: an OPEN-division workload"},
		{"--mlperf-option 3 --enable-rag --num-gpus 8", "with --enable-rag true, --num-gpus 8: an OPEN-division workload"},
		{"--mlperf-option 2 --max-concurrent-allocs 16 --disable-multi-turn", "with --disable-multi-turn true: an OPEN-division workload"},
		{"--mlperf-option 1 --config " + custom, "with --config " + custom + ": an OPEN-division workload"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			var stderr bytes.Buffer
			o, err := parseSimFlags(strings.Fields(tt.args), &stderr)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(o.Warnings, "\n")
			if tt.warning == "" && strings.Contains(w, "OPEN") || !strings.Contains(w, tt.warning) {
				t.Errorf("warnings %q, want %q", w, tt.warning)
			}
		})
	}
}

// TestMLPerfOpenInSidecar: a trace of an Option with an option that
// changes its workload carries kvtrace's verdict (an OPEN-division
// workload, and why) in its sidecar's notes, which kvreplay's result
// keeps and kvreport's MLPerf aggregation reads (closed_departures); a
// trace of the CLOSED Option carries none. The verdict went to stderr
// only: kvreport found an Option's trace made with --enable-rag CLOSED.
func TestMLPerfOpenInSidecar(t *testing.T) {
	const open = "an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)"
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--enable-rag"}, "--mlperf-option 1 (Max Storage Stress) with --duration 2s, --enable-rag true: " + open},
		{nil, "--mlperf-option 1 (Max Storage Stress) with --duration 2s: " + open},
		{[]string{"--seed", "43", "--duration", "300"}, ""},
	} {
		out := filepath.Join(t.TempDir(), "o1.csv.zst")
		args := append([]string{"--mlperf-option", "1", "--duration", "2", "-o", out}, c.extra...)
		_, stderr, code := runKvtrace(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		m, err := trace.ReadMeta(out)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range m.Notes {
			if strings.Contains(n, "OPEN-division") {
				got = append(got, n)
			}
		}
		if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
			t.Errorf("%v: the sidecar's OPEN notes %q, want %q", c.extra, got, c.want)
		}
		if n := strings.Count(stderr, "OPEN-division"); n != min(len(c.want), 1) {
			t.Errorf("%v: stderr says OPEN %d times, want %d:\n%s", c.extra, n, min(len(c.want), 1), stderr)
		}
	}
}
