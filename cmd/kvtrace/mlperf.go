package main

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/spf13/pflag"
)

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
// change the workload the Option fixes: such a trace is an OPEN-division
// workload (Rules.md 6.6.1: a CLOSED run sets nothing but the Option, and
// mlpstorage hands kv-cache.py only the Option's parameters, its own
// config.yaml and a seed). An option that restates the Option's value
// (--gpu-mem-gb 0, as mlpstorage passes it) changes nothing and is no
// override; nor is --seed (a rank's seed is the base plus its rank), nor
// an option that only shapes the trace's dialect or the statistics. v
// holds the options' values; fromFile is the Option as --config's file
// (configPath, "" for none) left it.
func mlperfOverrides(fs *pflag.FlagSet, n int, v, fromFile *sim.Config, configPath string) []string {
	want := sim.DefaultConfig()
	if applyMLPerfOption(n, &want) != nil {
		return nil
	}
	var changed []string
	if configPath != "" && !sameWorkload(*fromFile, want) {
		changed = append(changed, "--config "+configPath)
	}
	probe := want
	for _, f := range configFlags(&probe, v) {
		if f.flag == "seed" || !fs.Changed(f.flag) {
			continue
		}
		probe = want
		f.apply()
		if !sameWorkload(probe, want) {
			changed = append(changed, "--"+f.flag+" "+fs.Lookup(f.flag).Value.String())
		}
	}
	if len(changed) == 0 {
		return nil
	}
	slices.Sort(changed)
	o, _ := mlperfOption(n)
	return []string{fmt.Sprintf("--mlperf-option %d (%s) with %s: %s", n, o.Name, strings.Join(changed, ", "), schema.MLPerfOpenWorkload)}
}

// sameWorkload reports whether a and b simulate the same workload: alike
// but for the seed, what has no effect on a trace, the trace's keys and
// timestamps, the statistics' SLO and the models' display names and those
// not run.
func sameWorkload(a, b sim.Config) bool {
	for _, c := range []*sim.Config{&a, &b} {
		m := c.Models[c.Model]
		m.Name = ""
		c.Models = map[string]sim.Model{c.Model: m}
		c.Seed, c.NoEffect, c.CacheDir, c.PerformanceProfile = 0, nil, "", ""
		c.KeyStyle, c.EpochBase, c.SLO = "", time.Time{}, sim.SLO{}
	}
	return reflect.DeepEqual(a, b)
}

// mlperfOptionHelp is --mlperf-option's help.
func mlperfOptionHelp() string {
	var parts []string
	for _, o := range schema.MLPerfOptions() {
		parts = append(parts, fmt.Sprintf("%d %s: %s, %d users, %ds, --cpu-mem-gb %g, --max-concurrent-allocs %d", o.Number, o.Name, o.Model,
			o.Users, o.DurationS, o.CPUMemGB, o.MaxConcurrentAllocs))
	}
	return "MLPerf Storage v3.0 CLOSED KV cache Option (Rules.md Table KVCache-1), with --gpu-mem-gb 0, --generation-mode none " +
		"and --seed " + strconv.Itoa(schema.MLPerfSeed) + "; options given override it, and one that changes its workload makes it OPEN (said on stderr and in the trace's sidecar notes, where kvreport --aggregate mlperf finds it): " + strings.Join(parts, "; ")
}
