package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/sim"
)

// checkModel resolves --model into the configuration's bytes per token,
// from the model table kvtrace simulates with, so that a trace without a
// sidecar (kv-cache.py's) has its KV tokens measured. tpGiven says that
// --tensor-parallel was given, which means nothing without --model.
func checkModel(o *options, tpGiven bool) []error {
	var errs []error
	if tp := o.cfg.TensorParallel; tp == 0 { // the rest is Config.Validate's
		errs = append(errs, fmt.Errorf("--tensor-parallel %d: must be between 1 and 1024", tp))
	}
	if o.model == "" {
		if tpGiven {
			errs = append(errs, fmt.Errorf("--tensor-parallel %d: only with --model (a trace's sidecar gives its own)", o.cfg.TensorParallel))
		}
		return errs
	}
	models := sim.BuiltinModels()
	m, ok := models[o.model]
	if !ok {
		keys := make([]string, 0, len(models))
		for k := range models {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return append(errs, fmt.Errorf("--model %s: unknown model (want one of %s)", o.model, strings.Join(keys, ", ")))
	}
	o.cfg.BytesPerToken = m.BytesPerToken()
	return errs
}

// checkSidecars refuses a --model that contradicts a trace's sidecar: the
// sidecar's bytes per token are the trace's own.
func checkSidecars(o *options, srcs []replay.Source) error {
	if o.model == "" {
		return nil
	}
	for _, s := range srcs {
		m := s.Meta
		if m == nil || m.BytesPerToken <= 0 {
			continue
		}
		if m.BytesPerToken != o.cfg.BytesPerToken || max(1, m.TensorParallel) != o.cfg.TensorParallel {
			return fmt.Errorf("--model %s: %s's sidecar says model %s (%d bytes per token, tensor parallelism %d), not %d bytes per token at %d: leave --model out for a trace with a sidecar",
				o.model, s.Name, m.Model, m.BytesPerToken, max(1, m.TensorParallel), o.cfg.BytesPerToken, o.cfg.TensorParallel)
		}
	}
	return nil
}
