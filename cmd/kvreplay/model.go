package main

import (
	"fmt"
	"slices"
	"strings"

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
