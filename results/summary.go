package results

import (
	"fmt"
	"slices"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// The keys of schema.Summary.NotMeasured: the document's figures that a
// run may be unable to measure.
const (
	NotMeasuredRefTokens = "summary.storage_throughput_tokens_per_sec"
	NotMeasuredKVTokens  = "summary.storage_kv_tokens_per_sec"
	NotMeasuredSLA       = "requests.by_qos"
)

// Summarize computes the reference-named summary block of a result whose
// Cells, Tiers, Requests, Errors, WallS, Complete and Replay are final
// (reference section 5); it is what kvreplay writes and what kvreport
// recomputes after a merge. kvTokens is the total of KV tokens whose bytes
// the run moved through Tier-2 (StorageTokens; for a merge, the sum of the
// documents'), nil when unknown; storage_kv_tokens_per_sec divides it by
// WallS. Bandwidths and byte counts are in decimal GB (GB); tier
// bandwidths are r.Tiers' offered load (the reference's meaning); the
// storage read and write P95 merge the Tier-2 Read and Write cells, the
// CPU P95 the Tier-1 cells other than Delete, each of the phases the
// reference samples (refPhase: not a demotion's Evict), and decode bytes
// are the Tier-2 Read Decode cells' logical bytes; storage_io_latency_ms
// is the request latency.
// storage_health is Health's.
//
// What the run could not measure is named in NotMeasured, never left as a
// silent zero: the reference's storage_throughput_tokens_per_sec (its
// total tokens generated over its total storage I/O time: a trace does not
// carry the tokens generated, so it is always 0 here, as in the
// reference's own trace mode), storage_kv_tokens_per_sec without kvTokens,
// and the QoS classes' SLA under --speed max (Replay.Speed 0) of an open
// loop, where rows are not released at their arrival times. A closed loop
// (r.ClosedLoop) measures the reference's storage throughput: the tokens
// its completed requests generated over the sum of their storage
// latencies; under --speed max its users still wait for their storage, so
// their SLA is measured. It fails only on a damaged
// cell histogram.
func Summarize(r *schema.Result, kvTokens *float64) (schema.Summary, error) {
	s := schema.Summary{ElapsedTime: r.WallS, TotalRequests: Completed(r),
		NotMeasured: map[string]string{NotMeasuredRefTokens: "the reference's figure is its total tokens generated over " +
			"its total storage I/O time, which only a closed-loop replay (--closed-loop) of a trace with a Tokens column " +
			"measures: an open-loop replay's requests do not wait for their storage (kvbench's own KV token rate, kv_tokens_moved_per_s, is the summary's storage_kv_tokens_per_sec)"}}
	if r.WallS > 0 {
		s.RequestsPerSecond = float64(Completed(r)) / r.WallS
	}
	switch {
	case kvTokens == nil:
		s.NotMeasured[NotMeasuredKVTokens] = "the trace's bytes per token are unknown: kvreplay reads them from " +
			"the trace's .meta.json sidecar, which a trace on a pipe and a kv-cache.py trace lack (kvreplay --model names the model)"
	case r.WallS > 0:
		v := *kvTokens / r.WallS
		s.StorageKVTokensPerSec = &v
	default:
		s.NotMeasured[NotMeasuredKVTokens] = "the run measured no time"
	}
	if cl := r.ClosedLoop; cl != nil && cl.TokensKnown && cl.StorageIOS > 0 {
		// A closed loop knows which requests completed and what they
		// generated: the reference's own figure.
		s.StorageThroughputTokensPerSec = float64(cl.TokensGenerated) / cl.StorageIOS
		delete(s.NotMeasured, NotMeasuredRefTokens)
	} else if cl != nil {
		s.NotMeasured[NotMeasuredRefTokens] = "the reference's figure is its total tokens generated over its total " +
			"storage I/O time: this trace has no Tokens column, or no request completed"
	}
	if r.Replay.Speed == 0 && r.Requests.Count > 0 && r.ClosedLoop == nil {
		s.NotMeasured[NotMeasuredSLA] = "under --speed max rows are released as fast as workers take them, not at " +
			"their arrival times: requests wait behind the trace's backlog, so their latency and SLA compliance " +
			"measure that queue, not the reference's served workload (replay at --speed 1 for the SLA)"
	}
	for _, t := range r.Tiers {
		rd, wr := t.ReadOfferedBps/GB, t.WriteOfferedBps/GB
		switch t.Tier {
		case schema.TierGPU.String():
			s.TierGPUReadBandwidthGBps, s.TierGPUWriteBandwidthGBps = rd, wr
		case schema.TierCPU.String():
			s.TierCPUReadBandwidthGBps, s.TierCPUWriteBandwidthGBps = rd, wr
		case schema.TierNVMe.String():
			s.TierStorageReadBandwidthGBps, s.TierStorageWriteBandwidthGBps = rd, wr
			s.TierStorageKVBytesReadGB = float64(t.ReadBytes) / GB
			s.TierStorageKVBytesWrittenGB = float64(t.WriteBytes) / GB
		}
	}
	nvme, cpu := schema.TierNVMe.String(), schema.TierCPU.String()
	read, write, del := schema.OpRead.String(), schema.OpWrite.String(), schema.OpDelete.String()
	s.DecodeBytesReadGB = float64(DecodeBytesRead(r.Cells)) / GB
	// The reference's latencies are of its hits' reads and its new
	// objects' writes: a demotion's copy (the Evict phase) is timed there
	// but keeps no sample, so neither its Tier-2 write nor its Tier-1 read
	// and write count here.
	rl, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == nvme && c.Op == read && refPhase(c) }, submitted)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-2 read latency: %w", err)
	}
	wl, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == nvme && c.Op == write && refPhase(c) }, submitted)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-2 write latency: %w", err)
	}
	cl, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == cpu && c.Op != del && refPhase(c) }, submitted)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-1 latency: %w", err)
	}
	s.StorageReadP95MS, s.StorageWriteP95MS, s.CPUP95MS = rl.P95US/1000, wl.P95US/1000, cl.P95US/1000
	if d, ok, err := DeviceOf(r.Device, r.Cells, schema.TierNVMe, schema.OpRead); err != nil {
		return s, fmt.Errorf("results: summary: %w", err)
	} else if ok {
		rl = d
	}
	if d, ok, err := DeviceOf(r.Device, r.Cells, schema.TierNVMe, schema.OpWrite); err != nil {
		return s, fmt.Errorf("results: summary: %w", err)
	} else if ok {
		wl = d
	}
	setDevice(&s, rl, wl)
	q := r.Requests.Latency
	s.StorageIOLatencyMS = schema.Percentiles{Mean: q.MeanUS / 1000, P50: q.P50US / 1000, P95: q.P95US / 1000,
		P99: q.P99US / 1000, P999: q.P999US / 1000, P9999: q.P9999US / 1000}
	s.StorageHealth = evaluate(r, &s, presenceOf(r))
	return s, nil
}

// StorageTokens returns the KV tokens whose bytes cells moved through
// Tier-2 (Read and Write cells of every phase): their logical bytes, the
// bytes the run moved (a scaled run's are the trace's times the scale),
// over the bytes per token of one tensor-parallel rank (bytesPerToken /
// tensorParallel in whole bytes; a tensorParallel below 1 counts as 1). It
// reports false when the trace gives no bytes per token. Summarize takes
// it as its kvTokens.
func StorageTokens(cells []schema.Cell, bytesPerToken int64, tensorParallel int) (float64, bool) {
	perRank := bytesPerToken / int64(max(1, tensorParallel))
	if perRank <= 0 {
		return 0, false
	}
	var bytes int64
	for _, c := range cells {
		if c.Tier == schema.TierNVMe.String() && (c.Op == schema.OpRead.String() || c.Op == schema.OpWrite.String()) {
			bytes += c.LogicalBytes
		}
	}
	return float64(bytes) / float64(perRank), true
}

// TierOpLatency merges, exactly, the latencies of the cells of one tier
// and operation of the phases the reference samples (refPhase: not
// Evict): from submission, or from the scheduled time when fromSchedule
// is set. It is the distribution behind the summary's storage read and
// write P95 and kvreport's Tier-2 latency metrics. It fails only on a
// damaged histogram.
func TierOpLatency(cells []schema.Cell, tier schema.Tier, op schema.Op, fromSchedule bool) (schema.Latency, error) {
	t, o := tier.String(), op.String()
	of := submitted
	if fromSchedule {
		of = scheduled
	}
	l, err := cellLatency(cells, func(c *schema.Cell) bool { return c.Tier == t && c.Op == o && refPhase(c) }, of)
	if err != nil {
		return schema.Latency{}, fmt.Errorf("results: %s %s latency: %w", t, o, err)
	}
	return l, nil
}

// TierEvictLatency is TierOpLatency of the Evict phase, from submission:
// the demotions' copies, which the reference's latencies leave out.
func TierEvictLatency(cells []schema.Cell, tier schema.Tier, op schema.Op) (schema.Latency, error) {
	t, o, evict := tier.String(), op.String(), schema.PhaseEvict.String()
	l, err := cellLatency(cells, func(c *schema.Cell) bool { return c.Tier == t && c.Op == o && c.Phase == evict }, submitted)
	if err != nil {
		return schema.Latency{}, fmt.Errorf("results: %s %s %s latency: %w", t, o, evict, err)
	}
	return l, nil
}

// refPhase reports whether the reference samples the latency of c's
// phase: every phase but Evict (a demotion's copy, which kv-cache.py
// times and does not record: cache.py's _demote_entry).
func refPhase(c *schema.Cell) bool { return c.Phase != schema.PhaseEvict.String() }

// TierFirstByte merges the times to first byte of tier's reads, over the
// cells that have them (schema.Cell.FirstByte: an object store's); the
// zero Latency when none has.
func TierFirstByte(cells []schema.Cell, tier schema.Tier) (schema.Latency, error) {
	t, read := tier.String(), schema.OpRead.String()
	l, err := cellLatency(cells, func(c *schema.Cell) bool { return c.Tier == t && c.Op == read },
		func(c *schema.Cell) *schema.Latency { return c.FirstByte })
	if err != nil {
		return schema.Latency{}, fmt.Errorf("results: %s read time to first byte: %w", t, err)
	}
	return l, nil
}

// The latencies of a cell that cellLatency merges most: from submission
// and from the scheduled time.
var (
	submitted = func(c *schema.Cell) *schema.Latency { return &c.Latency }
	scheduled = func(c *schema.Cell) *schema.Latency { return &c.FromSchedule }
)

// cellLatency merges the latency of (of) the cells match selects.
func cellLatency(cells []schema.Cell, match func(*schema.Cell) bool, of func(*schema.Cell) *schema.Latency) (schema.Latency, error) {
	var ls []schema.Latency
	for i := range cells {
		c := &cells[i]
		if !match(c) {
			continue
		}
		if l := of(c); l != nil {
			ls = append(ls, *l)
		}
	}
	return hist.MergeLatencies(ls...)
}

// DecodeBytesRead is the bytes the Decode phase read from Tier-2: the
// logical bytes of the Tier-2 Read Decode cells, the summary's
// decode_bytes_read_gb.
func DecodeBytesRead(cells []schema.Cell) int64 {
	var n int64
	for _, c := range cells {
		if c.Tier == schema.TierNVMe.String() && c.Op == schema.OpRead.String() && c.Phase == schema.PhaseDecode.String() {
			n += c.LogicalBytes
		}
	}
	return n
}

// setDevice sets the summary's device latency (the reference's
// storage_{read,write}_device_*_ms) from the Tier-2 read and write device
// latencies rl and wl. A distribution without values leaves its figures
// zero (absent from the document).
func setDevice(s *schema.Summary, rl, wl schema.Latency) {
	if rl.Count > 0 {
		s.StorageReadDeviceP50MS, s.StorageReadDeviceP95MS, s.StorageReadDeviceP99MS = rl.P50US/1000, rl.P95US/1000, rl.P99US/1000
		s.StorageReadDeviceP999MS, s.StorageReadDeviceP9999MS = rl.P999US/1000, rl.P9999US/1000
	}
	if wl.Count > 0 {
		s.StorageWriteDeviceP50MS, s.StorageWriteDeviceP95MS, s.StorageWriteDeviceP99MS = wl.P50US/1000, wl.P95US/1000, wl.P99US/1000
		s.StorageWriteDeviceP999MS, s.StorageWriteDeviceP9999MS = wl.P999US/1000, wl.P9999US/1000
	}
}

// DeviceOf returns the device latency of a tier's operation among ds (a
// document's Device), of the phases the reference samples (refPhase: not
// Evict); false when ds has none. An entry of a document written before
// phases holds every phase: it counts only where the document's cells
// (cells) have no Evict phase of that tier and operation, so that it
// holds the reference's phases alone; else that figure is not known.
func DeviceOf(ds []schema.DeviceLatency, cells []schema.Cell, tier schema.Tier, op schema.Op) (schema.Latency, bool, error) {
	evict := schema.PhaseEvict.String()
	mixed := slices.ContainsFunc(cells, func(c schema.Cell) bool { return c.Tier == tier.String() && c.Op == op.String() && c.Phase == evict })
	return deviceOf(ds, tier, op, func(phase string) bool { return phase != evict && (phase != "" || !mixed) })
}

// DeviceEvictOf is DeviceOf of the Evict phase: the demotions' copies,
// which the reference's device latency leaves out.
func DeviceEvictOf(ds []schema.DeviceLatency, tier schema.Tier, op schema.Op) (schema.Latency, bool, error) {
	return deviceOf(ds, tier, op, func(phase string) bool { return phase == schema.PhaseEvict.String() })
}

// deviceOf merges, exactly, the entries of ds of tier, op and a phase
// that phases selects.
func deviceOf(ds []schema.DeviceLatency, tier schema.Tier, op schema.Op, phases func(string) bool) (schema.Latency, bool, error) {
	var ls []schema.Latency
	for _, d := range ds {
		if d.Tier == tier.String() && d.Op == op.String() && phases(d.Phase) {
			ls = append(ls, d.Latency)
		}
	}
	if len(ls) == 0 {
		return schema.Latency{}, false, nil
	}
	l, err := hist.MergeLatencies(ls...)
	if err != nil {
		return schema.Latency{}, false, fmt.Errorf("results: %s %s device latency: %w", tier, op, err)
	}
	return l, true, nil
}

// Device is a run's device latency per tier, operation and phase (see
// schema.DeviceLatency), mergeable: kvreplay Adds each operation's span,
// kvreport Merges the documents of ranks. Its zero value is empty, ready
// to use. Entries of documents written before phases are kept apart,
// under no phase.
type Device struct {
	l [schema.NumTiers][schema.NumOps][schema.NumPhases + 1]*Latency
}

// noPhase is where Device keeps an entry that names no phase.
const noPhase = schema.NumPhases

// Add records one operation's device span.
func (d *Device) Add(tier schema.Tier, op schema.Op, phase schema.Phase, span time.Duration) {
	if !tier.Valid() || int(op) >= schema.NumOps || !phase.Valid() {
		return
	}
	if d.l[tier][op][phase] == nil {
		d.l[tier][op][phase] = NewLatency()
	}
	d.l[tier][op][phase].Add(span)
}

// MergeAll adds the device latencies of documents (each one's Device),
// exactly; an entry naming an unknown tier, operation or phase is an
// error.
func (d *Device) MergeAll(docs ...[]schema.DeviceLatency) error {
	var by [schema.NumTiers][schema.NumOps][schema.NumPhases + 1][]schema.Latency
	for _, ds := range docs {
		for _, x := range ds {
			t, err := schema.ParseTier(x.Tier)
			if err != nil {
				return fmt.Errorf("results: device latency: %w", err)
			}
			o, err := schema.ParseOp(x.Op)
			if err != nil {
				return fmt.Errorf("results: device latency: %w", err)
			}
			p := schema.Phase(noPhase)
			if x.Phase != "" {
				if p, err = schema.ParsePhase(x.Phase); err != nil {
					return fmt.Errorf("results: device latency: %w", err)
				}
			}
			by[t][o][p] = append(by[t][o][p], x.Latency)
		}
	}
	for t := range by {
		for o := range by[t] {
			for p, ls := range by[t][o] {
				if len(ls) == 0 {
					continue
				}
				if d.l[t][o][p] == nil {
					d.l[t][o][p] = NewLatency()
				}
				if err := d.l[t][o][p].MergeAll(ls); err != nil {
					return fmt.Errorf("results: device latency of %s %s: %w", schema.Tier(t), schema.Op(o), err)
				}
			}
		}
	}
	return nil
}

// Finalize renders the tiers, operations and phases that have values, in
// that order; nil for none.
func (d *Device) Finalize() []schema.DeviceLatency {
	var out []schema.DeviceLatency
	for t := range d.l {
		for o := range d.l[t] {
			for p, l := range d.l[t][o] {
				if l == nil || l.Count() == 0 {
					continue
				}
				x := schema.DeviceLatency{Tier: schema.Tier(t).String(), Op: schema.Op(o).String(), Latency: l.Finalize()}
				if p != noPhase {
					x.Phase = schema.Phase(p).String()
				}
				out = append(out, x)
			}
		}
	}
	return out
}

// Completed is the requests of r that completed: those Requests counts
// but the cut ones it counts as misses (Replay.RequestsCutLate).
func Completed(r *schema.Result) int64 { return r.Requests.Count - r.Replay.RequestsCutLate }
