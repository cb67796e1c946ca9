package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

const mergeUsage = `kvreport merge: merge the result documents of the ranks of one run exactly.

Usage:
  kvreport merge [-o FILE] RESULT...

RESULT is a kvreplay result document (one per MPI rank of one run), a glob,
or "-" for a stream of documents on stdin. Their counters add up and their
latency histograms merge exactly (not averaged percentiles); the merged
document, which kvreport reads like any other, goes to -o FILE or stdout.
Every rank of the run must be given: --force merges part of them into a
document marked incomplete (never a PASS) that names the missing ranks.
Documents that are not distinct ranks of one run (a rank twice, other
traces, trials or --shard, another loop, --speed, --duration or --fsync,
windows far apart) are refused, and --force
merges them with a warning in the merged document; ranks replayed at
different --size-scale are refused even with --force: a merged document
states one size scale, at which all its bytes and rates are read, and
theirs would add bytes of two.
The ranks' warnings are kept once each, saying whose: "rank 2: ..." for
one rank's own (its "this rank" is rank 2), "all ranks: ..." for one
every rank gave.

Examples:
  kvreport merge rank*.json -o all.json
  kvreport merge rank*.json | kvreport -
`

// runMerge is kvreport merge: the ranks of one run merged exactly into one
// result document. Documents that are not all the distinct ranks of one
// run are refused, or merged with a warning under --force.
func runMerge(ctx context.Context, c *config, stdin io.Reader, stdout, stderr io.Writer) error {
	docs, err := load(ctx, c, stdin)
	if err != nil {
		return err
	}
	results, names, err := rankResults(docs)
	if err != nil {
		return err
	}
	checked := report.CheckRanks(results, names)
	if checked != nil {
		if errors.Is(checked, report.ErrScales) {
			return cli.Input(fmt.Errorf("merge: %w", checked)) // it says why --force cannot merge them
		}
		if !c.force {
			return cli.Input(fmt.Errorf("merge: %w (pass --force to merge anyway)", checked))
		}
		fmt.Fprintf(stderr, "kvreport: warning: merging anyway (--force): %v\n", checked)
	}
	merged, err := report.MergeRanksContext(ctx, results)
	if errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil {
		return cli.Input(err)
	}
	// A merge that lacks ranks says so itself (incomplete, PARTIAL
	// RUN), and stops saying so once merged with them.
	if missing := (*report.MissingRanksError)(nil); checked != nil && !errors.As(checked, &missing) {
		merged.Warnings = append(merged.Warnings, "MERGED ANYWAY (--force): "+checked.Error())
	}
	return write(ctx, c, stdout, docs, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(merged)
	})
}

// rankResults returns the results of docs and their names, refusing a
// document that is not a kvreplay result: only those merge.
func rankResults(docs []*report.Doc) ([]*schema.Result, []string, error) {
	results := make([]*schema.Result, len(docs))
	names := make([]string, len(docs))
	for i, d := range docs {
		if d.Kind != report.KindKVReplay {
			return nil, nil, cli.Input(fmt.Errorf("merge: %s: a %s document, only kvreplay results merge", d.Path, d.Kind))
		}
		results[i], names[i] = d.Result, d.Path
	}
	return results, names, nil
}
