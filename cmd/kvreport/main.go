// Command kvreport merges kvreplay result documents (trials, ranks,
// systems), computes statistics and comparisons, and renders reports.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

const usage = `kvreport: merge, compare and render kvreplay results.

Usage:
  kvreport [options] RESULT...         report on results, grouped by label
  kvreport merge [-o FILE] RESULT...   merge the ranks of one run exactly

RESULT is a kvreplay result document, a kv-cache.py --output document, a
kvtrace --output statistics document (shown as simulated, never as a
measurement), a glob, or "-" for a stream of documents on stdin. Documents are grouped by
their label (kvreplay --label, else --system, else the file name) unless
--label or --group-by say otherwise; the ranks of a trial are merged
exactly, and each metric gets n, median, mean, min, max, stddev, CV and P95
over trials, a ratio to the baseline group's median and a win rate over
matched trials. Bandwidths are GB/s and data GB (10^9 bytes); a tier's
bandwidth (tierN_read_bw) is its device rate, its offered load
(tierN_read_offered) the bytes over the run. Every format shows each
run's SLA per QoS class, and warns of comparisons of unlike runs.
Search documents (kvreplay --search) render on their own, as text, md,
html, json (each document whole, with its answer) or csv (a row a probe),
each answer compared with the first's.

--aggregate mlperf combines the per-rank, per-trial documents of a run
(directories laid out .../option_<O>/trial_<T>/rank_<N>/, as mlpstorage
and bench/mlperf-option.sh write them, or files with kvreplay --trial and
--rank) exactly as MLPerf Storage's Rules.md 6.3.4 says: storage read and
write bandwidth and storage throughput summed over the ranks of a trial
and averaged (fmean) over trials, device read and write p95 the largest
rank's; missing ranks in missing_files (exit status 1: a partial failure),
ranks whose working set never reached storage in cpu_tier_ranks. --format
json writes mlpstorage's kvcache_run_summary (schema_version 1.0; a
"kvbench" block adds the per-rank figures and the exact pooled view);
text and md show the rule's figures beside the pooled ones and any
kvcache_run_summary or kv-cache.py documents given, and how they differ.
kv-cache.py's per-rank documents aggregate by the same rule, apart from
kvreplay's (their "GB/s" are GiB/s). Given a kvcache_run_summary,
kvreport shows it this way without --aggregate.

Exit status: 0 when the report is written; 2 for bad usage or a document
kvreport cannot read; 1 when what came on stdin ("-") is not a valid
measurement, so that a pipeline whose kvreplay failed fails too: nothing at
all, a document cut short, or an incomplete run (a kvreplay stopped early, a
search that did not finish), which kvreport still renders before it exits 1.
A complete run whose storage_health is FAIL is a measurement (of a system
that fails): exit 0.

Examples:
  kvreport fast-*.json slow-*.json
  kvreport --baseline slow --format md fast-*.json slow-*.json > report.md
  kvreport --group-by system,config --format csv results/*.json > table.csv
  kvreport --format bench fast-*.json slow-*.json > all.txt; benchstat -col group all.txt
  kvreport kvcache_ref.json kvreplay.json
  kvreplay --fit -o - --label sysA trace.csv.zst | kvreport -
  kvreport merge rank*.json -o all.json
  kvreport --aggregate mlperf --format json -o kvcache_run_summary.json rank*.json
  kvreport --aggregate mlperf rank*.json kvcache_ref.json
`

const mergeUsage = `kvreport merge: merge the result documents of the ranks of one run exactly.

Usage:
  kvreport merge [-o FILE] RESULT...

RESULT is a kvreplay result document (one per MPI rank of one run), a glob,
or "-" for a stream of documents on stdin. Their counters add up and their
latency histograms merge exactly (not averaged percentiles); the merged
document, which kvreport reads like any other, goes to -o FILE or stdout.
Every rank of the run must be given: --force merges part of them into a
document marked incomplete (never a PASS) that names the missing ranks.

Examples:
  kvreport merge rank*.json -o all.json
  kvreport merge rank*.json | kvreport -
`

func main() {
	os.Exit(cli.Main("kvreport", os.Args[1:], os.Stdout, os.Stderr, runWith(os.Stdin)))
}

// runWith returns the tool's run function reading "-" from stdin.
func runWith(stdin io.Reader) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return run(ctx, args, stdin, stdout, stderr)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "help" {
		// kvreport help [merge]: the command's --help.
		switch {
		case len(args) == 1:
			args = []string{"--help"}
		case len(args) == 2 && args[1] == "merge":
			args = []string{"merge", "--help"}
		default:
			return cli.Usagef("help %s: no such command (want kvreport help [merge])", strings.Join(args[1:], " "))
		}
	}
	merge := len(args) > 0 && args[0] == "merge"
	help := usage
	if merge {
		args = args[1:]
		help = mergeUsage
	}
	fs := cli.NewFlagSet("kvreport", help, stderr)
	cli.AddStandard(fs)
	format := fs.StringP("format", "f", "text", "output format: "+strings.Join(report.Formats(), ", "))
	baseline := fs.String("baseline", "", "label of the group the others are compared with (default: the first group)")
	label := fs.String("label", "", "label every document with this label (one group)")
	groupBy := fs.StringSlice("group-by", nil, "label documents by these keys: system, label, config, file")
	metrics := fs.StringSlice("metrics", nil, "report only these metrics (default: all that any group has)")
	output := fs.StringP("output", "o", "-", `write to FILE ("-" is stdout)`)
	allowSystem := fs.Bool(cli.AllowSystemPathFlag, false, "let -o lie under a system directory (/etc, /usr, /dev, ...), which kvreport refuses by default")
	aggregate := fs.String("aggregate", "", "combine per-rank, per-trial documents as a benchmark's rules say: mlperf (MLPerf Storage Rules.md 6.3.4, written as mlpstorage's kvcache_run_summary with --format json, beside kvbench's pooled view)")
	force := fs.Bool("force", false, "merge documents that are not distinct ranks of one run (the same rank twice, different traces) or not all of them, with a warning")
	if merge {
		for _, name := range []string{"format", "baseline", "label", "group-by", "metrics", "aggregate"} {
			_ = fs.MarkHidden(name) // report options, not merge's
		}
	}
	paths, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	opt := report.LoadOptions{Label: *label, GroupBy: *groupBy,
		Open: func(name string) (io.ReadCloser, error) { return cli.OpenRead(ctx, name) }}
	var problems []error
	if len(paths) == 0 {
		problems = append(problems, errors.New("no RESULT given (see --help)"))
	}
	if *aggregate != "" && !slices.Contains(aggregations, *aggregate) {
		problems = append(problems, fmt.Errorf("--aggregate %s: must be one of %s", *aggregate, strings.Join(aggregations, ", ")))
	}
	if *aggregate != "" && !slices.Contains([]string{"json", "text", "md"}, *format) {
		problems = append(problems, fmt.Errorf("--format %s: --aggregate writes json, text or md", *format))
	}
	if !merge && !slices.Contains(report.Formats(), *format) {
		problems = append(problems, fmt.Errorf("--format %s: must be one of %s", *format, strings.Join(report.Formats(), ", ")))
	}
	if err := opt.Validate(); err != nil {
		problems = append(problems, err)
	}
	problems = append(problems, checkFiles(paths, *output, *allowSystem)...)
	if err := errors.Join(problems...); err != nil {
		return cli.Input(err)
	}
	if slices.Contains(paths, "-") {
		raw, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			return errNoStdin
		}
		stdin = bytes.NewReader(raw)
	}
	if !merge && *aggregate == "" && anyRunSummary(paths) && slices.Contains([]string{"json", "text", "md"}, *format) {
		// mlpstorage's run summaries compare as MLPerf runs.
		*aggregate = "mlperf"
	}
	if *aggregate != "" && !merge {
		return runMLPerf(ctx, paths, stdin, stdout, *output, *format)
	}
	if !merge {
		search, in, err := anySearch(paths, stdin)
		if err != nil {
			return cli.Input(err)
		}
		stdin = in
		if search {
			if !slices.Contains(report.SearchFormats, *format) {
				return cli.Input(fmt.Errorf("--format %s: search documents render as %s", *format, strings.Join(report.SearchFormats, ", ")))
			}
			docs, names, err := report.LoadSearches(paths, stdin)
			if err != nil {
				return loadError(err)
			}
			err = cli.WriteOutput(ctx, *output, stdout, func(w io.Writer) error { return report.RenderSearches(w, docs, names, *format) })
			if err != nil {
				return err
			}
			for i, d := range docs {
				if names[i] == "-" && !d.Done {
					return fmt.Errorf("stdin: the search did not finish (%s): rendered, but its answer is not a measurement (did the command before kvreport fail?)", d.Reason)
				}
			}
			return nil
		}
	}
	docs, err := report.Load(paths, stdin, opt)
	if err != nil {
		return loadError(err)
	}
	// What came on stdin and is not a whole run fails the pipeline once
	// rendered: the command before kvreport failed.
	write0 := func(fn func(io.Writer) error) error { return cli.WriteOutput(ctx, *output, stdout, fn) }
	write := func(fn func(io.Writer) error) error {
		if err := write0(fn); err != nil {
			return err
		}
		return incompleteOnStdin(docs)
	}
	if !merge && *output == "-" && report.Binary(*format) && cli.IsTerminal(stdout) {
		return cli.Usagef("--format %s: refusing to write a binary file to a terminal: give -o FILE or redirect stdout", *format)
	}
	if merge {
		results := make([]*schema.Result, len(docs))
		names := make([]string, len(docs))
		for i, d := range docs {
			if d.Kind != report.KindKVReplay {
				return cli.Input(fmt.Errorf("merge: %s: a %s document, only kvreplay results merge", d.Path, d.Kind))
			}
			results[i], names[i] = d.Result, d.Path
		}
		checked := report.CheckRanks(results, names)
		if checked != nil {
			if !*force {
				return cli.Input(fmt.Errorf("merge: %w (pass --force to merge anyway)", checked))
			}
			fmt.Fprintf(stderr, "kvreport: warning: merging anyway (--force): %v\n", checked)
		}
		merged, err := report.MergeRanks(results)
		if err != nil {
			return cli.Input(err)
		}
		// A merge that lacks ranks says so itself (incomplete, PARTIAL
		// RUN), and stops saying so once merged with them.
		if missing := (*report.MissingRanksError)(nil); checked != nil && !errors.As(checked, &missing) {
			merged.Warnings = append(merged.Warnings, "MERGED ANYWAY (--force): "+checked.Error())
		}
		return write(func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(merged)
		})
	}
	rep, err := report.Build(docs, report.BuildOptions{Baseline: *baseline, Metrics: *metrics, Force: *force})
	if err != nil {
		return cli.Input(err)
	}
	return write(func(w io.Writer) error { return report.Render(w, rep, *format) })
}

// errNoStdin is kvreport's answer to an empty stdin: the command before it
// in a pipeline failed, and a pipeline that failed must not look as if it
// passed.
var errNoStdin = errors.New("no document on stdin: did the command before kvreport fail?")

// loadError marks an unreadable document as the user's (exit 2), except a
// document on stdin cut short, which a failed command before kvreport
// leaves (exit 1).
func loadError(err error) error {
	if pe, ok := errors.AsType[*report.ParseError](err); ok && pe.File == "-" && strings.HasPrefix(pe.Msg, "unexpected end of input") {
		return fmt.Errorf("%w (did the command before kvreport fail?)", err)
	}
	if errors.Is(err, context.Canceled) {
		return err // a signal stopped the wait for a named pipe's writer: not bad input
	}
	return cli.Input(err)
}

// incompleteOnStdin returns an error for the first kvreplay document read
// from stdin that is not a whole run (incomplete: stopped by a signal, a
// full disk, an I/O error, or a trace cut short): kvreport has rendered
// it, and exits 1 so that the pipeline that made it does not pass.
func incompleteOnStdin(docs []*report.Doc) error {
	for _, d := range docs {
		if !strings.HasPrefix(d.Path, "-#") || d.Kind != report.KindKVReplay || d.Result.Complete {
			continue
		}
		why := d.Result.IncompleteReason
		if why == "" {
			why = "incomplete"
		}
		return fmt.Errorf("%s: an incomplete run (%s): rendered, but not a valid measurement (did the command before kvreport fail?)", d.Path, why)
	}
	return nil
}

// checkFiles refuses an -o that kvreport must not write: a system path, or
// one of the documents it reads (globs expanded as Load expands them).
func checkFiles(paths []string, output string, allowSystem bool) []error {
	files := cli.Files{AllowSystem: allowSystem, Outputs: []cli.File{{Flag: "-o", Path: output}}}
	for _, p := range paths {
		matches, err := filepath.Glob(p)
		if err != nil || len(matches) == 0 {
			matches = []string{p}
		}
		for _, m := range matches {
			files.Inputs = append(files.Inputs, cli.File{Flag: "the document", Path: m})
		}
	}
	return files.Check()
}

// anySearch reports whether any of paths (globs expanded, as Load
// expands them) is a search document (kvreplay --search), reading each
// file only as far as its format. Stdin, when given, is read whole and
// handed back re-readable.
func anySearch(paths []string, stdin io.Reader) (bool, io.Reader, error) {
	for _, p := range paths {
		if p == "-" {
			raw, err := io.ReadAll(stdin)
			if err != nil {
				return false, stdin, fmt.Errorf("stdin: %w", err)
			}
			stdin = bytes.NewReader(raw)
			if report.IsSearch(bytes.NewReader(raw)) {
				return true, stdin, nil
			}
			continue
		}
		if anyRegular(p, report.IsSearch) {
			return true, stdin, nil
		}
	}
	return false, stdin, nil
}

// anyRegular reports whether sniff says yes to any file that pattern
// names (a glob, expanded as Load expands it). It looks only into regular
// files, which can be opened and read more than once: a named pipe (or a
// shell's <(command), a pipe named /dev/fd/N) is read once, by
// report.Load, not first looked into here, which would take its bytes (and
// wait in open(2) for a writer that never comes). A bad pattern or a file
// that does not open is passed over: Load reports it.
func anyRegular(pattern string, sniff func(io.Reader) bool) bool {
	names, _ := report.Expand(pattern)
	for _, name := range names {
		if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		ok := sniff(f)
		f.Close()
		if ok {
			return true
		}
	}
	return false
}
