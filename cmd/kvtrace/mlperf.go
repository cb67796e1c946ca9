package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/spf13/pflag"
)

// mlperfFlags are the options an Option fixes, as its preset sets them.
var mlperfFlags = []string{"model", "num-users", "duration", "gpu-mem-gb", "cpu-mem-gb", "max-concurrent-allocs", "generation-mode", "seed"}

// mlperfOption returns MLPerf Storage's CLOSED Option n (schema's table).
func mlperfOption(n int) (schema.MLPerfOption, bool) {
	opts := schema.MLPerfOptions()
	i := slices.IndexFunc(opts, func(o schema.MLPerfOption) bool { return o.Number == n })
	if i < 0 {
		return schema.MLPerfOption{}, false
	}
	return opts[i], true
}

// applyMLPerfOption sets cfg to Option n's parameters (Rules.md Table
// KVCache-1) and the base seed; the options given on the command line are
// applied after it, as the OPEN division lets them supersede the
// Option's one at a time. Every rank (MLPerf client) runs the whole
// Option with the base seed plus its rank.
func applyMLPerfOption(n int, cfg *sim.Config) error {
	o, ok := mlperfOption(n)
	if !ok {
		var names []string
		for _, o := range schema.MLPerfOptions() {
			names = append(names, fmt.Sprintf("%d (%s)", o.Number, o.Name))
		}
		return fmt.Errorf("--mlperf-option %d: must be %s", n, strings.Join(names, ", "))
	}
	cfg.Model, cfg.NumUsers, cfg.Duration = o.Model, o.Users, time.Duration(o.DurationS)*time.Second
	cfg.GPUMemGB, cfg.CPUMemGB = o.GPUMemGB, o.CPUMemGB
	cfg.MaxConcurrentAllocs, cfg.GenerationMode = o.MaxConcurrentAllocs, o.GenerationMode
	cfg.Seed = schema.MLPerfSeed
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
	o, _ := mlperfOption(n)
	return []string{fmt.Sprintf("--mlperf-option %d (%s) with %s: an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)",
		n, o.Name, strings.Join(changed, ", "))}
}

// mlperfOptionHelp is --mlperf-option's help.
func mlperfOptionHelp() string {
	var parts []string
	for _, o := range schema.MLPerfOptions() {
		parts = append(parts, fmt.Sprintf("%d %s: %s, %d users, %ds, --cpu-mem-gb %g, --max-concurrent-allocs %d", o.Number, o.Name, o.Model,
			o.Users, o.DurationS, o.CPUMemGB, o.MaxConcurrentAllocs))
	}
	return "MLPerf Storage v3.0 CLOSED KV cache Option (Rules.md Table KVCache-1), with --gpu-mem-gb 0, --generation-mode none " +
		"and --seed " + strconv.Itoa(schema.MLPerfSeed) + "; options given override it (an OPEN workload): " + strings.Join(parts, "; ")
}
