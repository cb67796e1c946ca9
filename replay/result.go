package replay

import (
	"fmt"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

const gib = float64(1 << 30)

// result builds the run's document; the caller adds the host, command line
// and configuration.
func (e *engine) result(wall time.Duration) *schema.Result {
	m := e.m
	m.mu.Lock()
	defer m.mu.Unlock()
	secs := wall.Seconds()
	res := &schema.Result{
		Format:        schema.ResultFormat,
		FormatVersion: schema.ResultFormatVersion,
		Ranks:         1,
		Started:       e.start.UTC(),
		WallS:         secs,
		Complete:      true,
		SizeScale:     e.cfg.SizeScale,
		Traces:        e.infos,
		Lag:           m.lag.Latency(),
		Errors:        schema.ErrorStats{Count: m.errCount, First: m.errFirst},
	}
	if e.cfg.SizeScale != 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"SCALED RUN: every object is %g of its trace size (--size-scale); logical bytes are the trace's times the scale: not a full-size measurement",
			e.cfg.SizeScale))
	}
	res.Warnings = append(res.Warnings, e.warnings...)
	seen := map[Backend]bool{}
	for t := range schema.Tier(schema.NumTiers) {
		b := e.backends[t]
		if b == nil || seen[b] {
			continue
		}
		seen[b] = true
		res.Warnings = append(res.Warnings, b.Caps().Warnings...)
	}
	if n := e.counted.mismatch.Load(); n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"%d reads named a tier their object was not on (the trace's Evict pairs were not adjacent or were missing); they read the object where it was", n))
	}
	for t := range schema.Tier(schema.NumTiers) {
		if e.backends[t] == nil {
			continue
		}
		tt := schema.TierTotals{Tier: t.String(), Backend: e.backends[t].Caps().Name}
		var busy time.Duration
		for op := range schema.Op(schema.NumOps) {
			for ph := range schema.Phase(schema.NumPhases) {
				c := m.cells[t][op][ph]
				if c == nil || (c.ops == 0 && c.busy == 0) {
					continue
				}
				cell := schema.Cell{
					Tier: t.String(), Op: op.String(), Phase: ph.String(), Backend: tt.Backend,
					Ops: c.ops, LogicalBytes: c.logical, PhysicalBytes: c.physical, BusyS: c.busy.Seconds(),
					Latency: c.lat.Latency(), FromSchedule: c.sched.Latency(),
				}
				if secs > 0 {
					cell.BandwidthBps = float64(c.logical) / secs
				}
				if c.busy > 0 {
					cell.BusyBandwidthBps = float64(c.logical) / c.busy.Seconds()
				}
				res.Cells = append(res.Cells, cell)
				busy = max(busy, c.busy)
				switch op {
				case schema.OpRead:
					tt.ReadOps += c.ops
					tt.ReadBytes += c.logical
					tt.PhysicalReadBytes += c.physical
				case schema.OpWrite:
					tt.WriteOps += c.ops
					tt.WriteBytes += c.logical
					tt.PhysicalWriteBytes += c.physical
				case schema.OpDelete:
					tt.DeleteOps += c.ops
				}
			}
		}
		if tt.ReadOps+tt.WriteOps+tt.DeleteOps == 0 {
			continue
		}
		tt.BusyS = busy.Seconds()
		if secs > 0 {
			tt.ReadBandwidthBps = float64(tt.ReadBytes) / secs
			tt.WriteBandwidthBps = float64(tt.WriteBytes) / secs
		}
		res.Tiers = append(res.Tiers, tt)
	}

	res.Requests = schema.RequestStats{Count: m.reqCount, Latency: m.reqAll.Latency()}
	for q := schema.QoSInteractive; q < schema.NumQoS; q++ {
		h := m.reqQoS[q]
		l := h.Latency()
		if l.Count == 0 {
			continue
		}
		qs := schema.QoSStats{QoS: q.String(), Count: l.Count, TargetP95MS: float64(qosTargets[q].Milliseconds()),
			Compliance: float64(m.reqMet[q]) / float64(l.Count), Latency: l}
		qs.Met = qs.Compliance >= 0.95
		res.Requests.ByQoS = append(res.Requests.ByQoS, qs)
	}
	for i := range m.timeline {
		if h := m.secLag[i]; h != nil {
			m.timeline[i].LagP99US = h.Latency().P99US
		}
	}
	res.Timeline = m.timeline

	res.Replay = schema.ReplayStats{
		Rows: e.rows.Load(), RowsDone: e.rowsDone.Load(), Objects: int64(len(e.keys)),
		ColdPrepared: e.counted.cold.Load(), ColdPreparedBytes: e.counted.coldBytes.Load(),
		CapacityEvictions: e.counted.evictions.Load(), Rematerialised: e.counted.remat.Load(),
		Verify: e.cfg.Verify, VerifiedBytes: e.verified.Load(),
		Workers: e.cfg.Workers, QueueDepth: e.cfg.QueueDepth, BlockSize: e.cfg.BlockSize,
		Speed: e.cfg.Speed, Engine: e.engine,
	}
	res.Summary = e.summary(res, secs)
	return res
}

// summary fills the reference's metric names where the meaning is the same
// (reference section 5); m.mu is held.
func (e *engine) summary(res *schema.Result, secs float64) schema.Summary {
	m := e.m
	s := schema.Summary{ElapsedTime: secs, TotalRequests: m.reqCount}
	if secs > 0 {
		s.RequestsPerSecond = float64(m.reqCount) / secs
	}
	for _, tt := range res.Tiers {
		r, w := tt.ReadBandwidthBps/gib, tt.WriteBandwidthBps/gib
		switch tt.Tier {
		case "Tier-0":
			s.TierGPUReadBandwidthGBps, s.TierGPUWriteBandwidthGBps = r, w
		case "Tier-1":
			s.TierCPUReadBandwidthGBps, s.TierCPUWriteBandwidthGBps = r, w
		case "Tier-2":
			s.TierStorageReadBandwidthGBps, s.TierStorageWriteBandwidthGBps = r, w
			s.TierStorageKVBytesReadGB = float64(tt.ReadBytes) / gib
			s.TierStorageKVBytesWrittenGB = float64(tt.WriteBytes) / gib
		}
	}
	// Storage tokens per second: KV tokens moved through Tier-2 per second,
	// from the trace's bytes per token and tensor parallelism.
	var bpt int64
	tp := 1
	for _, src := range e.srcs {
		if src.Meta != nil && src.Meta.BytesPerToken > 0 {
			bpt = src.Meta.BytesPerToken
			tp = max(1, src.Meta.TensorParallel)
		}
	}
	var nvmeRead, nvmeWrite, cpu []*hist.Histogram
	for op := range schema.Op(schema.NumOps) {
		for ph := range schema.Phase(schema.NumPhases) {
			if c := m.cells[schema.TierNVMe][op][ph]; c != nil {
				if op == schema.OpRead {
					nvmeRead = append(nvmeRead, c.lat)
					if ph == schema.PhaseDecode {
						s.DecodeBytesReadGB += float64(c.logical) / gib
					}
				} else if op == schema.OpWrite {
					nvmeWrite = append(nvmeWrite, c.lat)
				}
				if bpt > 0 && secs > 0 && op != schema.OpDelete {
					s.StorageThroughputTokensPerSec += float64(c.logical) / e.cfg.SizeScale / float64(bpt/int64(tp)) / secs
				}
			}
			if c := m.cells[schema.TierCPU][op][ph]; c != nil && op != schema.OpDelete {
				cpu = append(cpu, c.lat)
			}
		}
	}
	s.StorageReadP95MS = merged(nvmeRead...).Latency().P95US / 1000
	s.StorageWriteP95MS = merged(nvmeWrite...).Latency().P95US / 1000
	cpuLat := merged(cpu...).Latency()
	s.CPUP95MS = cpuLat.P95US / 1000
	rl := res.Requests.Latency
	s.StorageIOLatencyMS = schema.Percentiles{Mean: rl.MeanUS / 1000, P50: rl.P50US / 1000, P95: rl.P95US / 1000,
		P99: rl.P99US / 1000, P999: rl.P999US / 1000, P9999: rl.P9999US / 1000}

	s.StorageHealth = schema.EvaluateHealth(&s, len(nvmeWrite) > 0, len(nvmeRead) > 0, cpuLat.Count > 0, res.Errors.Count)
	return s
}

// merged sums histograms (exactly: counts add).
func merged(hs ...*hist.Histogram) *hist.Histogram {
	m := hist.New()
	for _, h := range hs {
		hist.Merge(m, h)
	}
	return m
}
