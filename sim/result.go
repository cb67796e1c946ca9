package sim

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Result is the simulation's statistics, written by kvtrace --output. Its
// keys are the reference's (kv-cache.py --output, reference section 5)
// where they mean the same; the "kvbench" block holds what the reference
// does not report. Times are virtual: the latencies are queueing and
// generation time, since a trace's I/O takes no time until it is replayed.
type Result struct {
	RequestsCompleted      int64   `json:"requests_completed"`
	TotalTokensGenerated   int64   `json:"total_tokens_generated"`
	TotalStorageIOLatency  float64 `json:"total_storage_io_latency"`
	TotalGenerationLatency float64 `json:"total_generation_latency"`
	// The reference's per-request latency arrays, in seconds, in the order
	// requests complete: end-to-end, storage (0 in virtual time: a
	// replay measures it), generation, and the storage time of the
	// prefill (requests that wrote their context) and of the decode
	// (requests that read it), 0 too.
	EndToEndLatencies   []float64 `json:"end_to_end_latencies"`
	StorageLatencies    []float64 `json:"storage_latencies"`
	GenerationLatencies []float64 `json:"generation_latencies"`
	PrefillLatencies    []float64 `json:"prefill_latencies"`
	DecodeLatencies     []float64 `json:"decode_latencies"`
	// ThroughputTimeline is filled only by the reference's autoscaler's
	// monitor (--enable-autoscaling): a sample every 10 s.
	ThroughputTimeline   []ThroughputSample `json:"throughput_timeline"`
	MultiTurnCacheHits   int64              `json:"multi_turn_cache_hits"`
	MultiTurnCacheMisses int64              `json:"multi_turn_cache_misses"`
	Seed                 int64              `json:"seed"`
	Summary              Summary            `json:"summary"`
	Kvbench              Extra              `json:"kvbench"`
}

// Summary is the reference's summary block.
type Summary struct {
	TotalRequests       int64                `json:"total_requests"`
	TotalTokens         int64                `json:"total_tokens"`
	ElapsedTime         float64              `json:"elapsed_time"`
	AvgThroughput       float64              `json:"avg_throughput_tokens_per_sec"`
	TotalStorageIOTime  float64              `json:"total_storage_io_time"`
	StorageThroughput   float64              `json:"storage_throughput_tokens_per_sec"`
	RequestsPerSecond   float64              `json:"requests_per_second"`
	EndToEndLatencyMS   Percentiles          `json:"end_to_end_latency_ms"`
	StorageIOLatencyMS  Percentiles          `json:"storage_io_latency_ms"`
	GenerationLatencyMS Percentiles          `json:"generation_latency_ms"`
	CacheStats          CacheStats           `json:"cache_stats"`
	QoSMetrics          map[string]QoSMetric `json:"qos_metrics"`
	PrefixCacheStats    *PrefixStats         `json:"prefix_cache_stats"`
	// AutoscalingStats and AutoscalingSummary are the reference's
	// autoscaler's events and summary, [] and null without
	// --enable-autoscaling. Its scalings change no load, as the
	// reference's do not (reference section 3.10); its capacity mode's
	// stop ends the run.
	AutoscalingStats   []AutoscalingEvent  `json:"autoscaling_stats"`
	AutoscalingSummary *AutoscalingSummary `json:"autoscaling_summary"`
	MultiTurnStats     MultiTurnStats      `json:"multi_turn_stats"`
}

// Percentiles of a latency distribution in milliseconds, the reference's
// {mean, p50, p95, p99, p999, p9999}: one shape with the replay's
// (schema.Percentiles), so that the two documents cannot drift. kvtrace
// computes them with numpy's linear interpolation, as the reference does.
type Percentiles = schema.Percentiles

// CacheStats is the reference's cache_stats block. Its storage_* keys
// are Tier-2's (NVMe, the reference's storage tier) alone, and the
// object_* keys Tier-3's: storage_tokens_processed (StorageTokensProcessed)
// is the tokens that Tier-2's writes, the demotions into it and its reads
// moved, each counted as the reference counts it (mlcommons/storage #402),
// and object_tokens_processed the same for Tier-3. kvreplay's
// kv_tokens_moved_per_s counts Tier-2's bytes alone too.
type CacheStats struct {
	CacheHitRate         float64       `json:"cache_hit_rate"`
	CacheHits            int64         `json:"cache_hits"`
	CacheMisses          int64         `json:"cache_misses"`
	GPUEntries           int           `json:"gpu_entries"`
	CPUEntries           int           `json:"cpu_entries"`
	StorageEntries       int           `json:"storage_entries"`
	GPUMemoryUsedGB      float64       `json:"gpu_memory_used_gb"`
	CPUMemoryUsedGB      float64       `json:"cpu_memory_used_gb"`
	OffloadsCPU          int64         `json:"offloads_cpu"`
	OffloadsStorage      int64         `json:"offloads_storage"`
	StorageHealth        StorageHealth `json:"storage_health"`
	PrefillWrites        int64         `json:"prefill_writes"`
	DecodeReads          int64         `json:"decode_reads"`
	GPUWrittenGB         float64       `json:"tier_gpu_kv_bytes_written_gb"`
	CPUWrittenGB         float64       `json:"tier_cpu_kv_bytes_written_gb"`
	StorageWrittenGB     float64       `json:"tier_storage_kv_bytes_written_gb"`
	GPUReadGB            float64       `json:"tier_gpu_kv_bytes_read_gb"`
	CPUReadGB            float64       `json:"tier_cpu_kv_bytes_read_gb"`
	StorageReadGB        float64       `json:"tier_storage_kv_bytes_read_gb"`
	GPUReadBandwidth     float64       `json:"tier_gpu_read_bandwidth_gbps"`
	GPUWriteBandwidth    float64       `json:"tier_gpu_write_bandwidth_gbps"`
	CPUReadBandwidth     float64       `json:"tier_cpu_read_bandwidth_gbps"`
	CPUWriteBandwidth    float64       `json:"tier_cpu_write_bandwidth_gbps"`
	StorageReadBandwidth float64       `json:"tier_storage_read_bandwidth_gbps"`
	// The object tier's (kvtrace --object-tier, Tier-3; kvbench's, not
	// the reference's): absent without it. object_tokens_processed is
	// storage_tokens_processed's count for Tier-3.
	ObjectEntries          int     `json:"object_entries,omitempty"`
	OffloadsObject         int64   `json:"offloads_object,omitempty"`
	ObjectWrittenGB        float64 `json:"tier_object_kv_bytes_written_gb,omitempty"`
	ObjectReadGB           float64 `json:"tier_object_kv_bytes_read_gb,omitempty"`
	ObjectTokensProcessed  float64 `json:"object_tokens_processed,omitempty"`
	StorageWriteBandwidth  float64 `json:"tier_storage_write_bandwidth_gbps"`
	SystemPromptHits       int64   `json:"system_prompt_hits"`
	CommonPhraseHits       int64   `json:"common_phrase_hits"`
	UserCacheHits          int64   `json:"user_cache_hits"`
	MultiTurnHits          int64   `json:"multi_turn_hits"`
	TotalReadBytes         int64   `json:"total_read_bytes"`
	TotalWriteBytes        int64   `json:"total_write_bytes"`
	TotalReadGB            float64 `json:"total_read_gb"`
	TotalWriteGB           float64 `json:"total_write_gb"`
	ReadWriteRatio         float64 `json:"read_write_ratio"`
	ReadIOPS               int64   `json:"read_iops"`
	WriteIOPS              int64   `json:"write_iops"`
	StorageTokensProcessed float64 `json:"storage_tokens_processed"`
	// TierLatencyMS are the reference's per-tier latency percentiles,
	// {gpu,cpu,storage}_{read,write}_{p50,p95,p99,p999,p9999}_ms and
	// storage_{read,write}_{device,host}_..., present (as in the
	// reference) only for the tiers and operations that ran: all 0, since
	// a trace's I/O takes no time until it is replayed. MarshalJSON puts
	// them among the other keys.
	TierLatencyMS map[string]float64 `json:"-"`
}

// MarshalJSON writes c with TierLatencyMS's keys among its own, as the
// reference's cache_stats has them.
func (c CacheStats) MarshalJSON() ([]byte, error) {
	type plain CacheStats
	b, err := json.Marshal(plain(c))
	if err != nil || len(c.TierLatencyMS) == 0 {
		return b, err
	}
	extra, err := json.Marshal(c.TierLatencyMS)
	if err != nil {
		return nil, err
	}
	// Both are objects: join their members.
	return append(append(b[:len(b)-1], ','), extra[1:]...), nil
}

// StorageHealth is the reference's storage_health block, judged by the
// rule every tool uses for a simulation (results.Simulated): a trace has
// no latencies, so what its criteria pass earns no PASS (NO_DATA, the
// reason says why; kv-cache.py's trace mode says PASS); a failed
// criterion (the cache hit rate) is a FAIL. The latency criteria are
// kvreplay's to measure, and Note says so.
type StorageHealth struct {
	schema.StorageHealth
	Note string `json:"note"`
}

// Criterion is one storage_health check.
type Criterion = schema.Criterion

// QoSMetric is one QoS level's requests and SLA compliance; NoData is set
// when the level completed no request.
type QoSMetric struct {
	NoData        bool        `json:"no_data,omitempty"`
	TotalRequests int64       `json:"total_requests,omitempty"`
	LatencyMS     *QoSLatency `json:"latency_ms,omitempty"`
	SLA           *SLA        `json:"sla,omitempty"`
}

// QoSLatency is a QoS level's end-to-end latency in milliseconds.
type QoSLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// SLA is a QoS level's compliance with its p95 target: the share of
// requests within the target, met when at least 95 %.
type SLA struct {
	TargetP95MS float64 `json:"target_p95_ms"`
	ActualP95MS float64 `json:"actual_p95_ms"`
	Compliance  float64 `json:"compliance"`
	Met         bool    `json:"met"`
}

// PrefixStats is the reference's prefix_cache_stats block. Disabled marks
// a run without prefix caching (--disable-prefix-caching), whose block is
// {}, as the reference writes it.
type PrefixStats struct {
	PrefixHits        int64 `json:"prefix_hits"`
	PrefixMisses      int64 `json:"prefix_misses"`
	SystemPromptReuse int64 `json:"system_prompt_reuse"`
	CommonPhraseReuse int64 `json:"common_phrase_reuse"`
	BytesSaved        int64 `json:"bytes_saved"`
	Disabled          bool  `json:"-"`
}

// MarshalJSON writes p, or {} when prefix caching was disabled.
func (p PrefixStats) MarshalJSON() ([]byte, error) {
	if p.Disabled {
		return []byte("{}"), nil
	}
	type plain PrefixStats
	return json.Marshal(plain(p))
}

// MultiTurnStats is the reference's multi_turn_stats block.
type MultiTurnStats struct {
	CacheHits   int64   `json:"cache_hits"`
	CacheMisses int64   `json:"cache_misses"`
	HitRate     float64 `json:"hit_rate"`
}

// Extra is what kvbench reports beyond the reference.
type Extra struct {
	Model             string           `json:"model"`
	BytesPerToken     int64            `json:"bytes_per_token"`
	Rows              int64            `json:"rows"`
	Objects           int64            `json:"objects"`
	RequestsGenerated uint64           `json:"requests_generated"`
	RequestsQueued    int              `json:"requests_queued_at_end"`
	MeasuredFromS     float64          `json:"measured_from_s"`
	EndS              float64          `json:"end_s"`
	TierCapacityBytes map[string]int64 `json:"tier_capacity_bytes"`
	PeakLiveBytes     map[string]int64 `json:"peak_live_bytes"`
	// PeakLiveBytesNoDeletes is PeakLiveBytes of the trace without its
	// Delete rows (the mlperf dialect's), where a deleted object stays live
	// until its key is written again: the sidecar's peaks of such a trace;
	// nil unless Config.NoDeletesPeak asked for them.
	PeakLiveBytesNoDeletes map[string]int64 `json:"-"`
	TierBytesWritten       map[string]int64 `json:"tier_bytes_written"`
	TierBytesRead          map[string]int64 `json:"tier_bytes_read"`
	Deletes                int64            `json:"deletes"`
	ForcedWrites           int64            `json:"forced_nvme_writes"`
	Evictions              int64            `json:"evictions"`
	RequestsByQoS          map[string]int64 `json:"requests_by_qos"`
	RAGRetrievals          int64            `json:"rag_retrievals,omitempty"`
	RAGChunksRead          int64            `json:"rag_chunks_retrieved,omitempty"`
	BlockHits              int64            `json:"block_hits,omitempty"`
	BlockMisses            int64            `json:"block_misses,omitempty"`
	// ConversationsForgotten counts conversation states the bounded
	// registry (conversation.max_conversations) dropped.
	ConversationsForgotten int64 `json:"conversations_forgotten,omitempty"`
	// RacedReservations counts the demotions whose NVMe reservation the
	// reference's race doubled (Config.NVMeAccounting);
	// RacedCPUReservations those whose CPU reservation it doubled (a
	// demotion from the GPU tier). Both count the setup's races too
	// (preconditioning, decode-only pre-population), which the reset of
	// the statistics after it keeps.
	RacedReservations    int64    `json:"raced_nvme_reservations,omitempty"`
	RacedCPUReservations int64    `json:"raced_cpu_reservations,omitempty"`
	NoEffect             []string `json:"no_effect,omitempty"`
	Notes                []string `json:"notes,omitempty"`
	// PrefillOnlyByRule counts the requests that kv-cache.py's rule made
	// prefill-only, without decode reads, for contexts of 10,000 tokens
	// or more; RequestsDispatched the requests workers took.
	PrefillOnlyByRule  int64 `json:"prefill_only_by_rule"`
	RequestsDispatched int64 `json:"requests_dispatched"`
	// RequestsInFlight counts the requests still generating when the run
	// ended: their rows are in the trace, but they are not completed
	// (the reference counts them completed).
	RequestsInFlight int64 `json:"requests_in_flight_at_end"`
	// SLO is the share of completed requests within --slo-ms, overall and
	// by QoS class; nil without --slo-ms.
	SLO *SLOAttainment `json:"slo,omitempty"`
	// Warnings are the notes a user must see: a tool prints them on
	// stderr. Each is in Notes too.
	Warnings []string `json:"warnings,omitempty"`
	// Departures say where the run met one of kvtrace's deliberate
	// departures from kv-cache.py (the package documentation lists
	// them), each once, beginning with DeparturePrefix; a tool prints
	// them on stderr. Each is in Notes too.
	Departures []string `json:"departures,omitempty"`
}

// percentile is numpy's default (linear) percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	pos := p / 100 * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// percentilesMS sorts v in place and returns its statistics in
// milliseconds.
func percentilesMS(v []float64) Percentiles {
	if len(v) == 0 {
		return Percentiles{}
	}
	s := v
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Percentiles{
		Mean: sum / float64(len(s)) * 1000, P50: percentile(s, 50) * 1000, P95: percentile(s, 95) * 1000,
		P99: percentile(s, 99) * 1000, P999: percentile(s, 99.9) * 1000, P9999: percentile(s, 99.99) * 1000,
	}
}

const gib = float64(GiB)

func (e *engine) result() *Result {
	cfg, st := e.cfg, &e.stats
	e2e, generation, qos := st.e2e.slice(), st.generation.slice(), st.qos.slice()
	var byQoS [numQoSLevels][]float64
	for i, q := range qos {
		byQoS[q] = append(byQoS[q], e2e[i])
	}
	// The arrays in completion order: copied before e2e is sorted.
	e2eArray, genArray := slices.Clone(e2e), slices.Clone(generation)
	var slo *SLOAttainment
	if cfg.SLO.Set() {
		slo = sloAttainment(cfg.SLO, cfg.QoS, e2e, qos) // before e2e is sorted
	}
	// The run's time, the reference's elapsed_time (the wall time of its
	// stop_event.wait(timeout=duration)): the whole --duration, however
	// early its last row came, unless the run stopped before it
	// (--max-requests, the last replay cycle, the autoscaler's stop).
	// drain has emptied the events by now: the time of the last one is
	// not the run's length (a request trace whose next arrival lies
	// beyond --duration made a 60 s run's elapsed_time 2 s, and every
	// rate 30 times too high).
	elapsed := cfg.Duration.Seconds()
	if e.stopped {
		elapsed = (e.now - e.start).Seconds()
	}
	if elapsed <= 0 {
		elapsed = cfg.Duration.Seconds()
	}
	zeros := make([]float64, max(int64(len(e2e)), st.prefillDone, st.decodeDone)) // the storage times, shared
	r := &Result{
		EndToEndLatencies:      e2eArray,
		StorageLatencies:       zeros[:len(e2e)],
		GenerationLatencies:    genArray,
		PrefillLatencies:       zeros[:st.prefillDone],
		DecodeLatencies:        zeros[:st.decodeDone],
		ThroughputTimeline:     []ThroughputSample{},
		RequestsCompleted:      st.completed,
		TotalTokensGenerated:   st.tokens,
		TotalGenerationLatency: sum(generation),
		MultiTurnCacheHits:     st.multiTurnHits,
		MultiTurnCacheMisses:   st.multiTurnMisses,
		Seed:                   cfg.Seed,
	}
	s := &r.Summary
	s.TotalRequests = st.completed
	s.TotalTokens = st.tokens
	s.ElapsedTime = elapsed
	s.AvgThroughput = float64(st.tokens) / elapsed
	s.RequestsPerSecond = float64(st.completed) / elapsed
	s.EndToEndLatencyMS = percentilesMS(e2e) // sorts e2e: byQoS holds its own copies
	s.StorageIOLatencyMS = Percentiles{}     // no storage time in virtual time: every request's is 0
	s.GenerationLatencyMS = percentilesMS(generation)

	e.cacheStats(&s.CacheStats, elapsed)
	s.QoSMetrics = e.qosMetrics(&byQoS)
	s.PrefixCacheStats = &PrefixStats{Disabled: true}
	if !cfg.DisablePrefixCaching {
		s.PrefixCacheStats = &PrefixStats{PrefixHits: st.prefixHits, PrefixMisses: st.prefixMisses,
			SystemPromptReuse: st.systemPrompt, BytesSaved: st.bytesSaved}
	}
	s.AutoscalingStats = []AutoscalingEvent{}
	if e.scaler != nil {
		r.ThroughputTimeline = append(r.ThroughputTimeline, e.scaler.timeline...)
		s.AutoscalingStats = append(s.AutoscalingStats, e.scaler.events...)
		s.AutoscalingSummary = e.scaler.summary()
	}
	s.MultiTurnStats = MultiTurnStats{CacheHits: st.multiTurnHits, CacheMisses: st.multiTurnMisses}
	if n := st.multiTurnHits + st.multiTurnMisses; n > 0 {
		s.MultiTurnStats.HitRate = float64(st.multiTurnHits) / float64(n)
	}

	e.kvbenchStats(&r.Kvbench, &byQoS, slo)
	return r
}

// cacheStats fills the reference's cache_stats: hits, entries and bytes by
// tier, the rates over elapsed seconds, its latency keys (0 in virtual
// time) and storage_health. The latency keys are those of the tiers and
// operations the reference has latency samples of: new objects' writes and
// hits' reads in the measured run, not demotions, nor what preconditioning
// or pre-population wrote before it.
func (e *engine) cacheStats(c *CacheStats, elapsed float64) {
	cs := &e.cache.stats
	c.CacheHits, c.CacheMisses = cs.hits, cs.misses
	if n := cs.hits + cs.misses; n > 0 {
		c.CacheHitRate = float64(cs.hits) / float64(n)
	}
	c.GPUEntries = e.cache.entries(schema.TierGPU)
	c.CPUEntries = e.cache.entries(schema.TierCPU)
	c.StorageEntries = e.cache.entries(schema.TierNVMe)
	c.GPUMemoryUsedGB = float64(e.cache.tiers[schema.TierGPU].usage) / gib
	c.CPUMemoryUsedGB = float64(e.cache.tiers[schema.TierCPU].usage) / gib
	c.OffloadsCPU, c.OffloadsStorage = cs.offloadsCPU, cs.offloadsStorage
	c.PrefillWrites, c.DecodeReads = cs.prefillWrites, cs.decodeReads
	w, rd := cs.tierWritten, cs.tierRead
	c.GPUWrittenGB, c.CPUWrittenGB, c.StorageWrittenGB = float64(w[0])/gib, float64(w[1])/gib, float64(w[2])/gib
	c.GPUReadGB, c.CPUReadGB, c.StorageReadGB = float64(rd[0])/gib, float64(rd[1])/gib, float64(rd[2])/gib
	c.GPUReadBandwidth, c.GPUWriteBandwidth = c.GPUReadGB/elapsed, c.GPUWrittenGB/elapsed
	c.CPUReadBandwidth, c.CPUWriteBandwidth = c.CPUReadGB/elapsed, c.CPUWrittenGB/elapsed
	c.StorageReadBandwidth, c.StorageWriteBandwidth = c.StorageReadGB/elapsed, c.StorageWrittenGB/elapsed
	if e.cfg.ObjectTier {
		c.ObjectEntries, c.OffloadsObject = e.cache.entries(schema.TierObject), cs.offloadsObject
		c.ObjectWrittenGB, c.ObjectReadGB = float64(w[schema.TierObject])/gib, float64(rd[schema.TierObject])/gib
		c.ObjectTokensProcessed = cs.tierTokens[schema.TierObject]
	}
	c.SystemPromptHits, c.CommonPhraseHits = cs.systemPromptHits, cs.commonHits
	c.UserCacheHits, c.MultiTurnHits = cs.userHits, cs.multiTurnHits
	c.TotalReadBytes, c.TotalWriteBytes = cs.readBytes, cs.writeBytes
	c.TotalReadGB, c.TotalWriteGB = float64(cs.readBytes)/gib, float64(cs.writeBytes)/gib
	c.ReadWriteRatio = float64(cs.readBytes) / float64(max(cs.writeBytes, 1))
	c.ReadIOPS, c.WriteIOPS = cs.readOps, cs.writeOps
	c.StorageTokensProcessed = cs.tierTokens[schema.TierNVMe]
	c.TierLatencyMS = map[string]float64{}
	for t, name := range [...]string{"gpu", "cpu", "storage"} {
		for op, opName := range map[schema.Op]string{schema.OpRead: "read", schema.OpWrite: "write"} {
			if cs.samples[t][op] == 0 {
				continue
			}
			kinds := []string{""}
			if name == "storage" {
				kinds = append(kinds, "_device", "_host")
			}
			for _, k := range kinds {
				for _, p := range [...]string{"p50", "p95", "p99", "p999", "p9999"} {
					c.TierLatencyMS[name+"_"+opName+k+"_"+p+"_ms"] = 0
				}
			}
		}
	}
	const note = "simulated by kvtrace, not measured: a trace's I/O takes no time, so its latency criteria hold 0 (as the reference's trace mode does); kvreplay measures them"
	c.StorageHealth = StorageHealth{StorageHealth: results.Simulated(e.healthCriteria(c), "no verdict: "+note), Note: note}

}

// qosMetrics is each QoS class's requests, end-to-end latency and SLA, by
// the class's name, from its latencies in byQoS (sorted here, in place).
func (e *engine) qosMetrics(byQoS *[numQoSLevels][]float64) map[string]QoSMetric {
	cfg := e.cfg
	out := map[string]QoSMetric{}
	for lvl := range numQoSLevels {
		name := cfg.QoS[lvl].Name
		lat := byQoS[lvl]
		if len(lat) == 0 {
			out[name] = QoSMetric{NoData: true}
			continue
		}
		sorted := lat // the run is over: sorted in place
		slices.Sort(sorted)
		target := cfg.QoS[lvl].TargetP95.Seconds()
		violations := 0
		for _, x := range sorted {
			if x > target {
				violations++
			}
		}
		// The reference's figure (1 - violations/total); whether it meets
		// the SLA is results' rule, kvreplay's too.
		compliance := 1 - float64(violations)/float64(len(sorted))
		_, met := results.Compliance(int64(len(sorted)-violations), int64(len(sorted)))
		out[name] = QoSMetric{
			TotalRequests: int64(len(sorted)),
			LatencyMS: &QoSLatency{Mean: sum(sorted) / float64(len(sorted)) * 1000, P50: percentile(sorted, 50) * 1000,
				P95: percentile(sorted, 95) * 1000, P99: percentile(sorted, 99) * 1000, Max: sorted[len(sorted)-1] * 1000},
			SLA: &SLA{TargetP95MS: target * 1000, ActualP95MS: percentile(sorted, 95) * 1000, Compliance: compliance, Met: met},
		}
	}
	return out
}

// kvbenchStats fills the "kvbench" block: what the reference does not
// report (rows, objects, capacities, peaks and bytes by tier, requests by
// QoS class, RAG, blocks, the SLO's attainment), and the run's notes and
// warnings.
func (e *engine) kvbenchStats(x *Extra, byQoS *[numQoSLevels][]float64, slo *SLOAttainment) {
	cfg, st, cs := e.cfg, &e.stats, &e.cache.stats
	x.Model, x.BytesPerToken = e.model.Key, e.bpt
	x.Rows = e.rows
	x.Objects = e.cache.live + cs.deletes
	x.RequestsGenerated = e.reqCounter
	x.RequestsQueued = e.queue.Len()
	x.MeasuredFromS = e.start.Seconds()
	x.EndS = e.now.Seconds()
	x.TierCapacityBytes = map[string]int64{}
	x.PeakLiveBytes = map[string]int64{}
	if e.cfg.NoDeletesPeak {
		x.PeakLiveBytesNoDeletes = map[string]int64{}
	}
	x.TierBytesWritten = map[string]int64{}
	x.TierBytesRead = map[string]int64{}
	// The trace's tiers: Tier-3 only with --object-tier (it is not a tier
	// of capacity 0 without it).
	for t := range e.cache.last + 1 {
		ts := &e.cache.tiers[t]
		capacity := int64(-1) // unlimited
		if !math.IsInf(ts.limit, 1) {
			capacity = int64(ts.limit)
		}
		x.TierCapacityBytes[t.String()] = capacity
		x.PeakLiveBytes[t.String()] = ts.peak
		if x.PeakLiveBytesNoDeletes != nil {
			x.PeakLiveBytesNoDeletes[t.String()] = ts.dialectPeak
		}
		x.TierBytesWritten[t.String()] = e.tierOps[t][schema.OpWrite]
		x.TierBytesRead[t.String()] = e.tierOps[t][schema.OpRead]
	}
	x.Deletes, x.ForcedWrites, x.Evictions = cs.deletes, cs.forcedWrites, cs.evictions
	x.RequestsByQoS = map[string]int64{}
	for lvl := range numQoSLevels {
		x.RequestsByQoS[cfg.QoS[lvl].Name] = int64(len(byQoS[lvl]))
	}
	x.RAGRetrievals, x.RAGChunksRead = st.ragRetrievals, st.ragChunks
	x.BlockHits, x.BlockMisses = st.blockHits, st.blockMisses
	e.noteBlocks()
	x.ConversationsForgotten = e.convs.forgotten
	x.RacedReservations, x.RacedCPUReservations = cs.racedReservations, cs.racedCPUReservations
	x.NoEffect = cfg.NoEffect
	x.SLO = slo
	x.PrefillOnlyByRule, x.RequestsDispatched, x.RequestsInFlight = st.prefillOnlyRule, st.dispatched, st.inFlight
	if e.gen != nil && st.prefillOnlyRule > 0 && !cfg.PrefillOnly && !cfg.DecodeOnly {
		// Synthetic users are drawn to the rule; a trace's requests are
		// not, and it can take the decode I/O of half of them.
		e.warn(fmt.Sprintf("%d of %d requests (%.1f %%) have contexts of %d tokens or more: kv-cache.py's rule makes them prefill-only, without decode reads",
			st.prefillOnlyRule, st.dispatched, 100*float64(st.prefillOnlyRule)/float64(st.dispatched), prefillOnlyTokens))
	}
	if g, ok := e.gen.(*traceGen); ok {
		g.endRun()
		e.warnBacklog(x)
	}
	if n := st.convRestarts; n > 0 {
		// The users from which it happens are measured for the
		// reference's bound alone.
		from := ""
		if cfg.ConversationStates == DefaultConfig().ConversationStates {
			from = " (as it does from about 600 users)"
		}
		e.depart("conversation", fmt.Sprintf("%d times a user's conversation went on after the registry of %d conversation states "+
			"(conversation.max_conversations) forgot it%s: kv-cache.py's add_turn raises "+
			"there and that user's thread dies, sending no more requests; here the user starts a new conversation", n, cfg.ConversationStates, from))
	}
	if st.partialBlocks > 0 {
		e.depart("partial-block", fmt.Sprintf("%d requests' last hash-id block held fewer tokens than a block and was written whole "+
			"(a key keeps one size, and a later request may fill the block): %d tokens more, %.1f %% of the blocks' tokens written "+
			"(kv-cache.py has no block-level requests)", st.partialBlocks, st.padTokens, 100*float64(st.padTokens)/float64(max(1, st.blockTokensWritten))))
	}
	if n := cs.emptyOffGPU; n > 0 {
		e.depart("empty-objects", fmt.Sprintf("%d objects of 0 bytes (requests of 0 context tokens) were written below Tier-0, which --gpu-mem-gb 0 "+
			"disables: kv-cache.py writes them to Tier-0 all the same (0 bytes fit a tier of 0), rows that kvreplay refuses in a trace "+
			"without a GPU tier", n))
	}
	if d := qosProfileDeparture(cfg.QoS); d != "" {
		e.depart("qos-profiles", d)
	}
	if n := st.windowCapped; n > 0 {
		fewer := ""
		if st.windowReads > 0 {
			fewer = fmt.Sprintf(" (up to %d reads fewer in all)", st.windowReads)
		}
		e.depart("window", fmt.Sprintf("%d of the trace's requests generate more tokens than --duration %s s holds at --generation-mode %s: each generated "+
			"%d tokens at most, and its decode reads stopped there%s; kv-cache.py makes all of a request's decode reads "+
			"before it sleeps through its generation", n, strconv.FormatFloat(cfg.Duration.Seconds(), 'f', -1, 64), cfg.GenerationMode,
			e.windowTokens(math.MaxInt), fewer))
	}
	x.Notes = e.notes
	x.Warnings = e.warnings
	x.Departures = e.departures
}

// noteBlocks says a block-level run's prefix hit rate, the figure to set
// beside its trace's block reuse, and what the reference's cache_hit_rate
// beside it counts: every read that found its object, the decode reads of
// every block of a request included, so that it stays near 98 % whatever
// the cache held of the trace's blocks.
func (e *engine) noteBlocks() {
	st, cs := &e.stats, &e.cache.stats
	refs := st.blockHits + st.blockMisses
	if refs == 0 {
		return
	}
	rate := 0.0
	if n := cs.hits + cs.misses; n > 0 {
		rate = float64(cs.hits) / float64(n)
	}
	e.notes = append(e.notes, fmt.Sprintf("prefix blocks: %d of %d block references (%.1f %%) found their block cached; %d blocks written "+
		"(new, or evicted before); cache_hit_rate (%.1f %%) counts, as kv-cache.py does, every read that found its object, decode reads included",
		st.blockHits, refs, 100*float64(st.blockHits)/float64(refs), st.blockMisses, 100*rate))
}

// warnBacklog warns of a request trace whose requests were still queued,
// 1 % or more of them, when the run ended: the workers took fewer than it
// offered, and the rest made no I/O. Its queue is the reference's, without
// bound; a trace replayed faster than its workers serve it (--trace-speedup,
// too few --num-users for its generations) left most of its requests out,
// and only --output's requests_queued_at_end counted them.
func (e *engine) warnBacklog(x *Extra) {
	q, n := int64(x.RequestsQueued), int64(x.RequestsGenerated)
	if q == 0 || q*100 < n {
		return
	}
	s := max((e.now - e.start).Seconds(), 1e-9)
	e.warn(fmt.Sprintf("%d of the %d requests read from the trace (%.1f %%) were still queued when the run ended, and made no I/O: "+
		"its %d workers (min(--num-users, 500), each busy for a request's generation at --generation-mode %s) took %d, %.3g a second, "+
		"where the trace offered %.3g; more --num-users, or a faster --generation-mode, serve more",
		q, n, 100*float64(q)/float64(n), e.workers, e.cfg.GenerationMode, x.RequestsDispatched, float64(x.RequestsDispatched)/s, float64(n)/s))
}

// healthCriteria are the reference's storage_health criteria of the run's
// --performance-profile, each where the reference has it (reference
// section 5): the latency profile's Tier-2 write and read P95 and CPU RAM
// P95 where it has latency samples of them (new objects' writes, hits'
// reads: a Tier-2 that only demotions wrote has no write criterion), and
// the cache hit rate; the throughput profile's Tier-2 read and write
// bandwidth, by the tier's bytes in the statistics (demotions' included).
// Latencies are 0 in virtual time.
func (e *engine) healthCriteria(c *CacheStats) []Criterion {
	cs := &e.cache.stats
	nvme, cpu := cs.samples[schema.TierNVMe], cs.samples[schema.TierCPU]
	var criteria []Criterion
	if e.cfg.PerformanceProfile == "throughput" {
		bw := func(what string, gbps float64) {
			c := Criterion{Name: "Storage KV " + what + " Bandwidth", Target: 0, Actual: gbps, Unit: "GiB/s", Passed: gbps > 0}
			if !c.Passed {
				c.Reason = "no Tier-2 " + strings.ToLower(what) + " bandwidth (simulated)"
			}
			criteria = append(criteria, c)
		}
		reads, writes := cs.tierRead[schema.TierNVMe] > 0, cs.tierWritten[schema.TierNVMe] > 0
		if reads || !writes {
			bw("Read", c.StorageReadBandwidth)
		}
		if writes || !reads {
			bw("Write", c.StorageWriteBandwidth)
		}
		return criteria
	}
	latency := func(what string, limit time.Duration) {
		ms := float64(limit.Milliseconds())
		criteria = append(criteria, Criterion{Name: fmt.Sprintf("%s P95 < %gms", what, ms), Target: ms, Unit: "ms", Passed: true})
	}
	// The reference takes a device latency with each storage latency
	// (0 in its trace mode), and names a criterion for the device's.
	if nvme[schema.OpWrite] > 0 {
		latency("Storage Tier Write Device", results.StorageWriteP95Limit)
	}
	if nvme[schema.OpRead] > 0 {
		latency("Storage Tier Read Device", results.StorageReadP95Limit)
	}
	if cpu[schema.OpRead]+cpu[schema.OpWrite] > 0 {
		latency("CPU RAM", results.CPUP95Limit)
	}
	if cs.hits+cs.misses > 0 {
		criteria = append(criteria, results.CacheHitRate(c.CacheHitRate))
	}
	return criteria
}

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

// qosProfileDeparture describes where profiles (from --config's
// qos_profiles) differ from kv-cache.py's built-in ones in what decides
// a request's fate, its queue priority and its p95 target; "" where they
// do not. kvtrace queues and judges SLAs by the file's profiles;
// kv-cache.py keeps the built-in ones there, since its benchmark and
// monitoring modules import QOS_PROFILES before --config rebinds it.
func qosProfileDeparture(profiles [numQoSLevels]QoSProfile) string {
	builtin := DefaultConfig().QoS
	var diffs []string
	for lvl, p := range profiles {
		b := builtin[lvl]
		if p.Priority != b.Priority {
			diffs = append(diffs, fmt.Sprintf("%s priority %d (built-in %d)", p.Name, p.Priority, b.Priority))
		}
		if p.TargetP95 != b.TargetP95 {
			diffs = append(diffs, fmt.Sprintf("%s p95 target %g ms (built-in %g ms)", p.Name,
				float64(p.TargetP95)/float64(time.Millisecond), float64(b.TargetP95)/float64(time.Millisecond)))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return "config.yaml qos_profiles: " + strings.Join(diffs, ", ") + ": kvtrace queues requests and judges their SLA by the file's " +
		"profiles; kv-cache.py's queue and SLA checks keep its built-in ones (its benchmark and monitoring modules import QOS_PROFILES " +
		"before --config rebinds it)"
}
