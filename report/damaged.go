package report

import (
	"fmt"
	"regexp"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Bounds of a kvreplay result's figures past which no run gives them (a
// damaged document), as maxFigure bounds a kv-cache.py document's: a
// billion milliseconds of latency (kvreplay's histograms hold an hour,
// hist.HighestUS), a petabyte a second, a million ranks. Past them a
// figure renders as a 300-digit number in a table or a health reason, or
// overflows a sum; a rank count past maxRanks had kvreport list every
// rank missing (9e18 ranks: out of memory).
const (
	maxLatencyUS = maxFigure * 1000
	maxByteRate  = 1e15
	maxRanks     = 1 << 20
)

// sha256Hex matches a SHA-256 digest as kvreplay writes it.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkResult refuses a kvreplay result whose counts, sizes or times no
// run gives: a negative elapsed time, byte or operation count, rank,
// trial, error, setup row or setup eviction count, more requests cut
// late than counted, a rank beyond its run's ranks or ranks past
// maxRanks, a size scale outside (0, 1] (0 is a document that predates
// it), an elapsed or busy time past maxFigure or a token rate past
// maxTokenRate, a rate past maxByteRate; a trace's digest that is no
// SHA-256; a tier whose counts are not its cells' sums; a latency
// (checkLatency) past maxLatencyUS, out of order or counting other than
// its cell's operations or its class's requests; a QoS class or SLO that
// counts more requests within target than it has, a share outside 0 to
// 1, or an SLA met that its share does not meet. kvreplay writes none of
// these; kvreport would render them as figures (an elapsed time of -5 s,
// a p95 of 10^300 ms in a health reason, an SLA "met" at 50 %), or drop a
// tier whose bytes are negative without a word. The first found: each
// block of the document is checked in the order below, and a check made
// after the first error is a no-op.
func checkResult(r *schema.Result) error {
	c := &resultCheck{}
	c.summary(r)
	c.ranks(r)
	c.replay(r)
	c.closedLoop(r.ClosedLoop)
	c.traces(r.Traces)
	c.tiers(r.Tiers)
	c.cells(r.Cells)
	c.tierSums(r.Tiers, r.Cells)
	for i, d := range r.Device {
		c.latency(fmt.Sprintf("device_latency[%d].latency", i), d.Latency)
	}
	c.latency("lag", r.Lag)
	c.timeline(r.Timeline)
	c.rankImbalance(r.RankImbalance)
	if c.err == nil {
		c.err = checkRequests(&r.Requests)
	}
	return c.err
}

// resultCheck keeps the first error checkResult finds: each of its
// checks does nothing once err is set, so that the first damage in
// document order is the one reported.
type resultCheck struct {
	err error
}

// fail sets err to the error format describes when bad holds and no
// error was found before.
func (c *resultCheck) fail(bad bool, format string, args ...any) {
	if c.err == nil && bad {
		c.err = fmt.Errorf(format, args...)
	}
}

// count refuses a negative count.
func (c *resultCheck) count(name string, v int64) {
	if v < 0 {
		c.fail(true, "%s is %d: want 0 or more (a damaged document?)", name, v)
	}
}

// seconds refuses a negative (or NaN) time.
func (c *resultCheck) seconds(name string, v float64) {
	if !(v >= 0) {
		c.fail(true, "%s is %g: want 0 or more (a damaged document?)", name, v)
	}
}

// figure refuses a figure boundedFigure refuses.
func (c *resultCheck) figure(name string, v, most float64) {
	if c.err == nil {
		c.err = boundedFigure(name, v, most)
	}
}

// latency refuses a distribution checkLatency refuses.
func (c *resultCheck) latency(name string, l schema.Latency) {
	if c.err == nil {
		c.err = checkLatency(name, l)
	}
}

// summary checks the run's elapsed time, its summary's figures and its
// size scale.
func (c *resultCheck) summary(r *schema.Result) {
	c.seconds("wall_s", r.WallS)
	// Figures a metric takes as the document gives them: past these
	// bounds no run gives them, and two trials of them overflow the
	// statistics' sum (NaN: --format json failed on it with exit status
	// 1). A token rate gets more room than kv-cache.py's figures: at a
	// size scale of 1/4096 a replay from RAM passes a billion tokens a
	// second.
	for _, f := range []struct {
		name string
		v    *float64
		max  float64
	}{{"wall_s", &r.WallS, maxFigure},
		{"summary.storage_throughput_tokens_per_sec", &r.Summary.StorageThroughputTokensPerSec, maxTokenRate},
		{"summary.storage_kv_tokens_per_sec", r.Summary.StorageKVTokensPerSec, maxTokenRate},
		// The p95s storage_health judges (results.Health), which its
		// reasons show; the figures the MLPerf rule reads are checked
		// there (checkSummary).
		{"summary.storage_read_p95_ms", &r.Summary.StorageReadP95MS, maxFigure},
		{"summary.storage_write_p95_ms", &r.Summary.StorageWriteP95MS, maxFigure},
		{"summary.cpu_p95_ms", &r.Summary.CPUP95MS, maxFigure}} {
		if f.v != nil {
			c.figure(f.name, *f.v, f.max)
		}
	}
	c.fail(r.SizeScale < 0 || r.SizeScale > 1, "size_scale is %g: want more than 0 and at most 1 (a damaged document?)", r.SizeScale)
}

// ranks checks the rank, the run's ranks and the trial number.
func (c *resultCheck) ranks(r *schema.Result) {
	c.count("rank", int64(r.Rank))
	c.count("ranks", int64(r.Ranks))
	c.fail(r.Ranks > maxRanks, "ranks is %d: want at most %d (a damaged document?)", r.Ranks, maxRanks)
	c.fail(r.Ranks > 0 && r.Rank >= r.Ranks, "rank is %d of ranks %d: want 0 to %d (a damaged document?)", r.Rank, r.Ranks, r.Ranks-1)
	c.count("trial", int64(r.Trial))
}

// replay checks the error and request counts and the replay block.
func (c *resultCheck) replay(r *schema.Result) {
	c.count("errors.count", r.Errors.Count)
	c.count("requests.count", r.Requests.Count)
	c.count("replay.setup_rows", r.Replay.SetupRows)
	c.count("replay.setup_capacity_evictions", r.Replay.SetupCapacityEvictions)
	c.count("replay.requests_cut_late", r.Replay.RequestsCutLate)
	// They are among the requests counted (results.Completed).
	c.fail(r.Replay.RequestsCutLate > r.Requests.Count, "replay.requests_cut_late is %d: want at most requests.count, %d (a damaged document?)", r.Replay.RequestsCutLate, r.Requests.Count)
	c.count("replay.rows_done", r.Replay.RowsDone)
	c.figure("replay.speed", r.Replay.Speed, maxFigure)
	if p := r.Replay.CPUPressure; p != nil {
		c.fail(!(*p >= 0 && *p <= 1), "replay.cpu_pressure is %g: want a share from 0 to 1 (a damaged document?)", *p)
	}
	c.figure("replay.duration_s", r.Replay.DurationS, maxFigure)
}

// closedLoop checks a closed loop's window, storage time and lag.
func (c *resultCheck) closedLoop(cl *schema.ClosedLoopStats) {
	if cl == nil {
		return
	}
	c.figure("closed_loop.window_s", cl.WindowS, maxFigure)
	c.figure("closed_loop.storage_io_s", cl.StorageIOS, maxFigure)
	if cl.ScheduledLag != nil {
		// storage_health judges its p95 (results.Health).
		c.latency("closed_loop.scheduled_lag", *cl.ScheduledLag)
	}
}

// traces checks each trace's sizes and digest.
func (c *resultCheck) traces(traces []schema.TraceInfo) {
	for i, t := range traces {
		at := fmt.Sprintf("traces[%d].", i)
		c.count(at+"rows", t.Rows)
		c.count(at+"size_bytes", t.SizeBytes)
		// The digest tells traces apart (SameTraces): one that is no
		// SHA-256 would tell nothing, or name a trace apart as the same.
		c.fail(t.SHA256 != "" && !sha256Hex.MatchString(t.SHA256), "%ssha256 is %q: want 64 hexadecimal digits (a damaged document?)", at, t.SHA256)
	}
}

// tiers checks each tier's counts, times and rates.
func (c *resultCheck) tiers(tiers []schema.TierTotals) {
	for i, t := range tiers {
		at := fmt.Sprintf("tiers[%d].", i)
		for _, f := range []struct {
			name string
			v    int64
		}{{"read_ops", t.ReadOps}, {"write_ops", t.WriteOps}, {"delete_ops", t.DeleteOps}, {"failed_ops", t.FailedOps}, {"read_bytes", t.ReadBytes},
			{"write_bytes", t.WriteBytes}, {"physical_read_bytes", t.PhysicalReadBytes}, {"physical_write_bytes", t.PhysicalWriteBytes}} {
			c.count(at+f.name, f.v)
		}
		c.seconds(at+"busy_s", t.BusyS)
		for _, f := range []struct {
			name    string
			v, most float64
		}{{"busy_s", t.BusyS, maxFigure}, {"read_busy_s", t.ReadBusyS, maxFigure}, {"write_busy_s", t.WriteBusyS, maxFigure},
			{"read_bandwidth_bytes_per_s", t.ReadDeviceBps, maxByteRate}, {"write_bandwidth_bytes_per_s", t.WriteDeviceBps, maxByteRate},
			{"read_offered_bytes_per_s", t.ReadOfferedBps, maxByteRate}, {"write_offered_bytes_per_s", t.WriteOfferedBps, maxByteRate}} {
			c.figure(at+f.name, f.v, f.most)
		}
	}
}

// cells checks each cell's counts, times, rates and latencies.
func (c *resultCheck) cells(cells []schema.Cell) {
	for i, cell := range cells {
		at := fmt.Sprintf("cells[%d].", i)
		c.count(at+"ops", cell.Ops)
		c.count(at+"failed_ops", cell.FailedOps)
		c.count(at+"logical_bytes", cell.LogicalBytes)
		c.count(at+"physical_bytes", cell.PhysicalBytes)
		c.seconds(at+"busy_s", cell.BusyS)
		c.figure(at+"busy_s", cell.BusyS, maxFigure)
		c.figure(at+"bandwidth_bytes_per_s", cell.DeviceBps, maxByteRate)
		c.figure(at+"offered_bytes_per_s", cell.OfferedBps, maxByteRate)
		c.latency(at+"latency", cell.Latency)
		c.latency(at+"latency_from_schedule", cell.FromSchedule)
		// Each operation that succeeded is one value of each latency
		// (results.Cell.Add), as a merge checks.
		c.fail(cell.Latency.Count != cell.Ops || cell.FromSchedule.Count != cell.Ops,
			"%sops is %d, its latency's count %d and latency_from_schedule's %d: want the same (a damaged document?)",
			at, cell.Ops, cell.Latency.Count, cell.FromSchedule.Count)
		if fb := cell.FirstByte; fb != nil {
			c.latency(at+"first_byte", *fb)
			c.fail(fb.Count > cell.Ops, "%sfirst_byte.count is %d: want at most ops, %d (a damaged document?)", at, fb.Count, cell.Ops)
		}
	}
}

// tierSums checks that each tier totals its cells (results.TierTotals),
// as a merge recomputes it: the report takes a tier's figures from one
// and its latencies and decode bytes from the other.
func (c *resultCheck) tierSums(tiers []schema.TierTotals, cells []schema.Cell) {
	sums := map[string]schema.TierTotals{}
	for _, t := range results.TierTotals(cells, 0) {
		sums[t.Tier] = t
	}
	for i, t := range tiers {
		s := sums[t.Tier]
		for _, f := range []struct {
			name      string
			got, want int64
		}{{"read_ops", t.ReadOps, s.ReadOps}, {"write_ops", t.WriteOps, s.WriteOps}, {"delete_ops", t.DeleteOps, s.DeleteOps},
			{"failed_ops", t.FailedOps, s.FailedOps}, {"read_bytes", t.ReadBytes, s.ReadBytes}, {"write_bytes", t.WriteBytes, s.WriteBytes},
			{"physical_read_bytes", t.PhysicalReadBytes, s.PhysicalReadBytes}, {"physical_write_bytes", t.PhysicalWriteBytes, s.PhysicalWriteBytes}} {
			c.fail(f.got != f.want, "tiers[%d].%s is %d: want its cells' sum, %d (a damaged document?)", i, f.name, f.got, f.want)
		}
	}
}

// timeline checks each second of the timeline.
func (c *resultCheck) timeline(timeline []schema.Second) {
	for i, s := range timeline {
		at := fmt.Sprintf("timeline[%d].", i)
		c.count(at+"t", int64(s.T))
		c.figure(at+"t", float64(s.T), maxFigure)
		for t := range s.ReadBytes {
			c.count(fmt.Sprintf("%sread_bytes[%d]", at, t), s.ReadBytes[t])
			c.count(fmt.Sprintf("%swrite_bytes[%d]", at, t), s.WriteBytes[t])
			c.count(fmt.Sprintf("%sops[%d]", at, t), s.Ops[t])
		}
		c.figure(at+"lag_p99_us", s.LagP99US, maxLatencyUS)
	}
}

// rankImbalance checks a merged run's slowest rank and its shares.
func (c *resultCheck) rankImbalance(im *schema.RankImbalance) {
	if im == nil {
		return
	}
	c.count("rank_imbalance.slowest_rank", int64(im.SlowestRank))
	for _, f := range []struct {
		name    string
		v, most float64
	}{{"slowest_wall_s", im.SlowestWallS, maxFigure}, {"fastest_wall_s", im.FastestWallS, maxFigure}, {"start_spread_s", im.StartSpreadS, maxFigure},
		{"slowest_bytes_share", im.SlowestBytesShare, 1}, {"slowest_time_share", im.SlowestTimeShare, 1}} {
		c.figure("rank_imbalance."+f.name, f.v, f.most)
	}
}

// checkLatency refuses a latency distribution no histogram gives: a
// negative count, a figure outside 0 to maxLatencyUS, percentiles out of
// order (min, p50, p90, p95, p99, p99.9, p99.99, max; one an older
// document lacks is 0, and skipped), or a mean outside its min and max.
func checkLatency(name string, l schema.Latency) error {
	if l.Count < 0 {
		return fmt.Errorf("%s.count is %d: want 0 or more (a damaged document?)", name, l.Count)
	}
	if err := boundedFigure(name+".mean_us", l.MeanUS, maxLatencyUS); err != nil {
		return err
	}
	if err := ordered(name+".", []string{"min_us", "p50_us", "p90_us", "p95_us", "p99_us", "p99_9_us", "p99_99_us", "max_us"},
		[]float64{l.MinUS, l.P50US, l.P90US, l.P95US, l.P99US, l.P999US, l.P9999US, l.MaxUS}, maxLatencyUS); err != nil {
		return err
	}
	if (l.MinUS > 0 && l.MeanUS < l.MinUS) || (l.MaxUS > 0 && l.MeanUS > l.MaxUS) {
		return fmt.Errorf("%s.mean_us is %g: want from min_us, %g, to max_us, %g (a damaged document?)", name, l.MeanUS, l.MinUS, l.MaxUS)
	}
	return nil
}

// ordered refuses figures vs, named prefix+names, that are not each from
// 0 to most, or that decrease: percentiles in ascending order, where a 0
// is one a document lacks.
func ordered(prefix string, names []string, vs []float64, most float64) error {
	last := -1
	for i, v := range vs {
		if err := boundedFigure(prefix+names[i], v, most); err != nil {
			return err
		}
		if v == 0 {
			continue
		}
		if last >= 0 && v < vs[last] {
			return fmt.Errorf("%s%s is %g: want at least %s, %g (a damaged document?)", prefix, names[i], v, names[last], vs[last])
		}
		last = i
	}
	return nil
}

// checkRequests refuses request statistics whose latencies checkLatency
// refuses, that do not count their requests, or whose QoS classes or SLO
// count more than they have, or judge their SLA other than their figures
// do: a single document's classes are rendered as they stand (a merge
// recounts them, results.Requests).
func checkRequests(s *schema.RequestStats) error {
	if err := checkLatency("requests.latency", s.Latency); err != nil {
		return err
	}
	if s.Latency.Count != s.Count {
		return fmt.Errorf("requests.latency.count is %d: want requests.count, %d (a damaged document?)", s.Latency.Count, s.Count)
	}
	var classes int64
	for i, q := range s.ByQoS {
		at := fmt.Sprintf("requests.by_qos[%d].", i)
		if err := checkLatency(at+"latency", q.Latency); err != nil {
			return err
		}
		switch {
		case q.Count < 0 || q.Count > s.Count-classes:
			return fmt.Errorf("%scount is %d: want 0 to requests.count, %d, with the other classes' (a damaged document?)", at, q.Count, s.Count)
		case q.Latency.Count != q.Count:
			return fmt.Errorf("%slatency.count is %d: want its count, %d (a damaged document?)", at, q.Latency.Count, q.Count)
		case q.WithinTarget < 0 || q.WithinTarget > q.Count:
			return fmt.Errorf("%swithin_target is %d: want 0 to its count, %d (a damaged document?)", at, q.WithinTarget, q.Count)
		}
		classes += q.Count
		if err := boundedFigure(at+"target_p95_ms", q.TargetP95MS, maxFigure); err != nil {
			return err
		}
		if err := boundedFigure(at+"compliance", q.Compliance, 1); err != nil {
			return err
		}
		// WithinTarget is 0 in documents written before it (Compliance
		// alone: results.Requests.Merge).
		if share, _ := results.Compliance(q.WithinTarget, q.Count); q.WithinTarget > 0 && share != q.Compliance {
			return fmt.Errorf("%scompliance is %g: want within_target over count, %d of %d (a damaged document?)", at, q.Compliance, q.WithinTarget, q.Count)
		}
		if met := q.Compliance >= results.ComplianceTarget; q.Count > 0 && q.Met != met {
			return fmt.Errorf("%smet is %t with compliance %g: the SLA is met at %g (a damaged document?)", at, q.Met, q.Compliance, results.ComplianceTarget)
		}
	}
	if slo := s.SLO; slo != nil {
		if err := checkSLO("requests.slo.", slo.Count, slo.Within, slo.TargetMS, slo.Attainment); err != nil {
			return err
		}
		for i, c := range slo.ByQoS {
			if err := checkSLO(fmt.Sprintf("requests.slo.by_qos[%d].", i), c.Count, c.Within, c.TargetMS, c.Attainment); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSLO refuses an SLO's requests within its target beyond its count,
// or a target or attainment no run gives.
func checkSLO(at string, n, within int64, target, attainment float64) error {
	if n < 0 || within < 0 || within > n {
		return fmt.Errorf("%swithin is %d of count %d: want 0 to its count (a damaged document?)", at, within, n)
	}
	if err := boundedFigure(at+"target_ms", target, maxFigure); err != nil {
		return err
	}
	return boundedFigure(at+"attainment", attainment, 1)
}
