// Command kvreport merges kvreplay result documents (trials, ranks,
// systems), computes statistics and comparisons, and renders reports.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/internal/syspath"
	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/results"
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
matched trials. Text the documents hold (labels, warnings, reasons, file
names) is shown alike in every format with its control characters
escaped as Go writes them ("\n", "\x1b"), so that none breaks a table or
forges a line; a csv field that would begin as a spreadsheet formula
(=, +, -, @) is led by an apostrophe. Bandwidths are GB/s and data GB
(10^9 bytes); a tier's bandwidth (tierN_read_bw) is its device rate, its offered load
(tierN_read_offered) the bytes over the run. Every format shows each
run's SLA per QoS class, and warns of comparisons of unlike runs.
A figure a run did not measure (the offered load of a tier it never
used, a latency of an operation it never did) is shown as absent ("-",
an empty csv field, no json key), never as 0; a pair of trials with a
metric absent on either side or 0 on both is not compared (no win rate).

Warnings lead every format, each naming its group: unlike runs (other
traces, --size-scale, --duration windows, loops), incomplete trials,
failed operations, a storage_health FAIL, and VARIES OVER TRIALS: a
group of 2 or more trials in which any metric's coefficient of variation
(stddev / mean) over its trials is above 10%, each such metric named with
its CV, MLPerf Storage's headline metrics (tier2_read_offered,
tier2_read_device_p95, tier2_write_device_p95,
storage_throughput_tokens_per_sec) first. MLPerf runs 3 trials and scores
its headline over them, setting no bound on their spread; 10% is
kvbench's. A rank's warning in a merged run names its rank ("rank 2: "),
or "all ranks: " when every rank gave it; a rank whose own storage_health
was not PASS is named so, with its reasons, and one that FAILed fails the
merged run (a merged PASS means every rank passed). A kvreplay run cut
short or with failed operations is marked "not a measurement" beside its
label, in every format: shown, never compared (no ratio or win rate for
it or against it).

Search documents (kvreplay --search) render on their own, as text, md,
html, json (each document whole, with its answer) or csv (a row a probe),
each answer compared with the first's (or --baseline's: a search's name
as listed, "A trial 2", its file, or its system or label, "A", where one
search has it).

--aggregate mlperf combines the per-rank, per-trial documents of a run
(directories laid out .../option_<O>/trial_<T>/rank_<N>/, as mlpstorage
and bench/mlperf-option.sh write them, one result in each rank's, or files
with kvreplay --trial and --rank) exactly as MLPerf Storage's Rules.md 6.3.4 says: storage read and
write bandwidth and storage throughput summed over the ranks of a trial
and averaged (fmean) over trials, device read and write p95 the largest
rank's; missing ranks in missing_files (exit status 1: a partial failure),
ranks whose working set never reached storage in cpu_tier_ranks (an
Option none of whose ranks reached storage, which Rules.md 6.3.4.4 fails,
in the kvbench block's cpu_tier_options: exit status 1). A rank
cut short (complete false) is summed as mlpstorage sums it, and listed in
the kvbench block's incomplete_ranks (exit status 1: not a whole run); a
rank whose operations failed, in its failed_ranks (exit status 1); so
is a trial that is not a measurement, in its missing_trials: a trial_<T>
directory with no rank result (with no trial to say how many ranks the run
had, its directory in missing_files, a partial failure), or a trial number
that an Option lacks among the run's trials (each Option runs the same
trials, numbered from 0 or 1; a gap is, as mlpstorage makes it, a trial
of missing ranks, its sums 0 in the means, its ranks in missing_files).
A kvcache_run_summary at the top of the run's directory (mlpstorage's)
says how many ranks and trials the run had: a rank or a last trial that
left no result there is missing too, and a rank_<N> past its ranks is
refused (exit status 2: no rank of the run, which mlpstorage never reads).
Each Option's own line (text, md) and record (json: options.<O>.kvbench)
gives kvbench's verdict on whether its figures are a measurement: NOT A
MEASUREMENT, naming the failed_ranks and incomplete_ranks they include and
each reason, when any of the above is of that Option (exit status 1);
MEASURED otherwise (of whole runs: not storage_health, and not a check of
a CLOSED submission).
What the rank documents say of themselves (a scaled run, buffered I/O,
failed operations) is in the kvbench block's warnings, naming the ranks;
so is how the run departs from a CLOSED submission, among what its
documents say (its closed_departures, "NOT CLOSED: ..."): Options 1, 2
or 3 missing, trials other than 3, and kvreplay ranks whose traces were
made with other parameters than Table KVCache-1's, a seed other than
42+rank or autoscaling, or replayed below full size or without --fsync
(an OPEN run, exit status 0; none found does not make a run CLOSED: its
file systems, delays and preconditioning are not in its documents);
an Option whose ranks or trials ran at different --size-scale is refused
(exit status 2): the rule would add bytes of two scales; so is a merged
document (kvreport merge), whose figures are several ranks', a result
in an option_<O> directory whose label or trace names another Option,
one in a rank_<N> directory that is another rank of its run, and one in
a trial_<T> directory that is another trial (kvreplay --trial). --format
json writes mlpstorage's kvcache_run_summary (schema_version 1.0; a
"kvbench" block adds the per-rank figures and the exact pooled view),
its run_datetime the one the run's directory is named by (mlpstorage's
run/<ts>, mlperf-option.sh's kvbench_mlperf_<ts>, which names the
summary file too), else the earliest document's start;
text and md show the rule's figures beside the pooled ones and any
kvcache_run_summary or kv-cache.py documents given, and how they differ,
every bandwidth in GB/s (kv-cache.py's GiB/s converted exactly; json keeps
each summary's own unit).
kv-cache.py's per-rank documents aggregate by the same rule, apart from
kvreplay's (their "GB/s" are GiB/s). Given a kvcache_run_summary,
kvreport shows it this way without --aggregate.

Exit status: 0 when the report is written; 2 for bad usage or a document
kvreport cannot read (keys match exactly, as Python reads them: a key that
names a field only in another case, or one given twice in an object, is
refused; a damaged document too: a negative time, count, rank or
trial, a size scale outside (0, 1], a figure no run gives, percentiles out
of order, counts that disagree, an SLA or a verdict its own figures do not
give), or an -o that
is an input, a system path, a directory or a .json file in a rank_<N>
directory (which --aggregate mlperf would read as the rank's); 1 when what came on stdin ("-") is not a valid
measurement, so that a pipeline whose kvreplay failed fails too: nothing at
all, a document cut short, an incomplete run (a kvreplay stopped early, a
search a probe stopped) or a run whose operations failed (kvreplay
stops at the first), which kvreport still renders before it exits 1.
A complete run without failed operations whose storage_health is FAIL is a
measurement (of a system that fails): exit 0.

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

func main() {
	os.Exit(cli.Main("kvreport", os.Args[1:], os.Stdout, os.Stderr, runWith(os.Stdin)))
}

// runWith returns the tool's run function reading "-" from stdin.
func runWith(stdin io.Reader) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return run(ctx, args, stdin, stdout, stderr)
	}
}

// run is kvreport: the command line parsed and checked, then the report
// or the merge written; cli.Main maps its error to the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	args, err := helpArgs(args)
	if err != nil {
		return err
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.stdin, _ = stdin.(*os.File) // a file, which -o must not be
	if err := cfg.validate(); err != nil {
		return err
	}
	if stdin, err = readStdin(cfg.paths, stdin); err != nil {
		return err
	}
	if cfg.merge {
		return runMerge(ctx, cfg, stdin, stdout, stderr)
	}
	return runReport(ctx, cfg, stdin, stdout)
}

// config is kvreport's command line: a report, or kvreport merge.
type config struct {
	merge       bool
	paths       []string // the RESULT operands
	stdin       *os.File // what "-" reads, where it is a file (nil: os.Stdin)
	format      string
	baseline    string
	label       string
	groupBy     []string
	metrics     []string
	output      string
	allowSystem bool
	aggregate   string
	force       bool
}

// given are the options among names (the report's options on results:
// --baseline, --label, --group-by, --metrics, --force) that c was given.
func (c *config) given(names ...string) []string {
	set := map[string]bool{"--baseline": c.baseline != "", "--label": c.label != "", "--group-by": len(c.groupBy) > 0,
		"--metrics": len(c.metrics) > 0, "--force": c.force}
	var out []string
	for _, n := range names {
		if set[n] {
			out = append(out, n)
		}
	}
	return out
}

// aggregateFormats are the formats --aggregate writes.
var aggregateFormats = []string{"json", "text", "md"}

// reportOnly are the report's options, which kvreport merge refuses.
var reportOnly = []string{"format", "baseline", "label", "group-by", "metrics", "aggregate"}

// helpArgs turns kvreport help [merge] into the command's --help.
func helpArgs(args []string) ([]string, error) {
	if len(args) == 0 || args[0] != "help" {
		return args, nil
	}
	switch {
	case len(args) == 1:
		return []string{"--help"}, nil
	case len(args) == 2 && args[1] == "merge":
		return []string{"merge", "--help"}, nil
	default:
		return nil, cli.Usagef("help %s: no such command (want kvreport help [merge])", strings.Join(args[1:], " "))
	}
}

// parseFlags parses the command line of a report, or of kvreport merge
// when args start with merge; its errors are pflag's (an unknown option,
// --help).
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{merge: len(args) > 0 && args[0] == "merge"}
	help := usage
	if c.merge {
		args = args[1:]
		help = mergeUsage
	}
	fs := cli.NewFlagSet("kvreport", help, stderr)
	cli.AddStandard(fs)
	fs.StringVarP(&c.format, "format", "f", "text", "output format: "+strings.Join(report.Formats(), ", "))
	fs.StringVar(&c.baseline, "baseline", "", "label of the group the others are compared with (default: the first group)")
	fs.StringVar(&c.label, "label", "", "label every document with this label (one group)")
	fs.StringSliceVar(&c.groupBy, "group-by", nil, "label documents by these keys: system, label, config, file")
	fs.StringSliceVar(&c.metrics, "metrics", nil, "report only these metrics (default: all that any group has)")
	fs.StringVarP(&c.output, "output", "o", "-", `write to FILE ("-" is stdout)`)
	fs.BoolVar(&c.allowSystem, cli.AllowSystemPathFlag, false, "let -o lie under a system directory (/etc, /usr, /dev, ...), which kvreport refuses by default")
	fs.StringVar(&c.aggregate, "aggregate", "", "combine per-rank, per-trial documents as a benchmark's rules say: mlperf (MLPerf Storage Rules.md 6.3.4, written as mlpstorage's kvcache_run_summary with --format json, beside kvbench's pooled view)")
	fs.BoolVar(&c.force, "force", false, "merge documents that are not distinct ranks of one run (the same rank twice, different traces) or not all of them, with a warning; never ranks of different --size-scale")
	if c.merge {
		for _, name := range reportOnly {
			_ = fs.MarkHidden(name)
		}
	}
	paths, err := cli.ParseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if c.merge {
		// A report option given to merge would be ignored: its one JSON
		// document is not what the option asked for (--format json is).
		var given []string
		for _, name := range reportOnly {
			if fs.Changed(name) && (name != "format" || c.format != "json") {
				given = append(given, "--"+name)
			}
		}
		if len(given) > 0 {
			return nil, cli.Usagef("%s: a report option, not merge's: kvreport merge writes one result document (JSON) to -o; report on it with kvreport", strings.Join(given, ", "))
		}
	}
	c.paths = paths
	return c, nil
}

// validate reports every problem of the command line at once, one per
// line, as bad input (exit 2).
func (c *config) validate() error {
	var problems []error
	if len(c.paths) == 0 {
		problems = append(problems, errors.New("no RESULT given (see --help)"))
	}
	if slices.Contains(c.paths, "") {
		problems = append(problems, errors.New(`RESULT "": empty file name (want a file, a glob, or - for stdin)`))
	}
	if i := slices.Index(c.paths, "-"); i >= 0 && slices.Contains(c.paths[i+1:], "-") {
		problems = append(problems, errors.New("stdin (-) given twice: it is read once, as one stream of documents"))
	}
	if c.aggregate != "" && !slices.Contains(aggregations, c.aggregate) {
		problems = append(problems, fmt.Errorf("--aggregate %s: must be one of %s", parsemsg.Arg(c.aggregate), strings.Join(aggregations, ", ")))
	}
	if c.aggregate != "" && !slices.Contains(aggregateFormats, c.format) {
		problems = append(problems, fmt.Errorf("--format %s: --aggregate writes json, text or md", parsemsg.Arg(c.format)))
	}
	if !c.merge && !slices.Contains(report.Formats(), c.format) {
		problems = append(problems, fmt.Errorf("--format %s: must be one of %s", parsemsg.Arg(c.format), strings.Join(report.Formats(), ", ")))
	}
	if err := c.loadOptions().Validate(); err != nil {
		problems = append(problems, err)
	}
	problems = append(problems, checkFiles(c.paths, c.output, c.allowSystem, c.stdin)...)
	return cli.Input(errors.Join(problems...))
}

// loadOptions are report.Load's options, but Open, which load sets.
func (c *config) loadOptions() report.LoadOptions {
	return report.LoadOptions{Label: c.label, GroupBy: c.groupBy}
}

// load reads the documents of c.paths, "-" from stdin, opening files
// through ctx.
func load(ctx context.Context, c *config, stdin io.Reader) ([]*report.Doc, error) {
	opt := c.loadOptions()
	opt.Open = opener(ctx)
	docs, err := report.Load(c.paths, stdin, opt)
	if err != nil {
		return nil, loadError(err)
	}
	return docs, nil
}

// opener opens a named file for reading under ctx (cli.OpenRead: a named
// pipe's writer is waited for until ctx is done), once ctx is checked: a
// signal stops the reading of many files before the next one.
func opener(ctx context.Context) func(name string) (io.ReadCloser, error) {
	return func(name string) (io.ReadCloser, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return cli.OpenRead(ctx, name)
	}
}

// writeOutput writes what render writes to -o as cli.WriteOutput does (a
// file to a temporary one, renamed once whole), each write once ctx is
// checked, and ctx checked once more before the file is renamed: a
// signal while rendering stops it, and leaves nothing at -o.
func writeOutput(ctx context.Context, output string, stdout io.Writer, render func(io.Writer) error) error {
	return cli.WriteOutput(ctx, "-o", output, stdout, func(w io.Writer) error {
		if err := render(ctxWriter{ctx: ctx, w: w}); err != nil {
			return err
		}
		return ctx.Err()
	})
}

// ctxWriter is w, whose writes fail with ctx's error once ctx is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// readStdin reads stdin whole when "-" is among paths, so that it can be
// looked into before it is loaded, and refuses an empty one (errNoStdin).
func readStdin(paths []string, stdin io.Reader) (io.Reader, error) {
	if !slices.Contains(paths, "-") {
		return stdin, nil
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errNoStdin
	}
	return bytes.NewReader(raw), nil
}

// runReport renders the report on c.paths: as MLPerf's rules aggregate
// them (--aggregate, or run summaries given), as searches when any is
// one, else grouped, with statistics and comparisons.
func runReport(ctx context.Context, c *config, stdin io.Reader, stdout io.Writer) error {
	// --aggregate, or mlpstorage's run summaries, which compare as MLPerf runs.
	summary, stdin, err := anyRunSummary(c.paths, stdin)
	if err != nil {
		return cli.Input(err)
	}
	if c.aggregate != "" || summary {
		if !slices.Contains(aggregateFormats, c.format) {
			// Read as a result, it would be "an unknown document format".
			return cli.Input(fmt.Errorf("--format %s: an mlpstorage kvcache_run_summary renders as %s, as --aggregate mlperf does",
				c.format, strings.Join(aggregateFormats, ", ")))
		}
		// The report's options for results would be ignored: refused.
		if unused := c.given("--baseline", "--label", "--group-by", "--metrics", "--force"); len(unused) > 0 {
			return cli.Usagef("%s: options of a report on results: the MLPerf aggregation combines a run's rank results as Rules.md 6.3.4 says, "+
				"by their option_<O>/trial_<T>/rank_<N> places, every metric of the rule", strings.Join(unused, ", "))
		}
		return runMLPerf(ctx, c.paths, stdin, stdout, c.output, c.format)
	}
	search, stdin, err := anySearch(c.paths, stdin)
	if err != nil {
		return cli.Input(err)
	}
	if search {
		return runSearch(ctx, c, stdin, stdout)
	}
	docs, err := load(ctx, c, stdin)
	if err != nil {
		return err
	}
	if c.output == "-" && report.Binary(c.format) && cli.IsTerminal(stdout) {
		return cli.Usagef("--format %s: refusing to write a binary file to a terminal: give -o FILE or redirect stdout", c.format)
	}
	rep, err := report.Build(docs, report.BuildOptions{Baseline: c.baseline, Metrics: c.metrics, Force: c.force})
	if err != nil {
		return cli.Input(err)
	}
	return write(ctx, c, stdout, docs, func(w io.Writer) error { return report.Render(w, rep, c.format) })
}

// write writes what render writes to -o, then answers for the documents:
// what came on stdin and is not a whole run fails the pipeline once
// rendered (incompleteOnStdin), as the command before kvreport failed.
func write(ctx context.Context, c *config, stdout io.Writer, docs []*report.Doc, render func(io.Writer) error) error {
	if err := writeOutput(ctx, c.output, stdout, render); err != nil {
		return err
	}
	return incompleteOnStdin(docs)
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
// from stdin that is not a valid measurement (results.NotAMeasurement: an
// incomplete run, stopped by a signal, a full disk, an I/O error, or a
// trace cut short; or one whose operations failed): kvreport has rendered
// it, and exits 1 so that the pipeline that made it does not pass.
func incompleteOnStdin(docs []*report.Doc) error {
	for _, d := range docs {
		if !strings.HasPrefix(d.Path, "-#") || d.Kind != report.KindKVReplay {
			continue
		}
		if why := results.NotAMeasurement(d.Result); why != "" {
			return fmt.Errorf("%s: %s: rendered, but not a valid measurement (did the command before kvreport fail?)", d.Path, why)
		}
	}
	return nil
}

// rankDir is the name of the rank_<N> directory output lies in, as it is
// written or where the kernel puts it (through links, or a relative path
// given inside one); "" where it lies in none.
func rankDir(output string) string {
	dirs := []string{filepath.Dir(output)}
	if r, err := syspath.Reached(output); err == nil {
		dirs = append(dirs, filepath.Dir(r))
	}
	for _, d := range dirs {
		if b := filepath.Base(d); report.IsRankDir(b) {
			return b
		}
	}
	return ""
}

// checkFiles refuses an -o that kvreport must not write: a system path,
// one of the documents it reads (globs expanded as Load expands them, a
// run directory's .json files; "-", the file stdin reads, nil for
// os.Stdin), or a .json file in a rank_<N> directory.
func checkFiles(paths []string, output string, allowSystem bool, stdin *os.File) []error {
	var problems []error
	if dir := rankDir(output); output != "-" && strings.EqualFold(filepath.Ext(output), ".json") && dir != "" {
		// The MLPerf aggregation reads each .json file there as the
		// rank's result: the next aggregation of the run would fail on
		// two, or read this one.
		problems = append(problems, fmt.Errorf("-o %s: a .json file in a %s directory, where the MLPerf aggregation reads each .json file as "+
			"the rank's result: write it elsewhere (a run's kvcache_run_summary goes in the run's directory, above its option_<O> directories)", output, dir))
	}
	files := cli.Files{AllowSystem: allowSystem, Stdin: stdin, Outputs: []cli.File{{Flag: "-o", Path: output}}}
	for _, p := range paths {
		matches, err := filepath.Glob(p)
		if err != nil || len(matches) == 0 {
			matches = []string{p}
		}
		for _, m := range matches {
			files.Inputs = append(files.Inputs, cli.File{Flag: "the document", Path: m})
			// A run's directory (--aggregate mlperf): each .json file in
			// it may be one of its documents (a rank's result, the run's
			// kvcache_run_summary); what the aggregation does not read
			// (kvreport --aggregate mlperf RUN > RUN/summary.txt) is no
			// input.
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				_ = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
					if err == nil && d.Type().IsRegular() && strings.EqualFold(filepath.Ext(path), ".json") {
						files.Inputs = append(files.Inputs, cli.File{Flag: "the document", Path: path})
					}
					return nil
				})
			}
		}
	}
	return append(problems, files.Check()...)
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
