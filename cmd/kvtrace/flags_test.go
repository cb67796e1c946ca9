package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/sim"
	"github.com/spf13/pflag"
)

// referenceConfigYAML is the reference's config.yaml, kept with sim's tests.
var referenceConfigYAML = filepath.Join("..", "..", "sim", "testdata", "config.yaml")

func parse(t *testing.T, args ...string) (*simOptions, error) {
	t.Helper()
	var stderr bytes.Buffer
	o, err := parseSimFlags(args, &stderr)
	if err == nil && stderr.Len() > 0 {
		t.Errorf("parseSimFlags wrote to stderr: %q", stderr.String())
	}
	return o, err
}

// TestParseSimFlagsReference parses kv-cache.py command lines of the
// reference's runs (docs/reference.md section 8) into the Config they mean.
func TestParseSimFlagsReference(t *testing.T) {
	tests := []struct {
		name       string
		args       string
		want       func(c *sim.Config)
		trace, out string
	}{
		{"gpu2 cpu4 gennone",
			"--model llama3.1-8b --num-users 50 --duration 20 --gpu-mem-gb 2 --cpu-mem-gb 4 --generation-mode none --seed 42 --io-trace-log x.csv.zst --output r.json",
			func(c *sim.Config) {
				c.NumUsers, c.Duration, c.GPUMemGB, c.CPUMemGB, c.GenerationMode, c.Seed = 50, 20*time.Second, 2, 4, "none", 42
			}, "x.csv.zst", "r.json"},
		{"tp8",
			"--model llama3.1-8b --num-users 50 --gpu-mem-gb 16 --cpu-mem-gb 32 --num-gpus 8 --tensor-parallel 8 --duration 30 --seed 42 --io-trace-log t.csv",
			func(c *sim.Config) {
				c.NumUsers, c.NumGPUs, c.TensorParallel, c.Duration, c.Seed = 50, 8, 8, 30*time.Second, 42
			}, "t.csv", ""},
		{"deepseek",
			"--model deepseek-v3 --num-users 50 --gpu-mem-gb 0 --cpu-mem-gb 4 --duration 30 --seed 42",
			func(c *sim.Config) {
				c.Model, c.NumUsers, c.GPUMemGB, c.CPUMemGB, c.Duration, c.Seed = "deepseek-v3", 50, 0, 4, 30*time.Second, 42
			}, "-", ""},
		{"rag, prefill only",
			"--model llama3.1-8b --num-users 50 --gpu-mem-gb 0 --cpu-mem-gb 4 --enable-rag --prefill-only --duration 30 --seed 42",
			func(c *sim.Config) {
				c.NumUsers, c.GPUMemGB, c.CPUMemGB, c.EnableRAG, c.PrefillOnly, c.Duration, c.Seed = 50, 0, 4, true, true, 30*time.Second, 42
			}, "-", ""},
		{"decode only",
			"--decode-only --rag-num-docs 3",
			func(c *sim.Config) { c.DecodeOnly, c.RAGNumDocs = true, 3 }, "-", ""},
		{"nvme capacity",
			"--model llama3.1-8b --num-users 50 --duration 20 --gpu-mem-gb 0 --cpu-mem-gb 4 --storage-capacity-gb 20 --generation-mode none --seed 42",
			func(c *sim.Config) {
				c.NumUsers, c.Duration, c.GPUMemGB, c.CPUMemGB, c.StorageCapacityGB, c.GenerationMode, c.Seed = 50, 20*time.Second, 0, 4, 20, "none", 42
			}, "-", ""},
		{"no multi-turn",
			"--num-users 20 --duration 20 --disable-multi-turn --disable-prefix-caching --generation-mode fast",
			func(c *sim.Config) {
				c.NumUsers, c.Duration, c.DisableMultiTurn, c.DisablePrefixCaching, c.GenerationMode = 20, 20*time.Second, true, true, "fast"
			}, "-", ""},
		{"precondition",
			"--num-users 10 --duration 15 --precondition --precondition-size-gb 20 --storage-capacity-gb 10",
			func(c *sim.Config) {
				c.NumUsers, c.Duration, c.Precondition, c.PreconditionSizeGB, c.StorageCapacityGB = 10, 15*time.Second, true, 20, 10
			}, "-", ""},
		{"burstgpt",
			"--num-users 20 --use-burst-trace --burst-trace-path inputs/burstgpt_synthetic.csv --trace-speedup 2.5 --replay-cycles 3",
			func(c *sim.Config) {
				c.NumUsers, c.UseBurstTrace, c.BurstTracePath, c.TraceSpeedup, c.ReplayCycles = 20, true, "inputs/burstgpt_synthetic.csv", 2.5, 3
			}, "-", ""},
		{"sharegpt",
			"--num-users 20 --dataset-path inputs/sharegpt_synthetic.json --request-rate 20 --max-conversations 100",
			func(c *sim.Config) {
				c.NumUsers, c.DatasetPath, c.RequestRate, c.MaxConversations = 20, "inputs/sharegpt_synthetic.json", 20, 100
			}, "-", ""},
		{"max requests, equals signs",
			"--num-users=20 --duration=30 --max-requests=100 --seed=-7",
			func(c *sim.Config) { c.NumUsers, c.Duration, c.MaxRequests, c.Seed = 20, 30*time.Second, 100, -7 }, "-", ""},
		{"autoscaling is accepted",
			"--num-users 20 --enable-autoscaling --autoscaler-mode capacity --target-saturation 0.5",
			func(c *sim.Config) {
				c.NumUsers, c.EnableAutoscaling, c.AutoscalerMode, c.TargetSaturation = 20, true, "capacity", 0.5
			}, "-", ""},
		{"mlperf wrapper option 1",
			"--config " + referenceConfigYAML + " --seed 42 --generation-mode none --duration 300 --gpu-mem-gb 0 --model llama3.1-8b --num-users 200 --cpu-mem-gb 0 --max-concurrent-allocs 16 --cache-dir /tmp/kv_rank0 --output rank0.json -o rank0.csv.zst",
			func(c *sim.Config) {
				c.Seed, c.GenerationMode, c.Duration, c.GPUMemGB, c.NumUsers, c.CPUMemGB, c.MaxConcurrentAllocs, c.CacheDir = 42, "none", 300*time.Second, 0, 200, 0, 16, "/tmp/kv_rank0"
				for key, name := range map[string]string{"deepseek-v3": "Deepseek v3", "qwen3-32b": "Qwen 3 32B", "gpt-oss-120b": "GPT-OSS 120B (5.1B active)", "gpt-oss-20b": "GPT-OSS 20B (3.6B active)"} {
					m := c.Models[key]
					m.Name = name
					c.Models[key] = m
				}
				y := referenceConfigYAML + " "
				c.NoEffect = []string{
					y + "generation_timing: validated, not used (as in the reference)",
					y + "gpu_backend: validated, not used (real-I/O only in the reference)",
					y + "prefix_cache.min_prefix_length: validated, not used (as in the reference)",
					y + "prefix_cache.max_prefix_entries: validated, not used (as in the reference)",
					y + "conversation.end_conversation_probability: validated, not used (as in the reference)",
					y + "autoscaler: validated, not used (kvtrace's autoscaler takes min_users 1 and max_users 10000, which bound only the user counts it reports; the reference hard-codes the rest)",
					y + "sharegpt: validated, not used (as in the reference)",
					y + "saturation_detection: validated, not used (real-I/O only in the reference)",
					y + "validation_limits: validated, not used (as in the reference)",
					"--cache-dir: no effect on a trace (real-I/O only in the reference)",
					"--max-concurrent-allocs: no effect on a trace: kv-cache.py's semaphore around its allocations holds a writer back only while others write, and a simulated write takes no time, as in kv-cache.py's trace mode (recorded in the sidecar's config.max_concurrent_allocs, which kvreplay applies to its writes)",
				}
			}, "rank0.csv.zst", "rank0.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parse(t, strings.Fields(tt.args)...)
			if err != nil {
				t.Fatalf("parseSimFlags: %v", err)
			}
			want := sim.DefaultConfig()
			tt.want(&want)
			if !reflect.DeepEqual(o.Config, want) {
				t.Errorf("Config\n got %+v\nwant %+v", o.Config, want)
			}
			if o.TracePath != tt.trace || o.OutputPath != tt.out {
				t.Errorf("trace %q output %q, want %q and %q", o.TracePath, o.OutputPath, tt.trace, tt.out)
			}
			if o.Format != "kvbench" || o.Level != 0 || o.Help || len(o.Args) != 0 {
				t.Errorf("options %+v", o)
			}
		})
	}
}

func TestParseSimFlagsDefaults(t *testing.T) {
	o, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Config, sim.DefaultConfig()) {
		t.Errorf("Config %+v, want DefaultConfig", o.Config)
	}
	want := simOptions{Config: o.Config, TracePath: "-", Format: "kvbench", Level: 0, LogLevel: "INFO"}
	if len(o.Args) != 0 || len(o.Warnings) != 0 {
		t.Errorf("args %q warnings %q", o.Args, o.Warnings)
	}
	got := *o
	got.Args, got.Warnings = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options %+v, want %+v", *o, want)
	}
}

// TestFlagDefaults checks that every option of kv-cache.py (reference
// section 4) exists with its default, and kvtrace's own with theirs.
func TestFlagDefaults(t *testing.T) {
	want := map[string]string{
		// kv-cache.py's.
		"log-level": "INFO", "model": "llama3.1-8b", "num-users": "100", "duration": "1m0s",
		"gpu-mem-gb": "16", "num-gpus": "1", "tensor-parallel": "1", "cpu-mem-gb": "32",
		"cache-dir": "", "generation-mode": "realistic", "performance-profile": "latency",
		"disable-multi-turn": "false", "disable-prefix-caching": "false", "enable-rag": "false",
		"rag-num-docs": "10", "enable-autoscaling": "false", "autoscaler-mode": "qos",
		"target-saturation": "0.8", "use-burst-trace": "false", "burst-trace-path": "BurstGPT/data/BurstGPT_1.csv",
		"validation-trace": "", "dataset-path": "", "max-conversations": "500", "output": "",
		"seed": "0", "max-concurrent-allocs": "0", "request-rate": "0", "max-requests": "0",
		"xlsx-output": "", "config": "", "storage-capacity-gb": "0", "object-tier": "false", "precondition": "false",
		"precondition-size-gb": "0", "precondition-threads": "0", "trace-speedup": "1",
		"replay-cycles": "0", "prefill-only": "false", "decode-only": "false", "io-trace-log": "-",
		"enable-latency-tracing": "false",
		// kvtrace's.
		"format": "kvbench", "zstd": "false", "zstd-level": "0", "key-style": "", "epoch-base": "1767225600",
		"request-trace": "", "request-trace-format": "", "request-trace-time-unit": "", "request-trace-block-tokens": "0", "arrival": "", "arrival-cv": "2", "arrival-seed": "0", "slo-ms": "", "latency-dump": "", "nvme-accounting": "reference", "mlperf-option": "0",
		"allow-system-path": "false", "force": "false",
		"help": "false", "version": "false",
	}
	var stderr bytes.Buffer
	_, err := parseSimFlags([]string{"--help"}, &stderr)
	if !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	he, ok := errors.AsType[*cli.HelpError](err)
	if !ok || stderr.Len() != 0 {
		t.Fatalf("--help: %T, stderr %q", err, stderr.String())
	}
	help := he.Text
	// Rebuild the flag set the way parseSimFlags does, through its usage.
	seen := map[string]bool{}
	for _, line := range strings.Split(help[strings.Index(help, "Options:"):], "\n") {
		f := strings.Fields(line)
		for _, w := range f {
			if strings.HasPrefix(w, "--") {
				seen[strings.TrimPrefix(w, "--")] = true
				break
			}
		}
	}
	for name, def := range want {
		if !seen[name] {
			t.Errorf("no --%s in the usage", name)
			continue
		}
		if def != "" && def != "false" && def != "0" && !strings.Contains(help, "(default "+def+")") && !strings.Contains(help, `(default "`+def+`")`) {
			t.Errorf("--%s: the usage does not show the default %s", name, def)
		}
	}
	if len(seen) != len(want) {
		var extra []string
		for name := range seen {
			if _, ok := want[name]; !ok {
				extra = append(extra, name)
			}
		}
		t.Errorf("%d options, want %d; not in the table: %v", len(seen), len(want), extra)
	}
	if !strings.Contains(help, "-o, --io-trace-log") {
		t.Error("-o is not the shorthand of --io-trace-log")
	}
	for _, s := range []string{"Usage:", "Examples:", "Options:", "kv_system_", "kvtrace --model llama3.1-8b --num-users 150 --duration 600 --generation-mode none --gpu-mem-gb 0 --cpu-mem-gb 4 -o run.csv.zst", "| kvreplay"} {
		if !strings.Contains(help, s) {
			t.Errorf("usage lacks %q", s)
		}
	}
}

func TestParseSimFlagsFormatAndKeys(t *testing.T) {
	tests := []struct {
		args      string
		format    string
		keyStyle  string
		epochBase int64
	}{
		{"", "kvbench", "kvbench", 1767225600},
		{"--format mlperf", "mlperf", "mlperf", 1767225600},
		{"--format mlperf --key-style kvbench", "mlperf", "kvbench", 1767225600},
		{"--key-style mlperf --epoch-base 1700000000", "kvbench", "mlperf", 1700000000},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			o, err := parse(t, strings.Fields(tt.args)...)
			if err != nil {
				t.Fatal(err)
			}
			if o.Format != tt.format || o.Config.KeyStyle != tt.keyStyle || o.Config.EpochBase.Unix() != tt.epochBase || o.Config.EpochBase.Location() != time.UTC {
				t.Errorf("format %q key style %q epoch %v, want %q %q %d", o.Format, o.Config.KeyStyle, o.Config.EpochBase, tt.format, tt.keyStyle, tt.epochBase)
			}
		})
	}
	o, err := parse(t, "--zstd-level", "19", "-o", "t.csv.zst", "--request-trace", "t.jsonl", "--request-trace-format", "mooncake", "--duration", "10m")
	if err != nil {
		t.Fatal(err)
	}
	if o.Level != 19 || o.Config.RequestTrace != "t.jsonl" || o.Config.RequestTraceFormat != "mooncake" || o.Config.Duration != 10*time.Minute {
		t.Errorf("options %+v", o)
	}
}

// The file is applied first, so options may name what it defines.
func TestParseSimFlagsConfigThenOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my.yaml")
	src := "model_configs:\n  my-7b:\n    name: Mine\n    kv_heads: 4\ndecode:\n  batch_size: 16\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parse(t, "--config", path, "--model", "my-7b", "--num-users", "5")
	if err != nil {
		t.Fatal(err)
	}
	m, err := o.Config.ModelConfig()
	if err != nil || m.Name != "Mine" || m.BytesPerToken() != 32*4*128*2*2 {
		t.Errorf("model %+v, %v", m, err)
	}
	if o.Config.DecodeBatchSize != 16 || o.Config.NumUsers != 5 || o.ConfigPath != path {
		t.Errorf("config %+v", o)
	}
	// Without the file the model is unknown.
	if _, err := parse(t, "--model", "my-7b"); err == nil || !strings.Contains(err.Error(), "--model my-7b: unknown model") {
		t.Errorf("without --config: %v", err)
	}
}

// TestParseSimFlagsInvalid gives one invalid option or combination at a
// time: the error is a usage error whose message names the option.
func TestParseSimFlagsInvalid(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("eviction:\n  target_usage_rato: 0.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args string
		want string
	}{
		{"--num-users 0", "--num-users 0: must be between 1 and 100000"},
		{"--num-users 100001", "--num-users 100001: must be between 1 and 100000"},
		{"--duration 0", "--duration 0: must be between 1 and 86400 seconds"},
		{"--duration 86401", "--duration 86401: must be between 1 and 86400 seconds"},
		{"--gpu-mem-gb -1", "--gpu-mem-gb -1: must be between 0 and 65536"},
		{"--cpu-mem-gb 200000", "--cpu-mem-gb 200000: must be between 0 and 131072"},
		{"--num-gpus 0", "--num-gpus 0: must be at least 1"},
		{"--tensor-parallel 0", "--tensor-parallel 0: must be at least 1"},
		{"--tensor-parallel 4", "--tensor-parallel 4: must not exceed --num-gpus 1"},
		{"--rag-num-docs -1", "--rag-num-docs -1: must not be negative"},
		{"--max-conversations 0", "--max-conversations 0: must be at least 1"},
		{"--max-concurrent-allocs -1", "--max-concurrent-allocs -1: must not be negative"},
		{"--request-rate -1", "--request-rate -1: must not be negative"},
		{"--max-requests -1", "--max-requests -1: must not be negative"},
		{"--storage-capacity-gb -1", "--storage-capacity-gb -1: must not be negative"},
		{"--precondition-size-gb -1", "--precondition-size-gb -1: must not be negative"},
		{"--precondition-threads -1", "--precondition-threads -1: must not be negative"},
		{"--trace-speedup -1", "--trace-speedup -1: must not be negative"},
		{"--replay-cycles -1", "--replay-cycles -1: must not be negative"},
		{"--target-saturation 1.5", "--target-saturation 1.5: must be between 0 and 1"},
		{"--prefill-only --decode-only", "--prefill-only with --decode-only: mutually exclusive"},
		{"--generation-mode slow", "--generation-mode slow: must be one of none, fast, realistic"},
		{"--performance-profile fast", "--performance-profile fast: must be one of latency, throughput"},
		{"--autoscaler-mode auto", "--autoscaler-mode auto: must be one of qos, capacity"},
		{"--cache-dir /etc/kv", "--cache-dir /etc/kv: must not be a system directory"},
		{"--model llama4", "--model llama4: unknown model (want one of deepseek-v3, gpt-oss-120b,"},
		{"--log-level info", "--log-level info: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"},
		{"--format csv", "--format csv: must be one of kvbench, mlperf"},
		{"--format mlperf --object-tier --storage-capacity-gb 4", "--format mlperf with --object-tier: kv-cache.py's dialect has three tiers"},
		{"--zstd-level -1", "--zstd-level -1: must be between 0 and 22"},
		{"--zstd-level 23", "--zstd-level 23: must be between 0 and 22"},
		{"--zstd-level 3", "--zstd-level 3: the trace (-) is written as plain CSV: add --zstd, or name a .zst file"},
		{"--zstd-level 0 -o t.csv", "--zstd-level 0: the trace (t.csv) is written as plain CSV"},
		{"--key-style s3", "--key-style s3: must be one of kvbench, mlperf"},
		{"--epoch-base -1", "--epoch-base -1: must not be negative"},
		{"--request-trace t.csv --request-trace-format splitwise", "--request-trace-format splitwise: must be one of mooncake, azure, burstgpt, sharegpt"},
		{"--request-trace-format azure", "--request-trace-format azure: needs --request-trace"},
		{"--request-trace t.jsonl --request-trace-time-unit min", "--request-trace-time-unit min: must be one of s, ms, us, ns"},
		{"--request-trace-time-unit ns", "--request-trace-time-unit ns: needs --request-trace"},
		{"--request-trace t.jsonl --request-trace-block-tokens -3", "--request-trace-block-tokens -3: must be between 1 and 1048576"},
		{"--request-trace-block-tokens 16", "--request-trace-block-tokens 16: needs --request-trace"},
		{"--slo-ms fast=3", `--slo-ms fast=3: class "fast": want one of interactive, responsive, batch`},
		{"--latency-dump -", "--latency-dump -: stdout already carries the trace or the statistics"},
		{"--arrival bursty", "--arrival bursty: must be one of fixed, poisson, gamma"},
		{"--arrival gamma --arrival-cv 0", "--arrival-cv 0: must be above 0 and at most 10"},
		{"--arrival poisson --use-burst-trace", "--arrival poisson: with --use-burst-trace the trace's timestamps are the arrivals"},
		{"--request-trace t.csv --use-burst-trace", "--request-trace t.csv: cannot be combined with --use-burst-trace"},
		{"--request-trace t.csv --dataset-path sg.json", "--request-trace t.csv: cannot be combined with --dataset-path sg.json"},
		{"--use-burst-trace --burst-trace-path=", "--use-burst-trace: needs --burst-trace-path"},
		{"--io-trace-log=", `--io-trace-log "": empty file name`},
		{"--output -", "--output -: stdout already carries the trace"},
		{"--config " + filepath.Join(dir, "missing.yaml"), "--config " + filepath.Join(dir, "missing.yaml") + ": no such file or directory"},
		{"--config " + badYAML, badYAML + ":2:3: eviction.target_usage_rato: unknown key"},
		// Malformed values stop at pflag.
		{"--num-users many", "--num-users many: not an integer"},
		{"--duration -5", "--duration -5: duration must not be negative"},
		{"--gpu-mem-gb lots", "--gpu-mem-gb lots: not a number"},
		{"--bogus", "unknown flag: --bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			o, err := parse(t, strings.Fields(tt.args)...)
			if err == nil {
				t.Fatalf("parseSimFlags succeeded: %+v", o)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to hold %q", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("want one problem, got %q", err)
			}
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Errorf("exit status %d, want %d (usage)", cli.ExitCode(err), cli.ExitUsage)
			}
		})
	}
}

func TestParseSimFlagsReportsEveryProblem(t *testing.T) {
	_, err := parse(t, "--num-users", "0", "--duration", "0", "--prefill-only", "--decode-only", "--generation-mode", "slow",
		"--format", "csv", "--zstd-level", "99", "--model", "nope", "--log-level", "loud")
	if err == nil {
		t.Fatal("parseSimFlags succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{"--num-users 0:", "--duration 0:", "--prefill-only with --decode-only:", "--generation-mode slow:",
		"--format csv:", "--zstd-level 99:", "--model nope:", "--log-level loud:"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no line starts with %q in\n%s", want, err)
		}
	}
	if len(lines) != 8 {
		t.Errorf("%d lines, want 8:\n%s", len(lines), err)
	}
	if cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("exit status %d", cli.ExitCode(err))
	}
	// Through cli.Main every line gets the tool's prefix.
	var stdout, stderr bytes.Buffer
	code := cli.Main("kvtrace", []string{"--num-users", "0", "--duration", "0"}, &stdout, &stderr, func(_ context.Context, args []string, _, stderr io.Writer) error {
		_, err := parseSimFlags(args, stderr)
		return err
	})
	if code != cli.ExitUsage || stderr.String() != "kvtrace: --num-users 0: must be between 1 and 100000\nkvtrace: --duration 0: must be between 1 and 86400 seconds\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestParseSimFlagsHelpAndVersion(t *testing.T) {
	var stderr bytes.Buffer
	o, err := parseSimFlags([]string{"--num-users", "0", "-h"}, &stderr)
	if !errors.Is(err, pflag.ErrHelp) || o == nil || !o.Help {
		t.Errorf("-h: %+v, %v", o, err)
	}
	if he, ok := errors.AsType[*cli.HelpError](err); !ok || !strings.HasPrefix(he.Text, "kvtrace: simulate") || stderr.Len() != 0 {
		t.Errorf("-h: %v, stderr %q", err, stderr.String())
	}
	if _, err = parse(t, "--version", "--num-users", "0"); !errors.Is(err, cli.ErrVersion) {
		t.Errorf("--version: %v, want cli.ErrVersion", err)
	}
	o, err = parse(t, "frobnicate")
	if err != nil || !slices.Equal(o.Args, []string{"frobnicate"}) {
		t.Errorf("a positional argument: %+v, %v", o, err)
	}
}

func TestParseSimFlagsNoEffectAndWarnings(t *testing.T) {
	o, err := parse(t, "--log-level", "DEBUG", "--cache-dir", t.TempDir(), "--performance-profile", "throughput",
		"--enable-autoscaling", "--autoscaler-mode", "qos", "--target-saturation", "0.5", "--validation-trace", "v.json",
		"--max-concurrent-allocs", "4", "--xlsx-output", "r.xlsx", "--precondition-threads", "8", "--enable-latency-tracing",
		"--num-gpus", "8", "--tensor-parallel", "6", "--request-rate", "3", "--replay-cycles", "2", "--trace-speedup", "4")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, n := range o.Config.NoEffect {
		flag, _, _ := strings.Cut(n, ":")
		flags = append(flags, flag)
	}
	want := []string{"--log-level", "--cache-dir", "--performance-profile",
		"--validation-trace", "--max-concurrent-allocs", "--xlsx-output", "--enable-latency-tracing"}
	if !slices.Equal(flags, want) {
		t.Errorf("NoEffect flags %q, want %q", flags, want)
	}
	if o.Config.NoEffect[1] != "--cache-dir: no effect on a trace (real-I/O only in the reference)" {
		t.Errorf("note %q", o.Config.NoEffect[1])
	}
	wantWarnings := []string{
		"--tensor-parallel 6: not a power of 2; uncommon for real deployments but allowed",
		"--request-rate 3: no effect without --dataset-path, --request-trace or --arrival (ShareGPT replay only, as in the reference, untimed request traces and arrival processes)",
		"--replay-cycles 2: no effect without --use-burst-trace, --dataset-path or --request-trace (passes over a replayed trace; synthetic users run for --duration)",
		"--trace-speedup 4: no effect without --use-burst-trace, --dataset-path or --request-trace (the time scale of a replayed trace)",
	}
	if !slices.Equal(o.Warnings, wantWarnings) {
		t.Errorf("Warnings %q, want %q", o.Warnings, wantWarnings)
	}
	if o.LogLevel != "DEBUG" || o.ValidationTrace != "v.json" || o.XLSXOutput != "r.xlsx" {
		t.Errorf("options %+v", o)
	}
}

// kv-cache.py refuses a cache directory whose parent it cannot write.
func TestParseSimFlagsCacheDirParent(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write anywhere")
	}
	parent := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(parent, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(parent, 0o755) })
	_, err := parse(t, "--cache-dir", filepath.Join(parent, "kv"))
	if err == nil || !strings.Contains(err.Error(), "--cache-dir "+filepath.Join(parent, "kv")+": its parent "+parent+" is not writable") {
		t.Errorf("error %v", err)
	}
}
