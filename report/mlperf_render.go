package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// RenderMLPerf renders a run summary: "json" writes the document itself
// (mlpstorage's kvcache_run_summary, with kvbench's block), "text" and
// "md" the figures of each Option under the rule and pooled side by side,
// the per-rank figures, the differences, and any run summaries given
// beside (compared by Option).
func RenderMLPerf(w io.Writer, s *MLPerfRunSummary, beside map[string]*MLPerfRunSummary, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "text", "md":
	default:
		return fmt.Errorf("report: --format %s: --aggregate mlperf writes json, text or md", parsemsg.Arg(format))
	}
	md := format == "md"
	if err := mlperfHead(s, beside).write(w, md); err != nil {
		return err
	}
	bnames := slices.Sorted(maps.Keys(beside))
	for _, k := range optionKeys(s.Options) {
		var p *MLPerfPooled
		if s.KVBench != nil {
			p = s.KVBench.Options[k]
		}
		if err := optionTable(s, k, p, beside, bnames).write(w, md); err != nil {
			return err
		}
		if p == nil || len(p.Ranks) == 0 {
			continue
		}
		if err := rankTable(k, p).write(w, md); err != nil {
			return err
		}
	}
	return nil
}

// mlperfHead is the run's table: its own fields, the documents' kind and
// unit (and that kv-cache.py's, its own or a summary's beside, are shown
// converted), the rule, and the warnings.
func mlperfHead(s *MLPerfRunSummary, beside map[string]*MLPerfRunSummary) *table {
	head := &table{title: "MLPerf Storage KV cache run summary (mlpstorage kvcache_run_summary, schema_version " + s.SchemaVersion + ")"}
	head.notes = append(head.notes, fmt.Sprintf("run_datetime %s, total_ranks %d, host_count %d, npernode %d, trials_per_option %d, partial_failure %t",
		s.RunDatetime, s.TotalRanks, s.HostCount, s.Npernode, s.TrialsPerOption, s.PartialFailure))
	converted := bandwidthScale(s) != 1
	for _, x := range beside {
		converted = converted || bandwidthScale(x) != 1
	}
	kb := s.KVBench
	what := "an mlpstorage run summary of kv-cache.py's documents, whose \"GB/s\" are GiB/s (2^30 bytes/s)"
	if kb != nil {
		what = "aggregated from " + kb.Source + " documents, whose bandwidths are in " + kb.BandwidthUnit
	}
	if converted {
		what += "; " + shownUnit
	}
	head.notes = append(head.notes, what)
	if kb == nil {
		return head
	}
	head.notes = append(head.notes, kb.Rule)
	if kb.DeviceLatency != "" {
		head.notes = append(head.notes, kb.DeviceLatency)
	}
	for _, w := range kb.Warnings {
		head.notes = append(head.notes, "WARNING: "+w)
	}
	return head
}

// optionKeys are a summary's Options in order: by number, else by name.
func optionKeys(options map[string]*MLPerfOption) []string {
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
	return keys
}

// shownUnit says in which unit the text and md views show bandwidths:
// one unit per figure, whatever the documents' (--format json keeps
// mlpstorage's figures as they are).
const shownUnit = "every bandwidth shown here is in GB/s (10^9 bytes/s), kv-cache.py's GiB/s converted exactly (x 1.073741824); --format json keeps each summary's own unit"

// gibPerGB converts kv-cache.py's "GB/s", GiB/s, to GB/s: 2^30 / 10^9,
// 1.073741824, which binary floating point holds to within half an ulp
// (2^21/5^9 is not a dyadic fraction): a converted figure is within a
// rounding or two of exact, far below the digits shown.
const gibPerGB = float64(1<<30) / 1e9

// bandwidthScale is what converts the bandwidths of summary x to GB/s:
// gibPerGB for a summary of kv-cache.py's documents (mlpstorage's, or
// kvreport's of kv-cache.py documents), 1 for kvreplay's.
func bandwidthScale(x *MLPerfRunSummary) float64 {
	if x.KVBench == nil || x.KVBench.Source == KindReference {
		return gibPerGB
	}
	return 1
}

// mlperfRow is a figure of an Option's table: its name, its unit, and its
// value in an Option of a summary (the rule's, or one shown beside) and
// in the pooled view; a bandwidth is multiplied by the scale that turns
// its summary's unit into GB/s (bandwidthScale).
type mlperfRow struct {
	name   string
	unit   string
	option func(o *MLPerfOption, scale float64) string
	pooled func(*MLPerfFigures) string
}

// mlperfRows are the rows of an Option's table, in order.
func mlperfRows() []mlperfRow {
	return []mlperfRow{
		{"aggregated_read_bandwidth_gbps", "GB/s", func(x *MLPerfOption, k float64) string { return num(x.AggregatedReadBandwidthGBps * k) },
			func(f *MLPerfFigures) string { return num(f.ReadBandwidthGBps) }},
		{"aggregated_write_bandwidth_gbps", "GB/s", func(x *MLPerfOption, k float64) string { return num(x.AggregatedWriteBandwidthGBps * k) },
			func(f *MLPerfFigures) string { return num(f.WriteBandwidthGBps) }},
		{"aggregated_storage_throughput_tokens_per_sec", "tok/s", func(x *MLPerfOption, _ float64) string { return num(x.AggregatedStorageThroughputTokensPerSec) },
			func(f *MLPerfFigures) string { return num(f.StorageThroughputTokensPerSec) }},
		{"aggregated_device_read_p95_ms", "ms", func(x *MLPerfOption, _ float64) string { return numOrNull(x.AggregatedDeviceReadP95MS) },
			func(f *MLPerfFigures) string { return num(f.DeviceReadP95MS) }},
		{"aggregated_device_write_p95_ms", "ms", func(x *MLPerfOption, _ float64) string { return numOrNull(x.AggregatedDeviceWriteP95MS) },
			func(f *MLPerfFigures) string { return num(f.DeviceWriteP95MS) }},
		{"request p95 ms (kvbench)", "ms", func(*MLPerfOption, float64) string { return "-" },
			func(f *MLPerfFigures) string { return num(f.RequestP95MS) }},
		{"aggregated_avg_throughput_tokens_per_sec", "tok/s", func(x *MLPerfOption, _ float64) string { return num(x.AggregatedAvgThroughputTokensPerSec) },
			func(*MLPerfFigures) string { return "-" }},
	}
}

// numOrNull is num of a figure that JSON may hold as null.
func numOrNull(v *float64) string {
	if v == nil {
		return "null"
	}
	return num(*v)
}

// optionTable is Option k's figures under the rule, pooled (p, when there
// is a pooled view), and in each summary beside (bnames, in order); its
// notes are the Option's failures and how the views differ.
func optionTable(s *MLPerfRunSummary, k string, p *MLPerfPooled, beside map[string]*MLPerfRunSummary, bnames []string) *table {
	o := s.Options[k]
	title := fmt.Sprintf("%s: %d trial(s) x %d rank(s)", optionName(k), o.TrialCount, o.RankCount)
	if o.KVBench != nil {
		title += ": " + o.KVBench.Verdict
	}
	t := &table{title: title,
		header: []string{"figure", "unit", "MLPerf rule (6.3.4)" + convertedNote(s)}}
	pooled := p != nil && p.Pooled != nil
	if pooled {
		t.header = append(t.header, "kvbench pooled")
	}
	for _, b := range bnames {
		t.header = append(t.header, besideHeader(b, beside[b]))
	}
	for _, r := range mlperfRows() {
		row := []string{r.name, r.unit, r.option(o, bandwidthScale(s))}
		if pooled {
			row = append(row, r.pooled(p.Pooled))
		}
		for _, b := range bnames {
			if x := optionBeside(s, beside[b], k); x != nil {
				row = append(row, r.option(x, bandwidthScale(beside[b])))
			} else {
				row = append(row, "-")
			}
		}
		t.rows = append(t.rows, row)
	}
	line := fmt.Sprintf("partial_failure %t, missing_files [%s], cpu_tier_ranks [%s]", o.PartialFailure,
		strings.Join(o.MissingFiles, ", "), strings.Join(o.CPUTierRanks, ", "))
	if v := o.KVBench; v != nil {
		// The rule's figures include failed and cut-short ranks, which
		// partial_failure does not say: the Option's line names them.
		line = fmt.Sprintf("verdict %s, %s, failed_ranks [%s], incomplete_ranks [%s]", v.Verdict, line,
			strings.Join(v.FailedRanks, ", "), strings.Join(v.IncompleteRanks, ", "))
	}
	t.notes = append(t.notes, line)
	if v := o.KVBench; v != nil {
		for _, w := range v.Why {
			t.notes = append(t.notes, v.Verdict+": "+w)
		}
	}
	if s.KVBench != nil && s.KVBench.Source == KindKVReplay {
		t.notes = append(t.notes, noAvgThroughput)
	}
	if p != nil {
		if p.NotPooled != "" {
			t.notes = append(t.notes, "no pooled view: "+p.NotPooled)
		}
		t.notes = append(t.notes, p.Differences...)
	}
	return t
}

// besideHeader is the column of a summary shown beside, named by its
// file's base name, saying when its bandwidths were converted.
func besideHeader(name string, x *MLPerfRunSummary) string {
	return baseName(name) + convertedNote(x)
}

// convertedNote is what a column of summary x's figures adds to its
// header when its bandwidths were converted to GB/s: kv-cache.py's
// (mlpstorage's summaries add kv-cache.py's figures).
func convertedNote(x *MLPerfRunSummary) string {
	if bandwidthScale(x) != 1 {
		return " (GiB/s converted to GB/s)"
	}
	return ""
}

// rankTable is what the rule combined for Option k: each rank's figures
// and document (relative to the run's directory), and each trial's ranks
// merged exactly.
func rankTable(k string, p *MLPerfPooled) *table {
	root := commonDir(p.Ranks)
	title := optionName(k) + ": per rank (what the rule combined)"
	if root != "" {
		title += ", documents in " + root
	}
	// In GB/s, kv-cache.py's GiB/s converted (an Option's ranks are of
	// one kind: ByKind).
	rt := &table{title: title,
		header: []string{"trial", "rank", "read GB/s", "write GB/s", "storage tok/s", "device read p95 ms", "device write p95 ms", "request p95 ms", "cpu tier", "run", "document"}}
	for _, rk := range p.Ranks {
		path := rk.Path
		if rel, err := filepath.Rel(root, path); root != "" && err == nil {
			path = rel
		}
		k := 1.0
		if rk.Kind == KindReference {
			k = gibPerGB
		}
		rt.rows = append(rt.rows, []string{strconv.Itoa(rk.Trial), strconv.Itoa(rk.Rank), num(rk.ReadBandwidthGBps * k), num(rk.WriteBandwidthGBps * k),
			num(rk.StorageThroughputTokensPerSec), num(rk.DeviceReadP95MS), num(rk.DeviceWriteP95MS), num(rk.RequestP95MS),
			strconv.FormatBool(rk.CPUTier), rankRun(rk), path})
	}
	for _, tr := range p.Trials {
		rt.notes = append(rt.notes, fmt.Sprintf("trial %d pooled (%s merged exactly): read %s GB/s, write %s GB/s, device read p95 %s ms, device write p95 %s ms, request p95 %s ms",
			tr.Trial, rankList(tr.Ranks), num(tr.ReadBandwidthGBps), num(tr.WriteBandwidthGBps), num(tr.DeviceReadP95MS), num(tr.DeviceWriteP95MS), num(tr.RequestP95MS)))
	}
	return rt
}

// rankRun says whether a rank's run is a measurement, as its document
// says: "whole", "FAILED" (operations failed, how many), "CUT SHORT", or
// "-" for a kv-cache.py document, which does not say.
func rankRun(rk MLPerfRank) string {
	r := rk.result
	switch {
	case r == nil:
		return "-"
	case r.Errors.Count > 0 && !r.Complete:
		return fmt.Sprintf("FAILED (%d ops), CUT SHORT", r.Errors.Count)
	case r.Errors.Count > 0:
		return fmt.Sprintf("FAILED (%d ops)", r.Errors.Count)
	case !r.Complete:
		return "CUT SHORT"
	}
	return "whole"
}

// commonDir is the directory that holds every rank's document, the run's
// (the documents' paths are shown relative to it); "" when they share
// none.
func commonDir(ranks []MLPerfRank) string {
	var root string
	for i, rk := range ranks {
		d := filepath.Dir(rk.Path)
		if i == 0 {
			root = d
			continue
		}
		for root != "." && root != "/" && !strings.HasPrefix(d+string(filepath.Separator), root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	// The run's directory, above its option_<O> directories.
	for base := filepath.Base(root); optionDir.MatchString(base) || trialDir.MatchString(base) || rankDir.MatchString(base); base = filepath.Base(root) {
		root = filepath.Dir(root)
	}
	if root == "." || root == "/" {
		return ""
	}
	return root
}

// optionBeside is the Option of other shown beside Option k of s: the
// same Option, or, when each summary has one Option only (a kv-cache.py
// document given without an option_<O> directory), that one.
func optionBeside(s, other *MLPerfRunSummary, k string) *MLPerfOption {
	if x := other.Options[k]; x != nil {
		return x
	}
	if len(s.Options) == 1 && len(other.Options) == 1 {
		for _, x := range other.Options {
			return x
		}
	}
	return nil
}
