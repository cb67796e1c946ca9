package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// kv-cache.py's argparse takes unique prefixes of its options; kvtrace
// takes them too, and names the candidates of an ambiguous one.
func TestOptionPrefixes(t *testing.T) {
	o, err := parse(t, "--num-user", "10", "--gpu-mem", "0", "--cpu-mem=2", "--dur", "30", "--model", "llama3.1-8b", "--generation", "none")
	if err != nil {
		t.Fatal(err)
	}
	c := o.Config
	if c.NumUsers != 10 || c.GPUMemGB != 0 || c.CPUMemGB != 2 || c.Duration.Seconds() != 30 || c.GenerationMode != "none" {
		t.Errorf("prefixes not applied: users %d gpu %v cpu %v duration %v mode %s", c.NumUsers, c.GPUMemGB, c.CPUMemGB, c.Duration, c.GenerationMode)
	}
	for _, tt := range []struct{ arg, want string }{
		{"--num", "kvtrace: ambiguous option: --num could match --num-users, --num-gpus\n"},
		{"--pre", "kvtrace: ambiguous option: --pre could match --precondition, --precondition-size-gb, --precondition-threads, --prefill-only\n"},
		{"--num_users", "kvtrace: unknown flag: --num_users (did you mean --num-users?)\n"},
		{"--users", "kvtrace: unknown flag: --users (did you mean --num-users?)\n"},
	} {
		_, stderr, code := runKvtrace(t, tt.arg, "10")
		if code != cli.ExitUsage || stderr != tt.want {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tt.arg, code, stderr, tt.want)
		}
	}
}

// A prefix unique among kv-cache.py's options is that option in kvtrace
// too, although kvtrace's own options share it: --request is kv-cache.py's
// --request-rate (not ambiguous with --request-trace), --o its --output
// (not --object-tier), --l its --log-level (not --latency-dump).
func TestOptionPrefixesOfTheReference(t *testing.T) {
	o, err := parse(t, "--request", "20", "--o", "r.json", "--l", "DEBUG", "--a", "capacity", "--v", "v.json", "--num-users", "2", "--duration", "5")
	if err != nil {
		t.Fatal(err)
	}
	if c := o.Config; c.RequestRate != 20 || o.OutputPath != "r.json" || o.LogLevel != "DEBUG" || c.AutoscalerMode != "capacity" || o.ValidationTrace != "v.json" {
		t.Errorf("request-rate %v, output %q, log-level %q, autoscaler-mode %q, validation-trace %q", c.RequestRate, o.OutputPath, o.LogLevel,
			c.AutoscalerMode, o.ValidationTrace)
	}
	// Among kvtrace's own options a prefix stays ambiguous.
	if _, stderr, code := runKvtrace(t, "--arr", "1"); code != cli.ExitUsage || !strings.Contains(stderr, "ambiguous option: --arr could match --arrival, --arrival-cv, --arrival-seed") {
		t.Errorf("--arr: exit %d, stderr %q", code, stderr)
	}
}

// A kv-cache.py command line without --io-trace-log, its stdout a
// terminal, writes its --output statistics and no trace, and says so.
func TestStatisticsWithoutTrace(t *testing.T) {
	tty := clitest.Terminal(t)
	stats := filepath.Join(t.TempDir(), "results.json")
	var stderr bytes.Buffer
	args := []string{"--model", "llama3.1-8b", "--num-users", "10", "--duration", "30", "--output", stats}
	if code := cli.Main("kvtrace", args, tty, &stderr, run); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "\n"); n != 1 || !strings.Contains(stderr.String(), "the trace (") ||
		!strings.Contains(stderr.String(), "was not written; statistics -> "+stats) {
		t.Errorf("stderr %q, want one line saying the trace was not written", stderr.String())
	}
	raw, err := os.ReadFile(stats)
	var doc map[string]any
	if err != nil || json.Unmarshal(raw, &doc) != nil || doc["requests_completed"] == nil {
		t.Fatalf("statistics not written: %v %.200s", err, raw)
	}
	// Asked for a trace on a terminal, or for nothing else: refused.
	for _, args := range [][]string{
		{"--num-users", "2", "--duration", "5", "-o", "-", "--output", stats},
		{"--num-users", "2", "--duration", "5"},
	} {
		stderr.Reset()
		if code := cli.Main("kvtrace", args, tty, &stderr, run); code != cli.ExitUsage || !strings.Contains(stderr.String(), "refusing to write a trace to a terminal") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
