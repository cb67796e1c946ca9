package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/schema"
)

// searchFits is setup.SearchFits for o's search: its warning goes into
// the result and, unless quiet, on stderr.
func searchFits(o *options, plan *replay.Plan) error {
	w, err := setup.SearchFits(o.search.Kind, &o.cfg, plan, &o.tiers)
	if w != "" {
		o.warnings = append(o.warnings, w)
		if o.tiers.Stderr != nil && !o.quiet {
			fmt.Fprintln(o.tiers.Stderr, "kvreplay: warning: "+w)
		}
	}
	return err
}

// runSearch runs a search: each probe a replay of --duration on fresh
// backends, its progress on stderr; the search document goes where a
// result would.
func runSearch(ctx context.Context, o *options, plan *replay.Plan, srcs []replay.Source, args []string, toStdout bool, stdout, stderr io.Writer) error {
	if err := setup.SearchSources(o.search.Kind, srcs); err != nil {
		return err
	}
	once := func(cfg *replay.Config, progress func(replay.Progress)) (*schema.Result, error) {
		res, err := replayOnce(ctx, o, cfg, plan, srcs, args, progress, stderr)
		if ctx.Err() != nil {
			// A signal stopped the search: its probe is no result.
			return nil, cmp.Or(err, ctx.Err())
		}
		return res, err
	}
	prog := &setup.SearchProgress{W: stderr, Live: cli.IsTerminal(stderr), Quiet: o.quiet, Now: time.Now, Max: o.search.Probes, Window: o.cfg.Duration}
	return searchWith(o, plan, setup.TotalUsers(plan, srcs), once, prog, args, toStdout, stdout)
}

// searchWith runs the search o asks for (setup.Search) and writes its
// document, with kvreplay's identity, where a result would go. A search
// that a probe stopped is written, then its error returned (exit 1).
func searchWith(o *options, plan *replay.Plan, total int, once setup.ReplayFunc, prog *setup.SearchProgress, args []string, toStdout bool, stdout io.Writer) error {
	so := o.search
	so.Config = o.cfg
	doc, err := setup.Search(so, plan, total, once, prog)
	if doc == nil {
		return err
	}
	doc.Tool, doc.ToolVersion = "kvreplay", cli.Version()
	doc.CommandLine = append([]string{"kvreplay"}, args...)
	doc.Label, doc.System, doc.Trial = o.label, o.system, o.trial
	doc.Host = host.Facts()
	doc.Config = setup.ConfigJSON(&o.cfg, &o.tiers)
	if werr := writeJSON(o, doc, toStdout, stdout); werr != nil {
		return werr
	}
	if !toStdout && o.out == nil && prog.W != nil {
		// stdout is a terminal and -o was not given: as a replay's
		// result, the document went nowhere, which the search says.
		fmt.Fprintln(prog.W, "kvreplay: search: document not written (the lines above are all there is; give -o FILE to keep it)")
	}
	return err
}
