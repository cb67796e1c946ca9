package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
		return fmt.Errorf("report: --format %s: --aggregate mlperf writes json, text or md", format)
	}
	md := format == "md"
	head := &table{title: "MLPerf Storage KV cache run summary (mlpstorage kvcache_run_summary, schema_version " + s.SchemaVersion + ")"}
	head.notes = append(head.notes, fmt.Sprintf("run_datetime %s, total_ranks %d, host_count %d, npernode %d, trials_per_option %d, partial_failure %t",
		s.RunDatetime, s.TotalRanks, s.HostCount, s.Npernode, s.TrialsPerOption, s.PartialFailure))
	if s.KVBench == nil {
		head.notes = append(head.notes, "an mlpstorage run summary of kv-cache.py's documents: bandwidths in its \"GB/s\", GiB/s (2^30 bytes/s)")
	}
	if kb := s.KVBench; kb != nil {
		head.notes = append(head.notes, "aggregated from "+kb.Source+" documents; bandwidths in "+kb.BandwidthUnit, kb.Rule)
		for _, w := range kb.Warnings {
			head.notes = append(head.notes, "WARNING: "+w)
		}
	}
	if err := head.write(w, md); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
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
	bnames := make([]string, 0, len(beside))
	for k := range beside {
		bnames = append(bnames, k)
	}
	slices.Sort(bnames)
	opt := func(v *float64) string {
		if v == nil {
			return "null"
		}
		return num(*v)
	}
	for _, k := range keys {
		o := s.Options[k]
		var p *MLPerfPooled
		if s.KVBench != nil {
			p = s.KVBench.Options[k]
		}
		t := &table{title: fmt.Sprintf("%s: %d trial(s) x %d rank(s)", optionName(k), o.TrialCount, o.RankCount),
			header: []string{"figure", "MLPerf rule (6.3.4)"}}
		pooled := p != nil && p.Pooled != nil
		if pooled {
			t.header = append(t.header, "kvbench pooled")
		}
		for _, b := range bnames {
			h := baseName(b)
			if x := beside[b]; x.KVBench == nil || x.KVBench.Source == KindReference {
				// mlpstorage's summaries add kv-cache.py's figures.
				h += " (GiB/s)"
			}
			t.header = append(t.header, h)
		}
		type rowDef struct {
			name  string
			rule  string
			pool  func(*MLPerfFigures) string
			other func(*MLPerfOption) string
		}
		rows := []rowDef{
			{"aggregated_read_bandwidth_gbps", num(o.AggregatedReadBandwidthGBps), func(f *MLPerfFigures) string { return num(f.ReadBandwidthGBps) },
				func(x *MLPerfOption) string { return num(x.AggregatedReadBandwidthGBps) }},
			{"aggregated_write_bandwidth_gbps", num(o.AggregatedWriteBandwidthGBps), func(f *MLPerfFigures) string { return num(f.WriteBandwidthGBps) },
				func(x *MLPerfOption) string { return num(x.AggregatedWriteBandwidthGBps) }},
			{"aggregated_storage_throughput_tokens_per_sec", num(o.AggregatedStorageThroughputTokensPerSec),
				func(f *MLPerfFigures) string { return num(f.StorageThroughputTokensPerSec) },
				func(x *MLPerfOption) string { return num(x.AggregatedStorageThroughputTokensPerSec) }},
			{"aggregated_device_read_p95_ms", opt(o.AggregatedDeviceReadP95MS), func(f *MLPerfFigures) string { return num(f.DeviceReadP95MS) },
				func(x *MLPerfOption) string { return opt(x.AggregatedDeviceReadP95MS) }},
			{"aggregated_device_write_p95_ms", opt(o.AggregatedDeviceWriteP95MS), func(f *MLPerfFigures) string { return num(f.DeviceWriteP95MS) },
				func(x *MLPerfOption) string { return opt(x.AggregatedDeviceWriteP95MS) }},
			{"request p95 ms (kvbench)", "-", func(f *MLPerfFigures) string { return num(f.RequestP95MS) }, func(*MLPerfOption) string { return "-" }},
			{"aggregated_avg_throughput_tokens_per_sec", num(o.AggregatedAvgThroughputTokensPerSec), func(*MLPerfFigures) string { return "-" },
				func(x *MLPerfOption) string { return num(x.AggregatedAvgThroughputTokensPerSec) }},
		}
		for _, r := range rows {
			row := []string{r.name, r.rule}
			if pooled {
				row = append(row, r.pool(p.Pooled))
			}
			for _, b := range bnames {
				if x := optionBeside(s, beside[b], k); x != nil {
					row = append(row, r.other(x))
				} else {
					row = append(row, "-")
				}
			}
			t.rows = append(t.rows, row)
		}
		t.notes = append(t.notes, fmt.Sprintf("partial_failure %t, missing_files [%s], cpu_tier_ranks [%s]", o.PartialFailure,
			strings.Join(o.MissingFiles, ", "), strings.Join(o.CPUTierRanks, ", ")))
		if p != nil {
			if p.NotPooled != "" {
				t.notes = append(t.notes, "no pooled view: "+p.NotPooled)
			}
			t.notes = append(t.notes, p.Differences...)
		}
		if err := t.write(w, md); err != nil {
			return err
		}
		if p == nil || len(p.Ranks) == 0 {
			continue
		}
		root := commonDir(p.Ranks)
		title := optionName(k) + ": per rank (what the rule combined)"
		if root != "" {
			title += ", documents in " + root
		}
		rt := &table{title: title,
			header: []string{"trial", "rank", "read GB/s", "write GB/s", "storage tok/s", "device read p95 ms", "device write p95 ms", "request p95 ms", "cpu tier", "document"}}
		for _, rk := range p.Ranks {
			path := rk.Path
			if rel, err := filepath.Rel(root, path); root != "" && err == nil {
				path = rel
			}
			rt.rows = append(rt.rows, []string{strconv.Itoa(rk.Trial), strconv.Itoa(rk.Rank), num(rk.ReadBandwidthGBps), num(rk.WriteBandwidthGBps),
				num(rk.StorageThroughputTokensPerSec), num(rk.DeviceReadP95MS), num(rk.DeviceWriteP95MS), num(rk.RequestP95MS),
				strconv.FormatBool(rk.CPUTier), path})
		}
		for _, tr := range p.Trials {
			rt.notes = append(rt.notes, fmt.Sprintf("trial %d pooled (ranks %v merged exactly): read %s GB/s, write %s GB/s, device read p95 %s ms, device write p95 %s ms, request p95 %s ms",
				tr.Trial, tr.Ranks, num(tr.ReadBandwidthGBps), num(tr.WriteBandwidthGBps), num(tr.DeviceReadP95MS), num(tr.DeviceWriteP95MS), num(tr.RequestP95MS)))
		}
		if err := rt.write(w, md); err != nil {
			return err
		}
	}
	return nil
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
