package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/results"
	"github.com/kvbench/kvbench/schema"
)

// Metric names that are not per tier.
const (
	MetricDecodeBytesRead = "decode_bytes_read"
	MetricStorageTokens   = "storage_tokens_per_s"
	MetricRequestsPerS    = "requests_per_s"
	MetricRequestP95      = "request_storage_p95"
	MetricLagP99          = "lag_p99"
	MetricElapsed         = "elapsed"
	MetricHealth          = "storage_health_pass"
)

// tierMetric names a per-tier metric: tier 2, "read_bw" -> "tier2_read_bw".
func tierMetric(tier int, what string) string { return fmt.Sprintf("tier%d_%s", tier, what) }

// Metrics returns the catalogue of metrics kvreport computes, in the
// order reports show them. Bandwidths are in MB/s (10^6 bytes) over the
// run's wall time, latencies in milliseconds, decode bytes in GiB;
// storage_health_pass is 1 for PASS and 0 for FAIL.
func Metrics() []Metric {
	var ms []Metric
	for t := range schema.NumTiers {
		ms = append(ms, Metric{tierMetric(int(t), "read_bw"), "MB/s", "higher"},
			Metric{tierMetric(int(t), "write_bw"), "MB/s", "higher"})
	}
	for _, from := range []string{"", "sched_"} {
		for _, op := range []string{"read", "write"} {
			for _, p := range []string{"p50", "p95", "p99"} {
				ms = append(ms, Metric{"tier2_" + op + "_" + from + p, "ms", "lower"})
			}
		}
	}
	return append(ms,
		Metric{MetricDecodeBytesRead, "GiB", "higher"},
		Metric{MetricStorageTokens, "tok/s", "higher"},
		Metric{MetricRequestsPerS, "req/s", "higher"},
		Metric{MetricRequestP95, "ms", "lower"},
		Metric{MetricLagP99, "ms", "lower"},
		Metric{MetricElapsed, "s", "lower"},
		Metric{MetricHealth, "pass", "higher"},
	)
}

// MetricsOf computes the metrics of one (merged) kvreplay result. A metric
// the result cannot give (no Tier-2 reads, no requests, tokens per second
// without the trace's bytes per token) is absent, never zero.
func MetricsOf(r *schema.Result) (map[string]float64, error) {
	v := map[string]float64{MetricElapsed: r.WallS, MetricDecodeBytesRead: r.Summary.DecodeBytesReadGB}
	for t := range schema.NumTiers {
		v[tierMetric(int(t), "read_bw")] = 0
		v[tierMetric(int(t), "write_bw")] = 0
	}
	var tier2Bytes int64
	for _, tt := range r.Tiers {
		t, err := schema.ParseTier(tt.Tier)
		if err != nil {
			continue
		}
		v[tierMetric(int(t), "read_bw")] = tt.ReadBandwidthBps / 1e6
		v[tierMetric(int(t), "write_bw")] = tt.WriteBandwidthBps / 1e6
		if t == schema.TierNVMe {
			tier2Bytes = tt.ReadBytes + tt.WriteBytes
		}
	}
	for _, op := range []schema.Op{schema.OpRead, schema.OpWrite} {
		for _, from := range []string{"", "sched_"} {
			m, err := results.TierOpLatency(r.Cells, schema.TierNVMe, op, from != "")
			if err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			if m.Count == 0 {
				continue
			}
			pre := "tier2_" + strings.ToLower(op.String()) + "_" + from
			v[pre+"p50"], v[pre+"p95"], v[pre+"p99"] = m.P50US/1000, m.P95US/1000, m.P99US/1000
		}
	}
	if s := r.Summary.StorageThroughputTokensPerSec; s > 0 || tier2Bytes == 0 {
		v[MetricStorageTokens] = s
	}
	if r.Requests.Count > 0 {
		if r.WallS > 0 {
			v[MetricRequestsPerS] = float64(r.Requests.Count) / r.WallS
		}
		v[MetricRequestP95] = r.Requests.Latency.P95US / 1000
	}
	if r.Lag.Count > 0 {
		v[MetricLagP99] = r.Lag.P99US / 1000
	}
	switch r.Summary.StorageHealth.OverallStatus {
	case "PASS":
		v[MetricHealth] = 1
	case "FAIL":
		v[MetricHealth] = 0
	}
	return v, nil
}

// ComputeStats summarises values: the median and P95 interpolate linearly
// between order statistics (numpy's default), StdDev is the sample
// standard deviation (0 for one value), CV is StdDev over the mean (0 when
// the mean is 0).
func ComputeStats(values []float64) Stats {
	n := len(values)
	if n == 0 {
		nan := math.NaN()
		return Stats{Median: nan, Mean: nan, Min: nan, Max: nan, StdDev: nan, CV: nan, P95: nan}
	}
	s := slices.Clone(values)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(n)
	var ss float64
	for _, x := range s {
		ss += (x - mean) * (x - mean)
	}
	st := Stats{N: n, Median: quantile(s, 0.5), Mean: mean, Min: s[0], Max: s[n-1], P95: quantile(s, 0.95)}
	if n > 1 {
		st.StdDev = math.Sqrt(ss / float64(n-1))
	}
	if mean != 0 {
		st.CV = st.StdDev / math.Abs(mean)
	}
	return st
}

// quantile of sorted s, interpolating linearly.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

// BuildOptions choose the baseline and the metrics of a report.
type BuildOptions struct {
	// Baseline is the label of the group other groups are compared with;
	// empty for the first group.
	Baseline string
	// Metrics, when set, restricts the report to these metric names.
	Metrics []string
}

// highCV is the coefficient of variation above which fewer than 3 trials
// are flagged.
const highCV = 0.10

// Build groups docs by label (in order of first appearance), merges the
// ranks of each trial exactly, computes each metric per trial and its
// statistics over trials, and compares the groups with the baseline. It
// refuses a rank or trial given twice and documents of different size
// scales in one trial.
func Build(docs []*Doc, opt BuildOptions) (*Report, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("report: no documents")
	}
	catalogue := Metrics()
	for _, name := range opt.Metrics {
		if !slices.ContainsFunc(catalogue, func(m Metric) bool { return m.Name == name }) {
			return nil, fmt.Errorf("report: metric %q: unknown", name)
		}
	}
	rep := &Report{}
	byLabel := map[string]*Group{}
	for _, d := range docs {
		g := byLabel[d.Label]
		if g == nil {
			g = &Group{Label: d.Label, Values: map[string][]float64{}, Stats: map[string]Stats{}}
			byLabel[d.Label] = g
			rep.Groups = append(rep.Groups, g)
		}
		g.Docs = append(g.Docs, d)
	}
	present := map[string]bool{}
	for _, g := range rep.Groups {
		if err := buildGroup(g, rep); err != nil {
			return nil, err
		}
		for _, tv := range g.TrialValues {
			for name := range tv {
				present[name] = true
			}
		}
	}
	// One high-variance warning per group, naming its metrics.
	varies := map[*Group][]string{}
	trials := map[*Group]int{}
	for _, m := range catalogue {
		if !present[m.Name] || (len(opt.Metrics) > 0 && !slices.Contains(opt.Metrics, m.Name)) {
			continue
		}
		rep.Metrics = append(rep.Metrics, m)
		for _, g := range rep.Groups {
			vals := g.Values[m.Name]
			if len(vals) == 0 {
				continue
			}
			st := ComputeStats(vals)
			g.Stats[m.Name] = st
			if st.CV > highCV && st.N < 3 {
				varies[g] = append(varies[g], fmt.Sprintf("%s %.2f", m.Name, st.CV))
				trials[g] = st.N
			}
		}
	}
	for _, g := range rep.Groups {
		if v := varies[g]; len(v) > 0 {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: %d metrics vary by more than %.0f%% (CV) over %d trials (%s): run at least 3 trials",
				g.Label, len(v), 100*highCV, trials[g], strings.Join(v, ", ")))
		}
	}
	baseline := opt.Baseline
	if baseline == "" {
		baseline = rep.Groups[0].Label
	} else if byLabel[baseline] == nil {
		if g := groupNamed(rep.Groups, baseline); g != nil {
			baseline = g.Label
		}
	}
	if byLabel[baseline] == nil {
		labels := make([]string, len(rep.Groups))
		for i, g := range rep.Groups {
			labels[i] = g.Label
		}
		return nil, fmt.Errorf("report: --baseline %s: no such group (groups: %s)", baseline, strings.Join(labels, ", "))
	}
	rep.Comparison = compare(rep.Groups, baseline, rep.Metrics)
	return rep, nil
}

// groupNamed finds the one group that name names other than by its label:
// by a name kvreport derives for a document by default (its label, its
// system, its file's name with or without extensions). It returns nil
// when no group, or more than one, is so named.
func groupNamed(groups []*Group, name string) *Group {
	var found *Group
	for _, g := range groups {
		if !slices.ContainsFunc(g.Docs, func(d *Doc) bool {
			return d.Label == name || d.System == name || baseName(d.Path) == name || filepath.Base(d.Path) == name || d.Path == name
		}) {
			continue
		}
		if found != nil {
			return nil
		}
		found = g
	}
	return found
}

// buildGroup merges g's trials and computes their metrics.
func buildGroup(g *Group, rep *Report) error {
	byTrial := map[int][]*Doc{}
	for _, d := range g.Docs {
		if _, ok := byTrial[d.Trial]; !ok {
			g.TrialIDs = append(g.TrialIDs, d.Trial)
		}
		byTrial[d.Trial] = append(byTrial[d.Trial], d)
	}
	slices.Sort(g.TrialIDs)
	seen := map[string]bool{}
	warn := func(s string) {
		if !seen[s] {
			seen[s] = true
			rep.Warnings = append(rep.Warnings, g.Label+": "+s)
		}
	}
	for _, id := range g.TrialIDs {
		ds := byTrial[id]
		var r *schema.Result
		var vals map[string]float64
		if ds[0].Kind == KindReference {
			if len(ds) > 1 {
				return fmt.Errorf("report: %s and %s: %w: trial %d of %s given twice", ds[0].Path, ds[1].Path, ErrIncompatible, id, g.Label)
			}
			r, vals = ds[0].Result, ds[0].Values
		} else {
			ranks := map[int]string{}
			results := make([]*schema.Result, 0, len(ds))
			for _, d := range ds {
				if d.Kind != KindKVReplay {
					return fmt.Errorf("report: %s and %s: %w: a kv-cache.py document and a kvreplay result in trial %d of %s",
						ds[0].Path, d.Path, ErrIncompatible, id, g.Label)
				}
				if p, ok := ranks[d.Rank]; ok {
					return fmt.Errorf("report: %s and %s: %w: rank %d of trial %d of %s given twice (label the runs apart with --label or --group-by)",
						p, d.Path, ErrIncompatible, d.Rank, id, g.Label)
				}
				ranks[d.Rank] = d.Path
				results = append(results, d.Result)
			}
			if want := ds[0].Result.Ranks; want > len(ds) {
				warn(fmt.Sprintf("trial %d: %d of %d ranks", id, len(ds), want))
			}
			r = results[0]
			if len(results) > 1 {
				var err error
				if r, err = MergeRanks(results); err != nil {
					return fmt.Errorf("report: trial %d of %s: %w", id, g.Label, err)
				}
			}
			var err error
			if vals, err = MetricsOf(r); err != nil {
				return fmt.Errorf("report: %s: %w", ds[0].Path, err)
			}
		}
		if !r.Complete {
			warn(fmt.Sprintf("trial %d: incomplete: %s", id, r.IncompleteReason))
		}
		if r.SizeScale != 1 && r.SizeScale != 0 {
			warn(fmt.Sprintf("scaled run (--size-scale %g): not a full-size measurement", r.SizeScale))
		}
		g.Trials = append(g.Trials, r)
		g.TrialValues = append(g.TrialValues, vals)
		g.Health = append(g.Health, healthOf(r))
		for name, v := range vals {
			g.Values[name] = append(g.Values[name], v)
		}
	}
	return nil
}

func healthOf(r *schema.Result) string {
	if s := r.Summary.StorageHealth.OverallStatus; s != "" {
		return s
	}
	return "-"
}
