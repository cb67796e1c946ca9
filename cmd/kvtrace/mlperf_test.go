package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
