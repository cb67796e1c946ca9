package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Metric names that are not per tier.
const (
	MetricDecodeBytesRead = "decode_bytes_read"
	// MetricKVTokensMoved is kvbench's token rate: the KV tokens whose
	// bytes moved through Tier-2 per second of the run.
	MetricKVTokensMoved = "kv_tokens_moved_per_s"
	// MetricRefTokens is the reference's storage throughput, under its
	// name: tokens generated over the total storage I/O time.
	MetricRefTokens    = "storage_throughput_tokens_per_sec"
	MetricRequestsPerS = "requests_per_s"
	MetricRequestP95   = "request_storage_p95"
	MetricSLO          = "slo_attainment"
	MetricLagP99       = "lag_p99"
	MetricElapsed      = "elapsed"
	MetricHealth       = "storage_health_pass"
)

// tierMetric names a per-tier metric: tier 2, "read_bw" -> "tier2_read_bw".
func tierMetric(tier int, what string) string { return fmt.Sprintf("tier%d_%s", tier, what) }

// qosMetric names a QoS class's metric: interactive, "p95" ->
// "qos_interactive_p95".
func qosMetric(class, what string) string { return "qos_" + class + "_" + what }

// metricDef is a metric of the catalogue with what it means and, for one
// judged against a target, the target.
type metricDef struct {
	Metric
	desc   string
	target float64 // 0: none
}

// headline are the metrics of MLPerf Storage's headline result (Rules.md
// 6.3.4.5) under kvbench's names: storage read bandwidth (the reference's
// tier bandwidth, an offered load), device read and write latency p95,
// and storage throughput.
var headline = []string{"tier2_read_offered", "tier2_read_device_p95", "tier2_write_device_p95", MetricRefTokens}

// catalogue is the metrics kvreport computes, in the order reports show
// them, with their definitions. Bandwidths are in GB/s and amounts of data
// in GB, decimal (results.GB), latencies in milliseconds.
func catalogue() []metricDef {
	var ms []metricDef
	def := func(name, unit, better, desc string) {
		ms = append(ms, metricDef{Metric: Metric{name, unit, better}, desc: desc})
	}
	done := map[string]string{"read": "read", "write": "written"}
	for t := range schema.Tier(schema.NumTiers) {
		for _, op := range []string{"read", "write"} {
			def(tierMetric(int(t), op+"_bw"), "GB/s", "higher", fmt.Sprintf("%s %s bandwidth: the device rate, bytes %s over the time "+
				"the tier was busy with its %ss (the union of their intervals)", t, op, done[op], op))
		}
	}
	for t := range schema.Tier(schema.NumTiers) {
		for _, op := range []string{"read", "write"} {
			ref := " (the reference's tier bandwidth)"
			if t == schema.TierObject {
				ref = "" // kv-cache.py has no object tier
			}
			def(tierMetric(int(t), op+"_offered"), "GB/s", "higher", fmt.Sprintf("%s %s offered load: bytes %s over the run's elapsed time"+
				"%s; it falls when anything makes the run longer", t, op, done[op], ref))
		}
	}
	// The reference samples the latency of its hits' reads and its new
	// objects' writes, not of a demotion's copy (the Evict phase): the
	// Tier-2 latencies are of those, the demotions' apart.
	scope := map[string]string{"read": "", "write": " of new objects (not demotions: tier2_evict_write_*)"}
	for _, from := range []string{"", "sched_"} {
		for _, op := range []string{"read", "write"} {
			for _, p := range []string{"p50", "p95", "p99"} {
				desc := "Tier-2 " + op + " latency" + scope[op] + " from submission, " + p
				if from != "" {
					desc = "Tier-2 " + op + " latency" + scope[op] + " from the scheduled time (with queueing), " + p
				}
				def("tier2_"+op+"_"+from+p, "ms", "lower", desc)
			}
		}
	}
	for _, op := range []string{"read", "write"} {
		what := map[string]string{"read": "its I/Os", "write": "its I/Os and, under --fsync, its fdatasync"}[op]
		for _, p := range []string{"p50", "p95", "p99"} {
			def("tier2_"+op+"_device_"+p, "ms", "lower", "Tier-2 "+op+" device latency"+scope[op]+", "+p+": "+what+", without opening and closing "+
				"the object (the reference's storage_"+op+"_device_"+p+"_ms, which MLPerf Storage scores)")
		}
	}
	for _, p := range []string{"p50", "p95", "p99"} {
		def("tier2_evict_write_"+p, "ms", "lower", "Tier-2 write latency of demotions (the Evict phase) from submission, "+p+
			": kvbench's; the reference times them but keeps no sample")
	}
	for _, p := range []string{"p50", "p95", "p99"} {
		def("tier2_evict_write_device_"+p, "ms", "lower", "Tier-2 write device latency of demotions (the Evict phase), "+p+
			": its I/Os and, under --fsync, its fdatasync; kvbench's")
	}
	for _, p := range []string{"p50", "p95", "p99"} {
		def("tier2_read_ttfb_"+p, "ms", "lower", "Tier-2 read time to first byte from submission, "+p+": when the first byte "+
			"of an object store's GET came (absent for backends that do not know it)")
	}
	def(MetricDecodeBytesRead, "GB", "higher", "bytes the Decode phase read from Tier-2")
	def(MetricKVTokensMoved, "tok/s", "higher", "kvbench's: KV tokens whose bytes moved through Tier-2 "+
		"(Tier-2 bytes read and written over bytes per token) per second of the run; not the reference's storage throughput")
	def(MetricRefTokens, "tok/s", "higher", "the reference's storage throughput (kv-cache.py's name and definition): "+
		"tokens generated over the total storage I/O time of the completed requests; a closed-loop replay measures it")
	def(MetricRequestsPerS, "req/s", "higher", "requests completed per second of the run")
	def(MetricRequestP95, "ms", "lower", "request storage latency p95, all QoS classes")
	def(MetricSLO, "%", "higher", "requests within kvreplay --slo-ms (the document's target, overall or its class's); absent without --slo-ms")
	for q := schema.QoSInteractive; q < schema.NumQoS; q++ { // the classes kvreplay's SLO counts apart
		def(qosMetric(q.String(), "slo_attainment"), "%", "higher", q.String()+" requests within kvreplay --slo-ms's target for the class")
	}
	for q := range schema.QoS(schema.NumQoS) {
		target := results.QoSTarget(q)
		if target <= 0 {
			continue
		}
		c := q.String()
		ms = append(ms,
			metricDef{Metric{qosMetric(c, "p95"), "ms", "lower"}, c + " requests' storage latency p95, against the class's SLA target",
				float64(target.Milliseconds())},
			metricDef{Metric{qosMetric(c, "within_target"), "%", "higher"}, c + " requests within the class's p95 target; the SLA is met at the target share",
				100 * results.ComplianceTarget},
			metricDef{Metric{qosMetric(c, "sla_met"), "met", "higher"}, c + " SLA: 1 met, 0 not met (absent for an incomplete run, as storage_health_pass)", 0})
	}
	def(MetricLagP99, "ms", "lower", "lag of rows behind their scheduled time, p99")
	def(MetricElapsed, "s", "lower", "the run's elapsed (wall) time")
	def(MetricHealth, "pass", "higher", "storage_health: 1 PASS, 0 FAIL (absent for INCOMPLETE, NO_DATA)")
	for i := range ms {
		if slices.Contains(headline, ms[i].Name) {
			ms[i].desc += " (MLPerf Storage's headline, which it scores over trials)"
		}
	}
	return ms
}

// Metrics returns the catalogue of metrics kvreport computes, in the
// order reports show them: each tier's bandwidth (the device rate) and
// offered load in GB/s (decimal), latencies in milliseconds, decode bytes
// in GB; storage_health_pass is 1 for PASS and 0 for FAIL (absent for a
// run that is neither: INCOMPLETE, NO_DATA). MetricDescription says what
// each means.
func Metrics() []Metric {
	defs := catalogue()
	ms := make([]Metric, len(defs))
	for i, d := range defs {
		ms[i] = d.Metric
	}
	return ms
}

// MetricDescription says what the metric named name means; "" for a name
// not in the catalogue.
func MetricDescription(name string) string {
	for _, d := range catalogue() {
		if d.Name == name {
			return d.desc
		}
	}
	return ""
}

// MetricTarget is the target a metric is judged against, in its unit (a
// QoS class's p95 target, the share within it that meets the SLA); false
// for a metric without one.
func MetricTarget(name string) (float64, bool) {
	for _, d := range catalogue() {
		if d.Name == name && d.target > 0 {
			return d.target, true
		}
	}
	return 0, false
}

// tierUsed reports whether a run used tier tt: it did an operation on it
// or moved bytes through it. The offered load of a tier a run never used
// is no measured zero (the reference's tier bandwidths say 0 for its
// unused tiers, and a trace without Tier-0 rows replays none): it is
// absent.
func tierUsed(tt schema.TierTotals) bool {
	return tt.ReadOps+tt.WriteOps+tt.DeleteOps > 0 || tt.ReadBytes+tt.WriteBytes > 0 || tt.ReadOfferedBps+tt.WriteOfferedBps > 0
}

// MetricsOf computes the metrics of one (merged) kvreplay result. A metric
// the result cannot give (no Tier-2 reads, no requests, tokens per second
// without the trace's bytes per token, the offered load of a tier the run
// never used, Tier-2's decode bytes and tokens moved in a run that never
// used Tier-2, the device rate of a tier that
// moved nothing or of a document written before kvbench measured it,
// storage_health_pass of a run that is
// neither PASS nor FAIL) is absent, never zero. kv_tokens_moved_per_s is
// the summary's storage_kv_tokens_per_sec;
// storage_throughput_tokens_per_sec the summary's figure of that name when
// the run measured it (a closed loop).
func MetricsOf(r *schema.Result) (map[string]float64, error) {
	v := map[string]float64{}
	// A run stopped before its clock (replay.Unclocked) has no measured
	// window: its elapsed time is missing, not 0.
	if r.WallS > 0 {
		v[MetricElapsed] = r.WallS
	}
	// Tier-2's figures of a run that never used Tier-2 (its working set
	// stayed in RAM) are not measured: no decode bytes, no tokens moved.
	nvme := slices.ContainsFunc(r.Tiers, func(tt schema.TierTotals) bool { return tt.Tier == schema.TierNVMe.String() && tierUsed(tt) })
	if nvme {
		v[MetricDecodeBytesRead] = float64(results.DecodeBytesRead(r.Cells)) / results.GB
	}
	for _, tt := range r.Tiers {
		t, err := schema.ParseTier(tt.Tier)
		if err != nil || !tierUsed(tt) {
			continue
		}
		v[tierMetric(int(t), "read_offered")] = tt.ReadOfferedBps / results.GB
		v[tierMetric(int(t), "write_offered")] = tt.WriteOfferedBps / results.GB
		// A device rate is bytes over busy time: none without bytes, and
		// none in a document written before kvbench measured it.
		if tt.ReadBytes > 0 && tt.ReadDeviceBps > 0 {
			v[tierMetric(int(t), "read_bw")] = tt.ReadDeviceBps / results.GB
		}
		if tt.WriteBytes > 0 && tt.WriteDeviceBps > 0 {
			v[tierMetric(int(t), "write_bw")] = tt.WriteDeviceBps / results.GB
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
	if m, err := results.TierFirstByte(r.Cells, schema.TierNVMe); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	} else if m.Count > 0 {
		v["tier2_read_ttfb_p50"], v["tier2_read_ttfb_p95"], v["tier2_read_ttfb_p99"] = m.P50US/1000, m.P95US/1000, m.P99US/1000
	}
	for _, op := range []schema.Op{schema.OpRead, schema.OpWrite} {
		m, ok, err := results.DeviceOf(r.Device, r.Cells, schema.TierNVMe, op)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		if ok && m.Count > 0 {
			pre := "tier2_" + strings.ToLower(op.String()) + "_device_"
			v[pre+"p50"], v[pre+"p95"], v[pre+"p99"] = m.P50US/1000, m.P95US/1000, m.P99US/1000
		}
	}
	if err := evictMetrics(v, r); err != nil {
		return nil, err
	}
	if s := r.Summary.StorageKVTokensPerSec; s != nil && nvme {
		v[MetricKVTokensMoved] = *s
	}
	// Documents from before NotMeasured existed never measured it (their
	// figure is a 0); a document that measured it names nothing there.
	if s := &r.Summary; s.NotMeasured[results.NotMeasuredRefTokens] == "" && (s.NotMeasured != nil || s.StorageThroughputTokensPerSec > 0) {
		v[MetricRefTokens] = s.StorageThroughputTokensPerSec
	}
	if r.Requests.Count > 0 {
		if r.WallS > 0 {
			v[MetricRequestsPerS] = float64(results.Completed(r)) / r.WallS
		}
		v[MetricRequestP95] = r.Requests.Latency.P95US / 1000
	}
	if slo := r.Requests.SLO; slo != nil && slo.Count > 0 {
		v[MetricSLO] = 100 * float64(slo.Within) / float64(slo.Count)
		for _, c := range slo.ByQoS {
			if c.Count > 0 {
				v[qosMetric(c.QoS, "slo_attainment")] = 100 * float64(c.Within) / float64(c.Count)
			}
		}
	}
	qosValues(r, v)
	if r.Lag.Count > 0 {
		v[MetricLagP99] = r.Lag.P99US / 1000
	}
	switch schema.HealthStatus(healthStatus(r)) {
	case results.HealthPass:
		v[MetricHealth] = 1
	case results.HealthFail:
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
	// The correctly rounded sum (fsum), and a mean kept between the
	// least and the most: trials that measured one figure exactly have
	// it as their mean and a spread of exactly 0, not a sum's rounding
	// (0.1 x 3 gave a mean of 0.10000000000000002, a stddev of 1.7e-17).
	mean := min(max(fsum(s)/float64(n), s[0]), s[n-1])
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
	// Force merges the ranks of a trial that CheckRanks refuses (the same
	// rank twice, different traces), with a warning; never ranks of
	// different size scales (ErrScales).
	Force bool
}

// unknownMetric is the error for --metrics naming no metric of the
// catalogue: it offers the metrics whose names begin with the most of the
// name's words, else the words kvreport's metrics begin with.
func unknownMetric(name string, catalogue []Metric) error {
	words := strings.Split(name, "_")
	var like []string
	head := ""
	for n := len(words); n > 0 && len(like) == 0; n-- {
		head = strings.Join(words[:n], "_") + "_"
		for _, m := range catalogue {
			if strings.HasPrefix(m.Name+"_", head) {
				like = append(like, m.Name)
			}
		}
	}
	switch n := len(like); {
	case n > 6:
		return fmt.Errorf("report: --metrics %s: no such metric; did you mean %s or another %s* metric? %s", parsemsg.Arg(name), strings.Join(like[:6], ", "), head, metricsNote)
	case n > 1:
		return fmt.Errorf("report: --metrics %s: no such metric; did you mean %s or %s? %s", parsemsg.Arg(name), strings.Join(like[:n-1], ", "), like[n-1], metricsNote)
	case n == 1:
		return fmt.Errorf("report: --metrics %s: no such metric; did you mean %s? %s", parsemsg.Arg(name), like[0], metricsNote)
	}
	var heads []string
	for _, m := range catalogue {
		head, _, more := strings.Cut(m.Name, "_")
		if more {
			head += "_*"
		}
		if !slices.Contains(heads, head) {
			heads = append(heads, head)
		}
	}
	return fmt.Errorf("report: --metrics %s: no such metric: kvreport's metrics are %s %s", parsemsg.Arg(name), strings.Join(heads, ", "), metricsNote)
}

// metricsNote says where the metrics are described.
const metricsNote = "(a text report's metrics section says what each means)"

// highCV is the coefficient of variation over trials above which a
// metric is flagged, at any number of trials from 2: kvbench's bound.
// MLPerf Storage runs 3 trials of each Option and scores its headline
// over them (the mean of bandwidth and throughput, the largest device
// p95; Rules.md 6.3.2.1, 6.3.4) but sets no bound on how far they may
// differ: trials that disagree by more than this give a figure that the
// next 3 trials would not.
const highCV = 0.10

// spreadWarning is the warning of a group whose metrics vary by more than
// highCV over its n trials: head are its headline metrics that do, more
// its others, each as "name CV".
func spreadWarning(n int, head, more []string) string {
	list := strings.Join(append(head, more...), ", ")
	if len(head) > 0 && len(more) > 0 {
		list = "headline " + strings.Join(head, ", ") + "; others " + strings.Join(more, ", ")
	} else if len(head) > 0 {
		list = "headline " + list
	}
	w := fmt.Sprintf("VARIES OVER TRIALS: %d metrics vary by more than %.0f%% (CV) over %d trials (%s)", len(head)+len(more), 100*highCV, n, list)
	if len(head) > 0 {
		w += ": MLPerf Storage scores its headline over trials (the mean of bandwidth and throughput, the largest device p95), " +
			"and trials this far apart give a score another run would not repeat"
	}
	w += ": find what differs between the trials (other load on the machine, cached data, too short a run)"
	if n < 3 {
		w += " and run at least 3"
	}
	return w
}

// groupDocs groups docs by label, in order of first appearance, and by
// kind: a label's kv-cache.py document (or kvtrace's statistics) and its
// kvreplay results are no trials of one run (they were one group, its
// "trials" a simulation and a measurement, their mean and CV across
// both), so where a label holds several kinds, the groups other than
// kvreplay's are labelled "LABEL (KIND)".
func groupDocs(docs []*Doc) []*Group {
	type key struct{ label, kind string }
	var groups []*Group
	byKey := map[key]*Group{}
	kinds := map[string]map[string]bool{}
	for _, d := range docs {
		k := key{d.Label, d.Kind}
		g := byKey[k]
		if g == nil {
			g = &Group{Label: d.Label, Values: map[string][]float64{}, Stats: map[string]Stats{}}
			byKey[k] = g
			groups = append(groups, g)
			if kinds[d.Label] == nil {
				kinds[d.Label] = map[string]bool{}
			}
			kinds[d.Label][d.Kind] = true
		}
		g.Docs = append(g.Docs, d)
	}
	for k, g := range byKey {
		if len(kinds[k.label]) > 1 && k.kind != KindKVReplay {
			g.Label = k.label + " (" + k.kind + ")"
		}
	}
	return groups
}

// Build groups docs by label and kind (groupDocs), merges the
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
			return nil, unknownMetric(name, catalogue)
		}
	}
	rep := &Report{}
	rep.Groups = groupDocs(docs)
	byLabel := map[string]*Group{}
	for _, g := range rep.Groups {
		byLabel[g.Label] = g
	}
	present := map[string]bool{}
	for _, g := range rep.Groups {
		if err := buildGroup(g, rep, opt.Force); err != nil {
			return nil, err
		}
		for _, tv := range g.TrialValues {
			for name := range tv {
				present[name] = true
			}
		}
	}
	// A metric asked for that no document has would leave its rows out
	// without a word.
	for _, name := range opt.Metrics {
		if !present[name] {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("--metrics %s: no document has this metric: %s", name, MetricDescription(name)))
		}
	}
	// One spread warning per group, naming its metrics, headline first.
	varies, heads := map[*Group][]string{}, map[*Group][]string{}
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
			if st.N < 2 || !(st.CV > highCV) {
				continue
			}
			what := fmt.Sprintf("%s %.2f", m.Name, st.CV)
			if slices.Contains(headline, m.Name) {
				heads[g] = append(heads[g], what)
			} else {
				varies[g] = append(varies[g], what)
			}
			trials[g] = max(trials[g], st.N)
		}
	}
	for _, g := range rep.Groups {
		if trials[g] > 0 {
			rep.Warnings = append(rep.Warnings, g.Label+": "+spreadWarning(trials[g], heads[g], varies[g]))
		}
	}
	baseline := opt.Baseline
	if baseline == "" {
		// The first group, or the first measured one: a simulation, or a
		// run cut short or with failed operations, is no baseline of
		// measurements.
		baseline = rep.Groups[0].Label
		if i := slices.IndexFunc(rep.Groups, (*Group).measurement); i > 0 {
			baseline = rep.Groups[i].Label
		}
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
		return nil, fmt.Errorf("report: --baseline %s: no such group (groups: %s)", parsemsg.Arg(baseline), strings.Join(labels, ", "))
	}
	if byLabel[baseline].Simulated {
		// A simulated baseline compares with no measured group: every
		// measured group's column would be empty.
		var measured []string
		for _, g := range rep.Groups {
			if !g.Simulated {
				measured = append(measured, g.Label)
			}
		}
		if len(measured) > 0 {
			return nil, fmt.Errorf("report: --baseline %s: %w: a simulated group (kvtrace's statistics) is no baseline of measured groups: give one of %s",
				parsemsg.Arg(baseline), ErrIncompatible, strings.Join(measured, ", "))
		}
	}
	rep.Comparison = compare(rep.Groups, baseline, rep.Metrics)
	warnTraces(rep, byLabel[baseline])
	warnShapes(rep, byLabel[baseline])
	return rep, nil
}

// groupNamed finds the one group that name names other than by its label:
// by a name kvreport derives for a document by default (its label, its
// system, its file's name with or without extensions). It returns nil
// when no group, or more than one, is so named.
func groupNamed(groups []*Group, name string) *Group {
	var found *Group
	shown := parsemsg.Printable(name) // as a document's path is kept
	for _, g := range groups {
		if !slices.ContainsFunc(g.Docs, func(d *Doc) bool {
			return d.Label == name || d.System == name || baseName(d.Path) == shown || filepath.Base(d.Path) == shown || d.Path == shown
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

// warnTraces warns, in the report and in the group concerned, of a group
// whose trials replayed other traces than the baseline's first trial, or
// than its own first trial: its ratios would compare different workloads;
// and of a kvreplay trial that names no trace beside others that do.
// Reference documents replayed no trace and are not checked.
func warnTraces(rep *Report, base *Group) {
	first := func(g *Group) *schema.Result {
		for _, t := range g.Trials {
			if t != nil && len(t.Traces) > 0 {
				return t
			}
		}
		return nil
	}
	var b *schema.Result
	if base != nil {
		b = first(base)
	}
	known := slices.ContainsFunc(rep.Groups, func(g *Group) bool { return first(g) != nil })
	for _, g := range rep.Groups {
		// A kvreplay run that names no trace (a damaged or edited
		// document) was compared with nothing, and so warned of nothing.
		for i, t := range g.Trials {
			if known && t != nil && t.Tool == KindKVReplay && len(t.Traces) == 0 {
				g.warn(rep, fmt.Sprintf("TRACES UNKNOWN: trial %d names no trace it replayed: whether it replayed the others' workload is unknown", g.TrialIDs[i]))
			}
		}
		f := first(g)
		if f == nil {
			continue
		}
		for i, t := range g.Trials {
			if t == nil || len(t.Traces) == 0 {
				continue
			}
			if ok, why := SameTraces(f.Traces, t.Traces); !ok {
				g.warn(rep, fmt.Sprintf("DIFFERENT TRACES: trials %d and %d replayed different traces, %s respectively: the statistics over trials mix different workloads",
					g.TrialIDs[0], g.TrialIDs[i], why))
			}
		}
		if b != nil && g != base {
			if ok, why := SameTraces(b.Traces, f.Traces); !ok {
				g.warn(rep, fmt.Sprintf("DIFFERENT TRACES: the baseline %s and %s replayed different traces, %s respectively: the ratios between them compare different workloads",
					base.Label, g.Label, why))
			}
		}
	}
}

// warn adds a warning about g, once, to g and (naming g) to the report.
func (g *Group) warn(rep *Report, s string) {
	if slices.Contains(g.Warnings, s) {
		return
	}
	g.Warnings = append(g.Warnings, s)
	rep.Warnings = append(rep.Warnings, g.Label+": "+s)
}

// buildGroup merges g's trials and computes their metrics. The ranks of a
// trial must pass CheckRanks unless force is set. The trials' own
// warnings (a scaled run, buffered I/O), and their being incomplete or
// having failed operations, become warnings of g.
func buildGroup(g *Group, rep *Report, force bool) error {
	// kv-cache.py's documents (and kvtrace's statistics) carry no trial
	// number: several in one group are its trials 1, 2, ... in the order
	// given, as kv-cache.py's runs of one system are.
	numbered := map[*Doc]int{}
	var unnumbered []*Doc
	for _, d := range g.Docs {
		if (d.Kind == KindReference || d.Kind == KindSimulated) && d.Trial == 0 {
			unnumbered = append(unnumbered, d)
		}
	}
	if len(unnumbered) > 1 {
		for i, d := range unnumbered {
			numbered[d] = i + 1
		}
	}
	trialOf := func(d *Doc) int {
		if n, ok := numbered[d]; ok {
			return n
		}
		return d.Trial
	}
	byTrial := map[int][]*Doc{}
	for _, d := range g.Docs {
		if _, ok := byTrial[trialOf(d)]; !ok {
			g.TrialIDs = append(g.TrialIDs, trialOf(d))
		}
		byTrial[trialOf(d)] = append(byTrial[trialOf(d)], d)
	}
	slices.Sort(g.TrialIDs)
	warn := func(s string) { g.warn(rep, s) }
	for _, id := range g.TrialIDs {
		ds := byTrial[id]
		var r *schema.Result
		var vals map[string]float64
		if k := ds[0].Kind; k == KindReference || k == KindSimulated {
			if len(ds) > 1 {
				return fmt.Errorf("report: %s and %s: %w: trial %d of %s given twice", ds[0].Path, ds[1].Path, ErrIncompatible, id, g.Label)
			}
			r, vals = ds[0].Result, ds[0].Values
		} else {
			results := make([]*schema.Result, 0, len(ds))
			names := make([]string, 0, len(ds))
			for _, d := range ds {
				if d.Kind != KindKVReplay {
					return fmt.Errorf("report: %s and %s: %w: a kv-cache.py document and a kvreplay result in trial %d of %s",
						ds[0].Path, d.Path, ErrIncompatible, id, g.Label)
				}
				results = append(results, d.Result)
				names = append(names, d.Path)
			}
			// One rank's document alone is shown as the part of its run
			// it is (incomplete, with a warning); several must be all of
			// their run's ranks unless forced, and then their merge says
			// it is a part.
			var missing *MissingRanksError
			if err := CheckRanks(results, names); err != nil && !(len(results) == 1 && errors.As(err, &missing)) {
				switch {
				case errors.Is(err, ErrScales): // its message says why --force cannot merge them
					return fmt.Errorf("report: %w (trial %d of %s)", err, id, g.Label)
				case !force:
					return fmt.Errorf("report: %w (trial %d of %s; label the runs apart with --label or --group-by, or merge them anyway with --force%s)",
						err, id, g.Label, mlperfHint(ds))
				}
				warn(fmt.Sprintf("trial %d: MERGED ANYWAY (--force): %v", id, err))
			}
			r = results[0]
			if len(results) > 1 {
				var err error
				if r, err = MergeRanks(results); err != nil {
					return fmt.Errorf("report: trial %d of %s: %w", id, g.Label, err)
				}
			} else if ranks, held, miss := MissingRanks(results); len(miss) > 0 {
				part := *r
				part.Warnings = slices.Clone(r.Warnings)
				markPartial(&part, ranks, held, miss)
				r = &part
			}
			var err error
			if vals, err = MetricsOf(r); err != nil {
				return fmt.Errorf("report: %s: %w", ds[0].Path, err)
			}
		}
		for _, w := range trialWarnings(id, r) {
			warn(w)
		}
		health := healthOf(r)
		if ds[0].Kind == KindSimulated {
			g.Simulated = true
			health = "SIMULATED"
			warn(fmt.Sprintf("SIMULATED: %s (trial %d) is kvtrace's --output statistics, %s: its times and rates are the "+
				"simulation's virtual time, no device's, and no measured group is compared with it", ds[0].Path, id, simulatedNote))
		}
		if why := results.NotAMeasurement(r); why != "" && ds[0].Kind == KindKVReplay {
			if g.NotMeasured == nil {
				g.NotMeasured = map[int]string{}
			}
			g.NotMeasured[id] = why
			warn(fmt.Sprintf("%s: trial %d: %s: its figures are shown, and no ratio or win rate is computed against them",
				results.VerdictNotAMeasurement, id, why))
		}
		g.Trials = append(g.Trials, r)
		g.TrialValues = append(g.TrialValues, vals)
		g.Health = append(g.Health, health)
		for name, v := range vals {
			g.Values[name] = append(g.Values[name], v)
		}
	}
	return nil
}

// mlperfHint points documents that look like an MLPerf Option's ranks
// (in a rank_<N> directory, or labelled by an Option, as mlperf-option.sh
// labels them) to the aggregation that combines them: each rank replays
// its own trace (seed 42+rank), which no merge of one run's ranks takes.
func mlperfHint(ds []*Doc) string {
	for _, d := range ds {
		if _, _, r := placeOf(d.Path); r >= 0 || labelOption(d.Label) != d.Label {
			return "; an MLPerf Option's ranks, each with its own trace, are combined by kvreport --aggregate mlperf"
		}
	}
	return ""
}

// trialWarnings are what a trial's result warns of: its being incomplete
// or having failed operations, and its own warnings (a scaled run,
// buffered I/O).
func trialWarnings(id int, r *schema.Result) []string {
	var out []string
	if !r.Complete {
		out = append(out, fmt.Sprintf("INCOMPLETE RUN: trial %d: %s", id, cmp.Or(r.IncompleteReason, "no reason given")))
	}
	if r.Errors.Count > 0 {
		out = append(out, fmt.Sprintf("ERRORS: trial %d: %d operations failed", id, r.Errors.Count))
	}
	if h := judgedHealth(r); h.OverallStatus == results.HealthFail {
		// Every format names what failed, not only the status.
		out = append(out, fmt.Sprintf("STORAGE_HEALTH FAIL: trial %d: %s", id, strings.Join(h.Reasons, "; ")))
	}
	scaled := false
	for _, w := range r.Warnings {
		out = append(out, w)
		scaled = scaled || strings.Contains(w, "--size-scale")
	}
	if r.SizeScale != 1 && r.SizeScale != 0 && !scaled {
		out = append(out, fmt.Sprintf("SCALED RUN (--size-scale %g): not a full-size measurement", r.SizeScale))
	}
	if w := imbalanceWarning(id, r.RankImbalance); w != "" {
		if r.RankImbalance.StartSpreadS > 1 {
			// MergeRanks divides the ranks' bytes by the longest rank's
			// busy time: the union of their busy intervals is longer by
			// as much as they were busy apart.
			w += ": the merged tiers' device rates (tierN_*_bw: every rank's bytes over the longest rank's busy time) " +
				"overstate the device rate as far as the ranks were not busy together"
		}
		out = append(out, w)
	}
	return out
}

// imbalanceWarning is the RANK IMBALANCE warning of trial id's ranks,
// merged: the slowest rank took more than 1.2 times the fastest's time,
// or the ranks started more than 1 s apart (kvreplay's start barrier's
// grace); "" when neither.
func imbalanceWarning(id int, im *schema.RankImbalance) string {
	if im == nil || im.SlowestWallS <= 1.2*im.FastestWallS && im.StartSpreadS <= 1 {
		return ""
	}
	return fmt.Sprintf("RANK IMBALANCE: trial %d: rank %d took %.2f s (the fastest %.2f s) for %.0f%% of the bytes; the ranks started %.2f s apart",
		id, im.SlowestRank, im.SlowestWallS, im.FastestWallS, 100*im.SlowestBytesShare, im.StartSpreadS)
}

// allWarnings returns every warning of r once, in order, each naming its
// group: r.Warnings and, for a report not made by Build, its groups'
// Warnings and its trials'. Every renderer shows them.
func allWarnings(r *Report) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, w := range r.Warnings {
		add(w)
	}
	for _, g := range r.Groups {
		for _, w := range g.Warnings {
			add(g.Label + ": " + w)
		}
		for i, t := range g.Trials {
			if t == nil {
				continue
			}
			id := g.TrialID(i)
			for _, w := range trialWarnings(id, t) {
				add(g.Label + ": " + w)
			}
		}
	}
	return out
}

func healthOf(r *schema.Result) string { return cmp.Or(healthStatus(r), "-") }

// judgedHealth is a result's storage_health: a kvreplay document's as
// today's rule judges it (results.Health), so that an older
// kvreplay's PASS for a run that did not complete, fell behind its
// schedule or missed an SLA is not shown as one; another tool's
// document's as it says. Its status is "" when the document has none.
func judgedHealth(r *schema.Result) schema.StorageHealth {
	h := r.Summary.StorageHealth
	if h.OverallStatus == "" || r.Tool != KindKVReplay {
		return h
	}
	return results.Health(r, &r.Summary)
}

// healthScope says what a kvreplay run's storage_health judged where it
// could not judge its SLA: under --speed max of an open loop its criteria
// are the tiers' latency P95s alone, and a PASS beside "SLA not measured"
// must not read as an SLA met: "tier latency criteria only; SLA not
// measured at --speed max". "" where the SLA was measured, or nothing
// was judged. The verdict itself is results'.
func healthScope(r *schema.Result) string {
	if r == nil || r.Tool != KindKVReplay || r.Requests.Count == 0 || judgedHealth(r).TotalCount == 0 {
		return ""
	}
	if _, unmeasured := r.Summary.NotMeasured[results.NotMeasuredSLA]; !unmeasured {
		return ""
	}
	why := "SLA not measured"
	if r.Replay.Speed == 0 && r.ClosedLoop == nil {
		why += " at --speed max"
	}
	return "tier latency criteria only; " + why
}

// healthStatus is judgedHealth's status; "" when the document has none.
func healthStatus(r *schema.Result) string { return string(judgedHealth(r).OverallStatus) }

// healthReasons says why a result's storage_health is not PASS, one
// reason after another ("" for a PASS or no verdict).
func healthReasons(r *schema.Result) string {
	if r == nil {
		return ""
	}
	return strings.Join(judgedHealth(r).Reasons, "; ")
}

// evictMetrics sets the Tier-2 demotions' latencies (tier2_evict_write_*)
// of r where it has them.
func evictMetrics(v map[string]float64, r *schema.Result) error {
	m, err := results.TierEvictLatency(r.Cells, schema.TierNVMe, schema.OpWrite)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if m.Count > 0 {
		v["tier2_evict_write_p50"], v["tier2_evict_write_p95"], v["tier2_evict_write_p99"] = m.P50US/1000, m.P95US/1000, m.P99US/1000
	}
	d, ok, err := results.DeviceEvictOf(r.Device, schema.TierNVMe, schema.OpWrite)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if ok && d.Count > 0 {
		v["tier2_evict_write_device_p50"], v["tier2_evict_write_device_p95"], v["tier2_evict_write_device_p99"] = d.P50US/1000, d.P95US/1000, d.P99US/1000
	}
	return nil
}
