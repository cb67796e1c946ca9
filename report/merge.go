package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// maxErrorMessages bounds the first error messages a merge keeps.
const maxErrorMessages = 10

// MergeRanks merges the documents of the ranks of one run into one result
// document, itself valid (Ranks is the number of documents, Rank 0).
// The merge is exact where the documents allow it: operation counts and
// bytes add, cells are matched by tier, operation and phase, and their
// HdrHistograms are decoded and added (percentiles are recomputed, never
// averaged); bandwidth is recomputed over the common wall-clock window
// (the earliest Started to the latest Started+WallS); timelines are
// aligned by Started, to the whole second; QoS compliance is recomputed
// from the requests within target of each rank. Three figures cannot be
// exact and say so here: a cell's BusyS is the longest of the ranks', a
// second's LagP99US the highest of the ranks', and storage tokens per
// second the ranks' tokens over the common window. The documents must
// share their size scale. The inputs are not modified.
func MergeRanks(docs []*schema.Result) (*schema.Result, error) {
	if len(docs) == 0 {
		return nil, fmt.Errorf("report: merge: no documents")
	}
	first := docs[0]
	for _, d := range docs[1:] {
		if d.SizeScale != first.SizeScale {
			return nil, fmt.Errorf("report: merge: %w: size scale %g and %g", ErrIncompatible, first.SizeScale, d.SizeScale)
		}
	}
	out := &schema.Result{
		Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion,
		Tool: first.Tool, ToolVersion: first.ToolVersion, CommandLine: first.CommandLine,
		Label: first.Label, System: first.System, Trial: first.Trial,
		Rank: 0, Ranks: len(docs), Complete: true,
		Host: first.Host, Config: first.Config, SizeScale: first.SizeScale,
	}
	start, end := first.Started, first.Started
	for _, d := range docs {
		if d.Started.Before(start) {
			start = d.Started
		}
		if e := d.Started.Add(seconds(d.WallS)); e.After(end) {
			end = e
		}
	}
	out.Started = start
	out.WallS = end.Sub(start).Seconds()
	wall := out.WallS

	type cellAcc struct {
		cell       schema.Cell
		lat, sched []schema.Latency
	}
	cells := map[cellKey]*cellAcc{}
	type qosAcc struct {
		q    schema.QoSStats
		met  int64
		lats []schema.Latency
	}
	qos := map[string]*qosAcc{}
	var reqLat, lag []schema.Latency
	var hosts []string
	var tokens float64
	timeline := map[int]*schema.Second{}
	for _, d := range docs {
		if !d.Complete {
			out.Complete = false
			out.IncompleteReason = joinUnique(out.IncompleteReason, d.IncompleteReason, "; ")
		}
		for _, h := range strings.Split(d.Host.Hostname, ",") {
			hosts = appendUnique(hosts, h)
		}
		for _, t := range d.Traces {
			if !slices.ContainsFunc(out.Traces, func(u schema.TraceInfo) bool { return u.File == t.File && u.Rows == t.Rows }) {
				out.Traces = append(out.Traces, t)
			}
		}
		for _, w := range d.Warnings {
			out.Warnings = appendUnique(out.Warnings, w)
		}
		for _, c := range d.Cells {
			k := keyOf(c)
			a := cells[k]
			if a == nil {
				a = &cellAcc{cell: schema.Cell{Tier: c.Tier, Op: c.Op, Phase: c.Phase}}
				cells[k] = a
			}
			a.cell.Backend = joinUnique(a.cell.Backend, c.Backend, ",")
			a.cell.Ops += c.Ops
			a.cell.LogicalBytes += c.LogicalBytes
			a.cell.PhysicalBytes += c.PhysicalBytes
			a.cell.BusyS = max(a.cell.BusyS, c.BusyS)
			a.lat = append(a.lat, c.Latency)
			a.sched = append(a.sched, c.FromSchedule)
		}
		out.Requests.Count += d.Requests.Count
		reqLat = append(reqLat, d.Requests.Latency)
		for _, q := range d.Requests.ByQoS {
			a := qos[q.QoS]
			if a == nil {
				a = &qosAcc{q: schema.QoSStats{QoS: q.QoS, TargetP95MS: q.TargetP95MS}}
				qos[q.QoS] = a
			}
			a.q.Count += q.Count
			// Compliance is a ratio of two integers, so the count within
			// target is recovered exactly.
			a.met += int64(math.Round(q.Compliance * float64(q.Count)))
			a.lats = append(a.lats, q.Latency)
		}
		lag = append(lag, d.Lag)
		off := int(math.Floor(d.Started.Sub(start).Seconds()))
		for _, s := range d.Timeline {
			t := s.T + off
			m := timeline[t]
			if m == nil {
				m = &schema.Second{T: t}
				timeline[t] = m
			}
			for i := range s.ReadBytes {
				m.ReadBytes[i] += s.ReadBytes[i]
				m.WriteBytes[i] += s.WriteBytes[i]
				m.Ops[i] += s.Ops[i]
			}
			m.LagP99US = max(m.LagP99US, s.LagP99US)
		}
		mergeReplay(&out.Replay, &d.Replay)
		out.Errors.Count += d.Errors.Count
		for _, e := range d.Errors.First {
			if len(out.Errors.First) < maxErrorMessages {
				out.Errors.First = append(out.Errors.First, e)
			}
		}
		tokens += d.Summary.StorageThroughputTokensPerSec * d.WallS
	}
	slices.Sort(hosts)
	out.Host.Hostname = strings.Join(hosts, ",")

	keys := make([]cellKey, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cellKey.compare)
	var err error
	for _, k := range keys {
		a := cells[k]
		c := a.cell
		if c.Latency, err = hist.MergeLatencies(a.lat...); err != nil {
			return nil, fmt.Errorf("report: merge: %s %s %s latency: %w", c.Tier, c.Op, c.Phase, err)
		}
		if c.FromSchedule, err = hist.MergeLatencies(a.sched...); err != nil {
			return nil, fmt.Errorf("report: merge: %s %s %s latency from schedule: %w", c.Tier, c.Op, c.Phase, err)
		}
		if wall > 0 {
			c.BandwidthBps = float64(c.LogicalBytes) / wall
		}
		if c.BusyS > 0 {
			c.BusyBandwidthBps = float64(c.LogicalBytes) / c.BusyS
		}
		out.Cells = append(out.Cells, c)
	}
	out.Tiers = tierTotals(out.Cells, wall)

	if out.Requests.Latency, err = hist.MergeLatencies(reqLat...); err != nil {
		return nil, fmt.Errorf("report: merge: request latency: %w", err)
	}
	names := make([]string, 0, len(qos))
	for n := range qos {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(qosOrder(a), qosOrder(b)) })
	for _, n := range names {
		a := qos[n]
		if a.q.Latency, err = hist.MergeLatencies(a.lats...); err != nil {
			return nil, fmt.Errorf("report: merge: %s request latency: %w", n, err)
		}
		if a.q.Count > 0 {
			a.q.Compliance = float64(a.met) / float64(a.q.Count)
		}
		a.q.Met = a.q.Compliance >= 0.95
		out.Requests.ByQoS = append(out.Requests.ByQoS, a.q)
	}
	if out.Lag, err = hist.MergeLatencies(lag...); err != nil {
		return nil, fmt.Errorf("report: merge: lag: %w", err)
	}
	ts := make([]int, 0, len(timeline))
	for t := range timeline {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	for _, t := range ts {
		out.Timeline = append(out.Timeline, *timeline[t])
	}
	if out.Summary, err = summarise(out, tokens); err != nil {
		return nil, err
	}
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// cellKey matches cells across ranks, ordered as kvreplay writes them.
type cellKey struct{ tier, op, phase int }

func keyOf(c schema.Cell) cellKey {
	return cellKey{order(c.Tier, schema.ParseTier), order(c.Op, schema.ParseOp), order(c.Phase, schema.ParsePhase)}
}

// order is the index of a name (a Tier, an Op, a Phase); unknown names
// sort after the known ones.
func order[T ~uint8](s string, parse func(string) (T, error)) int {
	v, err := parse(s)
	if err != nil {
		return 1000
	}
	return int(v)
}

func (a cellKey) compare(b cellKey) int {
	return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.op, b.op), cmp.Compare(a.phase, b.phase))
}

func qosOrder(s string) int { return order(s, schema.ParseQoS) }

// tierTotals totals cells per tier as kvreplay does.
func tierTotals(cells []schema.Cell, wall float64) []schema.TierTotals {
	var out []schema.TierTotals
	for _, c := range cells {
		if len(out) == 0 || out[len(out)-1].Tier != c.Tier {
			out = append(out, schema.TierTotals{Tier: c.Tier})
		}
		t := &out[len(out)-1]
		t.Backend = joinUnique(t.Backend, c.Backend, ",")
		switch c.Op {
		case schema.OpRead.String():
			t.ReadOps += c.Ops
			t.ReadBytes += c.LogicalBytes
			t.PhysicalReadBytes += c.PhysicalBytes
		case schema.OpWrite.String():
			t.WriteOps += c.Ops
			t.WriteBytes += c.LogicalBytes
			t.PhysicalWriteBytes += c.PhysicalBytes
		case schema.OpDelete.String():
			t.DeleteOps += c.Ops
		}
		t.BusyS = max(t.BusyS, c.BusyS)
	}
	for i := range out {
		if wall > 0 {
			out[i].ReadBandwidthBps = float64(out[i].ReadBytes) / wall
			out[i].WriteBandwidthBps = float64(out[i].WriteBytes) / wall
		}
	}
	return out
}

func mergeReplay(dst, src *schema.ReplayStats) {
	dst.Rows += src.Rows
	dst.RowsDone += src.RowsDone
	dst.Objects += src.Objects
	dst.ColdPrepared += src.ColdPrepared
	dst.ColdPreparedBytes += src.ColdPreparedBytes
	dst.CapacityEvictions += src.CapacityEvictions
	dst.Rematerialised += src.Rematerialised
	dst.Verify = dst.Verify || src.Verify
	dst.VerifiedBytes += src.VerifiedBytes
	dst.PeakRSSBytes = max(dst.PeakRSSBytes, src.PeakRSSBytes)
	dst.Workers += src.Workers
	dst.QueueDepth += src.QueueDepth
	dst.BlockSize = max(dst.BlockSize, src.BlockSize)
	dst.Speed = max(dst.Speed, src.Speed)
	dst.Engine = joinUnique(dst.Engine, src.Engine, ",")
}

// summarise recomputes the reference-named summary of a merged document,
// as kvreplay computes it (reference section 5).
func summarise(r *schema.Result, tokens float64) (schema.Summary, error) {
	s := schema.Summary{ElapsedTime: r.WallS, TotalRequests: r.Requests.Count}
	if r.WallS > 0 {
		s.RequestsPerSecond = float64(r.Requests.Count) / r.WallS
		s.StorageThroughputTokensPerSec = tokens / r.WallS
	}
	for _, t := range r.Tiers {
		rd, wr := t.ReadBandwidthBps/gib, t.WriteBandwidthBps/gib
		switch t.Tier {
		case schema.TierGPU.String():
			s.TierGPUReadBandwidthGBps, s.TierGPUWriteBandwidthGBps = rd, wr
		case schema.TierCPU.String():
			s.TierCPUReadBandwidthGBps, s.TierCPUWriteBandwidthGBps = rd, wr
		case schema.TierNVMe.String():
			s.TierStorageReadBandwidthGBps, s.TierStorageWriteBandwidthGBps = rd, wr
			s.TierStorageKVBytesReadGB = float64(t.ReadBytes) / gib
			s.TierStorageKVBytesWrittenGB = float64(t.WriteBytes) / gib
		}
	}
	var nvmeRead, nvmeWrite, cpu []schema.Latency
	for _, c := range r.Cells {
		switch {
		case c.Tier == schema.TierNVMe.String() && c.Op == schema.OpRead.String():
			nvmeRead = append(nvmeRead, c.Latency)
			if c.Phase == schema.PhaseDecode.String() {
				s.DecodeBytesReadGB += float64(c.LogicalBytes) / gib
			}
		case c.Tier == schema.TierNVMe.String() && c.Op == schema.OpWrite.String():
			nvmeWrite = append(nvmeWrite, c.Latency)
		case c.Tier == schema.TierCPU.String() && c.Op != schema.OpDelete.String():
			cpu = append(cpu, c.Latency)
		}
	}
	rl, err := hist.MergeLatencies(nvmeRead...)
	if err != nil {
		return s, fmt.Errorf("report: merge: Tier-2 read latency: %w", err)
	}
	wl, err := hist.MergeLatencies(nvmeWrite...)
	if err != nil {
		return s, fmt.Errorf("report: merge: Tier-2 write latency: %w", err)
	}
	cl, err := hist.MergeLatencies(cpu...)
	if err != nil {
		return s, fmt.Errorf("report: merge: Tier-1 latency: %w", err)
	}
	s.StorageReadP95MS, s.StorageWriteP95MS, s.CPUP95MS = rl.P95US/1000, wl.P95US/1000, cl.P95US/1000
	q := r.Requests.Latency
	s.StorageIOLatencyMS = schema.Percentiles{Mean: q.MeanUS / 1000, P50: q.P50US / 1000, P95: q.P95US / 1000,
		P99: q.P99US / 1000, P999: q.P999US / 1000, P9999: q.P9999US / 1000}

	s.StorageHealth = schema.EvaluateHealth(&s, len(nvmeWrite) > 0, len(nvmeRead) > 0, cl.Count > 0, r.Errors.Count)
	return s, nil
}

// joinUnique adds b to the sep-separated set a, keeping it sorted, so that
// the result does not depend on the order of merges.
func joinUnique(a, b, sep string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	parts := strings.Split(a, sep)
	for _, p := range strings.Split(b, sep) {
		parts = appendUnique(parts, p)
	}
	slices.Sort(parts)
	return strings.Join(parts, sep)
}

func appendUnique(s []string, v string) []string {
	if v == "" || slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}
