package results

import (
	"fmt"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// The reference's storage_health latency profile (reference section 5): a
// criterion passes when the P95 is strictly below its limit.
const (
	StorageWriteP95Limit = 500 * time.Millisecond // Tier-2 writes, all phases
	StorageReadP95Limit  = 200 * time.Millisecond // Tier-2 reads, all phases
	CPUP95Limit          = 150 * time.Millisecond // Tier-1 reads and writes
)

// Summarize computes the reference-named summary block of a result whose
// Cells, Tiers, Requests, Errors and WallS are final (reference section
// 5); it is what kvreplay writes and what kvreport recomputes after a
// merge. storageTokens is the total of KV tokens moved through Tier-2 in
// the run (StorageTokens; for a merge, the sum of the documents'); the
// summary's rate divides it by WallS. Bandwidths and byte counts are in
// GiB, the reference's "GB"; tier bandwidths come from r.Tiers; the
// storage read and write P95 merge the Tier-2 Read and Write cells of all
// phases, the CPU P95 the Tier-1 cells other than Delete, and decode bytes
// are the Tier-2 Read Decode cells' logical bytes; storage_io_latency_ms
// is the request latency. storage_health is EvaluateHealth's, with a
// criterion for each of Tier-2 writes, Tier-2 reads and Tier-1 that has a
// cell. It fails only on a damaged cell histogram.
func Summarize(r *schema.Result, storageTokens float64) (schema.Summary, error) {
	s := schema.Summary{ElapsedTime: r.WallS, TotalRequests: r.Requests.Count}
	if r.WallS > 0 {
		s.RequestsPerSecond = float64(r.Requests.Count) / r.WallS
		s.StorageThroughputTokensPerSec = storageTokens / r.WallS
	}
	for _, t := range r.Tiers {
		rd, wr := t.ReadBandwidthBps/GiB, t.WriteBandwidthBps/GiB
		switch t.Tier {
		case schema.TierGPU.String():
			s.TierGPUReadBandwidthGBps, s.TierGPUWriteBandwidthGBps = rd, wr
		case schema.TierCPU.String():
			s.TierCPUReadBandwidthGBps, s.TierCPUWriteBandwidthGBps = rd, wr
		case schema.TierNVMe.String():
			s.TierStorageReadBandwidthGBps, s.TierStorageWriteBandwidthGBps = rd, wr
			s.TierStorageKVBytesReadGB = float64(t.ReadBytes) / GiB
			s.TierStorageKVBytesWrittenGB = float64(t.WriteBytes) / GiB
		}
	}
	nvme, cpu := schema.TierNVMe.String(), schema.TierCPU.String()
	read, write, del := schema.OpRead.String(), schema.OpWrite.String(), schema.OpDelete.String()
	for _, c := range r.Cells {
		if c.Tier == nvme && c.Op == read && c.Phase == schema.PhaseDecode.String() {
			s.DecodeBytesReadGB += float64(c.LogicalBytes) / GiB
		}
	}
	rl, reads, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == nvme && c.Op == read }, false)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-2 read latency: %w", err)
	}
	wl, writes, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == nvme && c.Op == write }, false)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-2 write latency: %w", err)
	}
	cl, _, err := cellLatency(r.Cells, func(c *schema.Cell) bool { return c.Tier == cpu && c.Op != del }, false)
	if err != nil {
		return s, fmt.Errorf("results: summary: Tier-1 latency: %w", err)
	}
	s.StorageReadP95MS, s.StorageWriteP95MS, s.CPUP95MS = rl.P95US/1000, wl.P95US/1000, cl.P95US/1000
	q := r.Requests.Latency
	s.StorageIOLatencyMS = schema.Percentiles{Mean: q.MeanUS / 1000, P50: q.P50US / 1000, P95: q.P95US / 1000,
		P99: q.P99US / 1000, P999: q.P999US / 1000, P9999: q.P9999US / 1000}
	s.StorageHealth = EvaluateHealth(&s, writes > 0, reads > 0, cl.Count > 0, r.Errors.Count)
	return s, nil
}

// EvaluateHealth is the reference's storage_health with its latency
// profile (reference section 5): Tier-2 write P95 below
// StorageWriteP95Limit when there were Tier-2 writes, Tier-2 read P95
// below StorageReadP95Limit when there were reads, CPU RAM P95 below
// CPUP95Limit when Tier-1 was used, each a criterion; a run with failed
// operations fails whatever its criteria. Summarize calls it.
func EvaluateHealth(s *schema.Summary, storageWrites, storageReads, cpu bool, errors int64) schema.StorageHealth {
	h := schema.StorageHealth{OverallStatus: "PASS"}
	add := func(what string, limit time.Duration, actual float64) {
		ms := limit.Milliseconds()
		ok := actual < float64(ms)
		h.Criteria = append(h.Criteria, schema.Criterion{Name: fmt.Sprintf("%s P95 < %dms", what, ms),
			Target: float64(ms), Actual: actual, Unit: "ms", Passed: ok})
		h.TotalCount++
		if ok {
			h.PassedCount++
		} else {
			h.OverallStatus = "FAIL"
		}
	}
	if storageWrites {
		add("Storage Tier Write Total", StorageWriteP95Limit, s.StorageWriteP95MS)
	}
	if storageReads {
		add("Storage Tier Read Total", StorageReadP95Limit, s.StorageReadP95MS)
	}
	if cpu {
		add("CPU RAM", CPUP95Limit, s.CPUP95MS)
	}
	if errors > 0 {
		h.OverallStatus = "FAIL"
	}
	return h
}

// StorageTokens returns the KV tokens that cells moved through Tier-2
// (Read and Write cells of every phase): their logical bytes over the size
// scale, over the bytes per token of one tensor-parallel rank
// (bytesPerToken / tensorParallel in whole bytes; a tensorParallel below 1
// counts as 1). It is 0 when the trace gives no bytes per token or the
// scale is not positive. Summarize takes it as its storageTokens.
func StorageTokens(cells []schema.Cell, sizeScale float64, bytesPerToken int64, tensorParallel int) float64 {
	perRank := bytesPerToken / int64(max(1, tensorParallel))
	if perRank <= 0 || sizeScale <= 0 {
		return 0
	}
	var tokens float64
	for _, c := range cells {
		if c.Tier == schema.TierNVMe.String() && (c.Op == schema.OpRead.String() || c.Op == schema.OpWrite.String()) {
			tokens += float64(c.LogicalBytes) / sizeScale / float64(perRank)
		}
	}
	return tokens
}

// TierOpLatency merges, exactly, the latencies of the cells of one tier
// and operation over all phases: from submission, or from the scheduled
// time when fromSchedule is set. It is the distribution behind the
// summary's storage read and write P95 and kvreport's Tier-2 latency
// metrics. It fails only on a damaged histogram.
func TierOpLatency(cells []schema.Cell, tier schema.Tier, op schema.Op, fromSchedule bool) (schema.Latency, error) {
	t, o := tier.String(), op.String()
	l, _, err := cellLatency(cells, func(c *schema.Cell) bool { return c.Tier == t && c.Op == o }, fromSchedule)
	if err != nil {
		return schema.Latency{}, fmt.Errorf("results: %s %s latency: %w", t, o, err)
	}
	return l, nil
}

// cellLatency merges the latencies of the cells match selects and counts
// those cells.
func cellLatency(cells []schema.Cell, match func(*schema.Cell) bool, fromSchedule bool) (schema.Latency, int, error) {
	var ls []schema.Latency
	for i := range cells {
		c := &cells[i]
		if !match(c) {
			continue
		}
		if fromSchedule {
			ls = append(ls, c.FromSchedule)
		} else {
			ls = append(ls, c.Latency)
		}
	}
	l, err := hist.MergeLatencies(ls...)
	return l, len(ls), err
}
