package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/report"
)

// aggregations are the values --aggregate takes.
var aggregations = []string{"mlperf"}

// runMLPerf is kvreport --aggregate mlperf: the per-rank, per-trial
// documents of paths combined as MLPerf Storage's rules say, written as
// mlpstorage's kvcache_run_summary (--format json) or rendered beside
// kvbench's pooled view (text, md). A run with missing rank results is
// written, then answered with exit status 1: it is a partial failure; so
// is a run with a rank cut short (incomplete), which the rule sums as
// whole.
func runMLPerf(ctx context.Context, paths []string, stdin io.Reader, stdout io.Writer, output, format string) error {
	run, err := report.LoadMLPerf(ctx, paths, stdin, opener(ctx))
	if err != nil {
		return loadError(err)
	}
	var s *report.MLPerfRunSummary
	beside := run.Summaries
	if len(run.Ranks) > 0 || len(run.Unreadable) > 0 || len(run.TrialDirs) > 0 {
		// kvreplay results and kv-cache.py documents aggregate apart,
		// the second shown beside the first.
		runs := run.ByKind()
		s, err = report.AggregateMLPerf(ctx, runs[0], time.Now())
		if err != nil {
			return aggregateError(err)
		}
		for _, r := range runs[1:] {
			x, err := report.AggregateMLPerf(ctx, r, time.Now())
			if err != nil {
				return aggregateError(err)
			}
			beside[r.Ranks[0].Kind+" documents"] = x
		}
		if s.KVBench != nil && len(beside) > 0 {
			s.KVBench.Beside = beside
		}
	} else {
		// Only run summaries: the first by name, the others beside it.
		names := slices.Sorted(maps.Keys(run.Summaries))
		s = run.Summaries[names[0]]
		beside = map[string]*report.MLPerfRunSummary{}
		for _, name := range names[1:] {
			beside[name] = run.Summaries[name]
		}
	}
	err = writeOutput(ctx, output, stdout, func(w io.Writer) error { return report.RenderMLPerf(w, s, beside, format) })
	if err != nil {
		return err
	}
	return runFailure(s)
}

// aggregateError is an error of AggregateMLPerf as kvreport answers it:
// documents that do not aggregate are the user's (exit 2), a signal's
// stop is not (exit 1, cli.Main naming the signal).
func aggregateError(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return cli.Input(err)
}

// runFailure is the error of a run summary that is not of a whole run:
// rank results missing (partial_failure), ranks whose run was cut short
// (kvbench's incomplete_ranks; mlpstorage sums them as whole), ranks
// whose operations failed (kvbench's failed_ranks), trials
// with no rank result or missing from the run's numbers (kvbench's
// missing_trials), or an Option none of whose ranks reached storage
// (kvbench's cpu_tier_options, which Rules.md 6.3.4.4 fails); nil for a
// whole run.
func runFailure(s *report.MLPerfRunSummary) error {
	var why []string
	if s.PartialFailure {
		why = append(why, "partial_failure: rank results are missing (see missing_files)")
	}
	if s.KVBench != nil && len(s.KVBench.IncompleteRanks) > 0 {
		why = append(why, fmt.Sprintf("%d rank run(s) cut short, summed as if whole (see kvbench.incomplete_ranks): %s",
			len(s.KVBench.IncompleteRanks), joined(s.KVBench.IncompleteRanks)))
	}
	if s.KVBench != nil && len(s.KVBench.FailedRanks) > 0 {
		why = append(why, fmt.Sprintf("%d rank run(s) with failed operations, not a measurement (see kvbench.failed_ranks): %s",
			len(s.KVBench.FailedRanks), joined(s.KVBench.FailedRanks)))
	}
	if s.KVBench != nil && len(s.KVBench.MissingTrials) > 0 {
		why = append(why, fmt.Sprintf("%d trial(s) not measured (see kvbench.missing_trials): %s",
			len(s.KVBench.MissingTrials), joined(s.KVBench.MissingTrials)))
	}
	if s.KVBench != nil && len(s.KVBench.CPUTierOptions) > 0 {
		var names []string
		for _, o := range s.KVBench.CPUTierOptions {
			names = append(names, "option "+o)
		}
		why = append(why, fmt.Sprintf("%s: every rank served its working set from the CPU tier (see kvbench.cpu_tier_options): "+
			"no storage was measured, and Rules.md 6.3.4.4 fails such an Option", strings.Join(names, ", ")))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%s: written, but not a whole run", strings.Join(why, "; "))
}

// anyRunSummary reports whether any file of paths (globs expanded), or
// the first document on stdin when "-" is among them, is an mlpstorage
// kvcache_run_summary document, which kvreport shows as --aggregate
// mlperf does. Stdin is read whole and handed back re-readable.
func anyRunSummary(paths []string, stdin io.Reader) (bool, io.Reader, error) {
	found := false
	for _, p := range paths {
		if p != "-" {
			found = found || anyRegular(p, report.IsRunSummary)
			continue
		}
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return false, stdin, fmt.Errorf("stdin: %w", err)
		}
		stdin = bytes.NewReader(raw)
		var first json.RawMessage
		if json.NewDecoder(bytes.NewReader(raw)).Decode(&first) == nil && report.IsRunSummary(bytes.NewReader(first)) {
			found = true
		}
	}
	return found, stdin, nil
}

// joined is xs as their String methods say, separated by "; ".
func joined[T fmt.Stringer](xs []T) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return strings.Join(out, "; ")
}
