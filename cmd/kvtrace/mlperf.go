package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/sim"
	"github.com/spf13/pflag"
)

// mlperfOption is one of MLPerf Storage v3.0's CLOSED KV cache workload
// Options: its immutable per-client parameters (Rules.md 6.3.1, Table
// KVCache-1, as mlpstorage's WORKLOAD_PARAMS emits them to kv-cache.py).
type mlperfOption struct {
	name                string
	model               string
	users               int
	duration            time.Duration
	gpuMemGB, cpuMemGB  float64
	maxConcurrentAllocs int
	generationMode      string
}

// mlperfOptions are the three CLOSED Options, by number. Every rank (MLPerf
// client) runs the whole Option with seed mlperfSeed + its rank.
var mlperfOptions = map[int]mlperfOption{
	1: {"Max Storage Stress", "llama3.1-8b", 200, 300 * time.Second, 0, 0, 16, "none"},
	2: {"Storage Throughput", "llama3.1-8b", 100, 300 * time.Second, 0, 4, 16, "none"},
	3: {"Large Model (70B)", "llama3.1-70b-instruct", 70, 300 * time.Second, 0, 0, 4, "none"},
}

// mlperfSeed is the CLOSED division's fixed base seed (Rules.md 6.3.2.1).
const mlperfSeed = 42

// mlperfFlags are the options an Option fixes, as its preset sets them.
var mlperfFlags = []string{"model", "num-users", "duration", "gpu-mem-gb", "cpu-mem-gb", "max-concurrent-allocs", "generation-mode", "seed"}

// applyMLPerfOption sets cfg to Option n's parameters and the base seed;
// the options given on the command line are applied after it, as the
// OPEN division lets them supersede the Option's one at a time.
func applyMLPerfOption(n int, cfg *sim.Config) error {
	o, ok := mlperfOptions[n]
	if !ok {
		return fmt.Errorf("--mlperf-option %d: must be 1 (%s), 2 (%s) or 3 (%s)", n,
			mlperfOptions[1].name, mlperfOptions[2].name, mlperfOptions[3].name)
	}
	cfg.Model, cfg.NumUsers, cfg.Duration = o.model, o.users, o.duration
	cfg.GPUMemGB, cfg.CPUMemGB = o.gpuMemGB, o.cpuMemGB
	cfg.MaxConcurrentAllocs, cfg.GenerationMode = o.maxConcurrentAllocs, o.generationMode
	cfg.Seed = mlperfSeed
	return nil
}

// mlperfOverrides names the options given beside --mlperf-option n that
// change what the Option fixes: such a trace is an OPEN-division
// workload (a CLOSED submission runs the Option as it is; a rank's seed is
// the base plus its rank, so --seed alone is not an override).
func mlperfOverrides(fs *pflag.FlagSet, n int) []string {
	var changed []string
	for _, f := range mlperfFlags {
		if f != "seed" && fs.Changed(f) {
			changed = append(changed, "--"+f+" "+fs.Lookup(f).Value.String())
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	return []string{fmt.Sprintf("--mlperf-option %d (%s) with %s: an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)",
		n, mlperfOptions[n].name, strings.Join(changed, ", "))}
}

// mlperfOptionHelp is --mlperf-option's help.
func mlperfOptionHelp() string {
	var parts []string
	for n := 1; n <= len(mlperfOptions); n++ {
		o := mlperfOptions[n]
		parts = append(parts, fmt.Sprintf("%d %s: %s, %d users, %gs, --cpu-mem-gb %g, --max-concurrent-allocs %d", n, o.name, o.model,
			o.users, o.duration.Seconds(), o.cpuMemGB, o.maxConcurrentAllocs))
	}
	return "MLPerf Storage v3.0 CLOSED KV cache Option (Rules.md Table KVCache-1), with --gpu-mem-gb 0, --generation-mode none " +
		"and --seed " + strconv.Itoa(mlperfSeed) + "; options given override it (an OPEN workload): " + strings.Join(parts, "; ")
}
