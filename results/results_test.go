package results

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

const ms = time.Millisecond

func TestQoSTarget(t *testing.T) {
	for _, tt := range []struct {
		q    schema.QoS
		want time.Duration
	}{
		{schema.QoSNone, 0},
		{schema.QoSInteractive, 50 * ms},
		{schema.QoSResponsive, 100 * ms},
		{schema.QoSBatch, 1000 * ms},
		{schema.QoS(schema.NumQoS), 0},
		{schema.QoS(200), 0},
	} {
		if got := QoSTarget(tt.q); got != tt.want {
			t.Errorf("QoSTarget(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

// TestComplianceBoundary: a class with exactly 95 % of its requests within
// target is met, one request fewer is not, and a request taking exactly
// the target is within it.
func TestComplianceBoundary(t *testing.T) {
	for _, tt := range []struct {
		within, count int64
		met           bool
	}{
		{95, 100, true},
		{94, 100, false},
		{19, 20, true},
		{18, 20, false},
		{949, 1000, false},
		{950, 1000, true},
		{950_000_000_000, 1_000_000_000_000, true},
		{949_999_999_999, 1_000_000_000_000, false},
		{1, 1, true},
		{0, 1, false},
		{0, 0, false},
	} {
		share, met := Compliance(tt.within, tt.count)
		if met != tt.met {
			t.Errorf("Compliance(%d, %d) = %v, met %v; want met %v", tt.within, tt.count, share, met, tt.met)
		}
	}

	for _, tt := range []struct {
		name          string
		within, later int
		met           bool
	}{
		{"exactly 95 %", 95, 5, true},
		{"94 %", 94, 6, false},
		{"19 of 20", 19, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequests()
			for range tt.within {
				r.Add(schema.QoSResponsive, QoSTarget(schema.QoSResponsive)) // exactly the target: within
			}
			for range tt.later {
				r.Add(schema.QoSResponsive, QoSTarget(schema.QoSResponsive)+time.Nanosecond)
			}
			s := r.Finalize()
			if len(s.ByQoS) != 1 {
				t.Fatalf("by_qos %+v", s.ByQoS)
			}
			q := s.ByQoS[0]
			if q.WithinTarget != int64(tt.within) || q.Count != int64(tt.within+tt.later) || q.Met != tt.met ||
				q.Compliance != float64(tt.within)/float64(tt.within+tt.later) || q.TargetP95MS != 100 {
				t.Errorf("%+v, want %d within, met %v", q, tt.within, tt.met)
			}
		})
	}
}

// lat returns the Latency of the given durations, recorded into one
// histogram.
func lat(ds ...time.Duration) schema.Latency {
	h := hist.New()
	for _, d := range ds {
		h.Record(d)
	}
	return h.Latency()
}

// times returns n copies of d.
func times(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// cell builds a document cell of n operations of latency d.
func cell(tier, op, phase, backend string, n int, d time.Duration, logical int64) schema.Cell {
	l := lat(times(n, d)...)
	return schema.Cell{Tier: tier, Op: op, Phase: phase, Backend: backend, Ops: int64(n), LogicalBytes: logical,
		PhysicalBytes: logical, BusyS: float64(n) * d.Seconds(), Latency: l, FromSchedule: l}
}

func TestTierTotals(t *testing.T) {
	cells := []schema.Cell{
		cell("Tier-2", "Read", "Decode", "nvme", 3, ms, 300),
		cell("Tier-1", "Write", "Prefill", "ram", 2, ms, 20),
		cell("Tier-2", "Write", "Evict", "nvme", 4, 2*ms, 4000),
		cell("Tier-1", "Read", "Decode", "ram2", 5, 3*ms, 50),
		cell("Tier-1", "Delete", "Evict", "ram", 7, 0, 0),
		cell("Tier-9", "Read", "Decode", "x", 1, ms, 1),
		// A tier whose cells completed nothing (all failed) is left out.
		{Tier: "Tier-0", Op: "Read", Phase: "Decode", Backend: "ram", BusyS: 1},
	}
	cells[2].PhysicalBytes = 4096 * 4
	tests := []struct {
		name  string
		cells []schema.Cell
		wall  time.Duration
		want  []schema.TierTotals
	}{
		{"none", nil, time.Second, nil},
		{"mixed", cells, 2 * time.Second, []schema.TierTotals{
			{Tier: "Tier-1", Backend: "ram,ram2", ReadOps: 5, WriteOps: 2, DeleteOps: 7, ReadBytes: 50, WriteBytes: 20,
				PhysicalReadBytes: 50, PhysicalWriteBytes: 20, ReadOfferedBps: 25, WriteOfferedBps: 10, BusyS: 0.015},
			{Tier: "Tier-2", Backend: "nvme", ReadOps: 3, WriteOps: 4, ReadBytes: 300, WriteBytes: 4000,
				PhysicalReadBytes: 300, PhysicalWriteBytes: 16384, ReadOfferedBps: 150, WriteOfferedBps: 2000, BusyS: 0.008},
			{Tier: "Tier-9", Backend: "x", ReadOps: 1, ReadBytes: 1, PhysicalReadBytes: 1, ReadOfferedBps: 0.5, BusyS: 0.001},
		}},
		{"no wall time", cells[:1], 0, []schema.TierTotals{
			{Tier: "Tier-2", Backend: "nvme", ReadOps: 3, ReadBytes: 300, PhysicalReadBytes: 300, BusyS: 0.003},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TierTotals(tt.cells, tt.wall)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if math.Abs(g.BusyS-w.BusyS) > 1e-12 {
					t.Errorf("%s: busy %v, want %v", g.Tier, g.BusyS, w.BusyS)
				}
				g.BusyS = w.BusyS
				if g != w {
					t.Errorf("got  %+v\nwant %+v", g, w)
				}
			}
		})
	}
}

func TestJoinUnique(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"", "", ""},
		{"ram", "", "ram"},
		{"", "nvme", "nvme"},
		{"ram", "nvme", "nvme,ram"},
		{"nvme,ram", "ram", "nvme,ram"},
		{"ram", "a,nvme", "a,nvme,ram"},
	} {
		if got := JoinUnique(tt.a, tt.b, ","); got != tt.want {
			t.Errorf("JoinUnique(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// Each cell has its own latency, so a cell in the wrong figure shows.
	cells := []schema.Cell{
		cell("Tier-0", "Read", "Decode", "ram", 10, 900*ms, 1<<30),
		cell("Tier-1", "Read", "Decode", "ram", 10, 4*ms, 2<<30),
		cell("Tier-1", "Write", "Prefill", "ram", 10, 6*ms, 1<<30),
		cell("Tier-1", "Delete", "Evict", "ram", 100, 300*ms, 0),
		cell("Tier-2", "Read", "Decode", "nvme", 10, 1*ms, 3<<30),
		cell("Tier-2", "Read", "Prefill", "nvme", 10, 9*ms, 1<<30),
		cell("Tier-2", "Write", "Prefill", "nvme", 5, 20*ms, 1<<29),
		cell("Tier-2", "Delete", "Evict", "nvme", 50, 700*ms, 0),
	}
	reqs := NewRequests()
	for i := range 20 {
		reqs.Add(schema.QoSInteractive, time.Duration(i+1)*ms)
	}
	const wall = 4 * time.Second
	const gib = GiB / GB // decimal GB, as every kvbench figure: 2^30 bytes are 1.07 GB
	full := &schema.Result{WallS: wall.Seconds(), Complete: true, Cells: cells, Tiers: TierTotals(cells, wall), Requests: reqs.Finalize(),
		Replay: schema.ReplayStats{Speed: 1}}
	p95 := func(ds ...time.Duration) float64 { return lat(ds...).P95US / 1000 }
	rl := full.Requests.Latency
	wantFull := schema.Summary{
		ElapsedTime: 4, TotalRequests: 20, RequestsPerSecond: 5, StorageKVTokensPerSec: ptr(250.0),
		NotMeasured:              map[string]string{NotMeasuredRefTokens: refTokens},
		TierGPUReadBandwidthGBps: 0.25 * gib, TierCPUReadBandwidthGBps: 0.5 * gib, TierCPUWriteBandwidthGBps: 0.25 * gib,
		TierStorageReadBandwidthGBps: 1 * gib, TierStorageWriteBandwidthGBps: 0.125 * gib,
		TierStorageKVBytesReadGB: 4 * gib, TierStorageKVBytesWrittenGB: 0.5 * gib, DecodeBytesReadGB: 3 * gib,
		StorageReadP95MS:  p95(append(times(10, ms), times(10, 9*ms)...)...),
		StorageWriteP95MS: p95(times(5, 20*ms)...),
		CPUP95MS:          p95(append(times(10, 4*ms), times(10, 6*ms)...)...),
		StorageIOLatencyMS: schema.Percentiles{Mean: rl.MeanUS / 1000, P50: rl.P50US / 1000, P95: rl.P95US / 1000,
			P99: rl.P99US / 1000, P999: rl.P999US / 1000, P9999: rl.P9999US / 1000},
	}
	// The device latency: each Tier-2 operation's own span, every
	// percentile of the same distributions.
	rd, wd := lat(append(times(10, ms), times(10, 9*ms)...)...), lat(times(5, 20*ms)...)
	wantFull.StorageReadDeviceP50MS, wantFull.StorageReadDeviceP95MS, wantFull.StorageReadDeviceP99MS = rd.P50US/1000, rd.P95US/1000, rd.P99US/1000
	wantFull.StorageReadDeviceP999MS, wantFull.StorageReadDeviceP9999MS = rd.P999US/1000, rd.P9999US/1000
	wantFull.StorageWriteDeviceP50MS, wantFull.StorageWriteDeviceP95MS, wantFull.StorageWriteDeviceP99MS = wd.P50US/1000, wd.P95US/1000, wd.P99US/1000
	wantFull.StorageWriteDeviceP999MS, wantFull.StorageWriteDeviceP9999MS = wd.P999US/1000, wd.P9999US/1000
	if wantFull.StorageReadDeviceP50MS > 2 || wantFull.StorageReadDeviceP95MS < 8 || wantFull.StorageReadDeviceP95MS > wantFull.StorageIOLatencyMS.P95 {
		t.Fatalf("test setup: device %+v", wantFull)
	}
	if wantFull.StorageReadP95MS < 8 || wantFull.CPUP95MS < 5 || wantFull.StorageWriteP95MS < 19 {
		t.Fatalf("test setup: %+v", wantFull)
	}
	wantFull.StorageHealth = schema.StorageHealth{OverallStatus: "PASS", PassedCount: 4, TotalCount: 4, Criteria: []schema.Criterion{
		{Name: "Storage Tier Write Total P95 < 500ms", Target: 500, Actual: wantFull.StorageWriteP95MS, Unit: "ms", Passed: true},
		{Name: "Storage Tier Read Total P95 < 200ms", Target: 200, Actual: wantFull.StorageReadP95MS, Unit: "ms", Passed: true},
		{Name: "CPU RAM P95 < 150ms", Target: 150, Actual: wantFull.CPUP95MS, Unit: "ms", Passed: true},
		// The requests' QoS class, its SLA measured at --speed 1.
		{Name: "interactive SLA: 95% within 50ms", Target: 95, Actual: 100, Unit: "%", Passed: true},
	}}

	slowWrites := []schema.Cell{cell("Tier-2", "Write", "Prefill", "nvme", 10, 600*ms, 1<<20)}
	failed := *full
	failed.Errors.Count = 1
	wantFailed := wantFull
	wantFailed.StorageHealth.OverallStatus = "FAIL"
	wantFailed.StorageHealth.Reasons = []string{"1 operation(s) failed"}
	// A run stopped early is never a PASS, whatever its criteria; a failed
	// criterion or operation still fails it.
	stopped := *full
	stopped.Complete = false
	wantStopped := wantFull
	wantStopped.StorageHealth.OverallStatus = HealthIncomplete
	wantStopped.StorageHealth.Reasons = []string{"incomplete: the run stopped early"}
	stoppedFailed := failed
	stoppedFailed.Complete = false
	wantStoppedFailed := wantFailed
	wantStoppedFailed.StorageHealth.Reasons = []string{"1 operation(s) failed", "incomplete: the run stopped early"}
	// Under --speed max the SLA is not measured; without bytes per token
	// the KV tokens are not.
	maxSpeed := *full
	maxSpeed.Replay.Speed = 0
	wantMax := wantFull
	wantMax.StorageKVTokensPerSec = nil
	wantMax.NotMeasured = map[string]string{NotMeasuredRefTokens: refTokens, NotMeasuredSLA: slaMax, NotMeasuredKVTokens: noBPT}
	wantMax.StorageHealth.Criteria = wantMax.StorageHealth.Criteria[:3]
	wantMax.StorageHealth.PassedCount, wantMax.StorageHealth.TotalCount = 3, 3

	tests := []struct {
		name   string
		r      *schema.Result
		tokens *float64
		want   schema.Summary
	}{
		{"empty: nothing to measure", &schema.Result{Complete: true, WallS: 1}, ptr(0.0), schema.Summary{ElapsedTime: 1,
			StorageKVTokensPerSec: ptr(0.0), NotMeasured: map[string]string{NotMeasuredRefTokens: refTokens},
			StorageHealth: schema.StorageHealth{OverallStatus: HealthNoData, Reasons: []string{"nothing the criteria judge ran"}}}},
		{"empty and stopped", &schema.Result{Replay: schema.ReplayStats{Speed: 1}}, ptr(100.0), schema.Summary{
			NotMeasured:   map[string]string{NotMeasuredRefTokens: refTokens, NotMeasuredKVTokens: "the run measured no time"},
			StorageHealth: schema.StorageHealth{OverallStatus: HealthIncomplete, Reasons: []string{"incomplete: the run stopped early"}}}},
		{"full", full, ptr(1000.0), wantFull},
		{"errors fail the run", &failed, ptr(1000.0), wantFailed},
		{"stopped early", &stopped, ptr(1000.0), wantStopped},
		{"stopped early with errors", &stoppedFailed, ptr(1000.0), wantStoppedFailed},
		{"speed max, no bytes per token", &maxSpeed, nil, wantMax},
		{"slow Tier-2 writes, no reads, no Tier-1", &schema.Result{WallS: 1, Complete: true, Cells: slowWrites, Tiers: TierTotals(slowWrites, time.Second)}, ptr(0.0),
			schema.Summary{ElapsedTime: 1, TierStorageWriteBandwidthGBps: gib / 1024, TierStorageKVBytesWrittenGB: gib / 1024,
				StorageWriteP95MS: p95(600 * ms), StorageWriteDeviceP50MS: p95(600 * ms), StorageWriteDeviceP95MS: p95(600 * ms),
				StorageWriteDeviceP99MS: p95(600 * ms), StorageWriteDeviceP999MS: p95(600 * ms), StorageWriteDeviceP9999MS: p95(600 * ms),
				StorageKVTokensPerSec: ptr(0.0), NotMeasured: map[string]string{NotMeasuredRefTokens: refTokens},
				StorageHealth: schema.StorageHealth{OverallStatus: "FAIL", TotalCount: 1, Criteria: []schema.Criterion{
					{Name: "Storage Tier Write Total P95 < 500ms", Target: 500, Actual: p95(600 * ms), Unit: "ms", Reason: "storage tier write total p95 600 ms >= 500 ms limit"}},
					Reasons: []string{"storage tier write total p95 600 ms >= 500 ms limit"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Summarize(tt.r, tt.tokens)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}

	bad := *full
	bad.Cells = append([]schema.Cell(nil), full.Cells...)
	bad.Cells[5].Latency.Histogram = "!!!"
	if _, err := Summarize(&bad, nil); !errors.Is(err, hist.ErrCorrupt) || !strings.Contains(err.Error(), "Tier-2 read") {
		t.Errorf("damaged Tier-2 read histogram: error %v", err)
	}
}

func TestEvaluateHealthBoundary(t *testing.T) {
	for _, tt := range []struct {
		name                 string
		write, read, cpu     float64
		errors               int64
		status               schema.HealthStatus
		passed               int
		hasW, hasR, hasCPU   bool
		wantCriteria, failed int
		stopped              bool
	}{
		{name: "just below", write: 499.999, read: 199.999, cpu: 149.999, status: "PASS", hasW: true, hasR: true, hasCPU: true, wantCriteria: 3},
		{name: "at the limits", write: 500, read: 200, cpu: 150, status: "FAIL", hasW: true, hasR: true, hasCPU: true, wantCriteria: 3, failed: 3},
		{name: "only a slow read", write: 900, read: 250, cpu: 900, status: "FAIL", hasR: true, wantCriteria: 1, failed: 1},
		{name: "nothing measured", status: HealthNoData},
		{name: "errors", errors: 3, status: "FAIL"},
		{name: "incomplete", write: 1, read: 1, cpu: 1, status: HealthIncomplete, hasW: true, hasR: true, hasCPU: true, wantCriteria: 3, stopped: true},
		{name: "incomplete, nothing measured", status: HealthIncomplete, stopped: true},
		{name: "incomplete and slow", write: 900, status: "FAIL", hasW: true, wantCriteria: 1, failed: 1, stopped: true},
		{name: "incomplete with errors", errors: 1, status: "FAIL", stopped: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := schema.Summary{StorageWriteP95MS: tt.write, StorageReadP95MS: tt.read, CPUP95MS: tt.cpu}
			r := schema.Result{Complete: !tt.stopped, Errors: schema.ErrorStats{Count: tt.errors}}
			h := evaluate(&r, &s, presence{storageWrites: tt.hasW, storageReads: tt.hasR, cpu: tt.hasCPU})
			if (h.OverallStatus == HealthPass) != (len(h.Reasons) == 0) {
				t.Errorf("status %s with reasons %q", h.OverallStatus, h.Reasons)
			}
			if h.OverallStatus != tt.status || h.TotalCount != tt.wantCriteria || len(h.Criteria) != tt.wantCriteria ||
				h.PassedCount != tt.wantCriteria-tt.failed {
				t.Errorf("%+v", h)
			}
		})
	}
}

func TestStorageTokens(t *testing.T) {
	cells := []schema.Cell{
		{Tier: "Tier-2", Op: "Read", Phase: "Decode", LogicalBytes: 1000},
		{Tier: "Tier-2", Op: "Write", Phase: "Evict", LogicalBytes: 500},
		{Tier: "Tier-2", Op: "Delete", Phase: "Evict", LogicalBytes: 7000},
		{Tier: "Tier-1", Op: "Read", Phase: "Decode", LogicalBytes: 9000},
	}
	for _, tt := range []struct {
		name string
		bpt  int64
		tp   int
		want float64
		ok   bool
	}{
		// The bytes the run moved, whatever the size scale made them: a
		// scaled run's tokens are not the trace's.
		{"bytes moved", 10, 1, 150, true},
		{"tensor parallel", 20, 2, 150, true},
		{"tensor parallel 0 is 1", 10, 0, 150, true},
		{"whole bytes per rank", 21, 2, 150, true},
		{"no bytes per token", 0, 1, 0, false},
		{"fewer bytes than ranks", 1, 2, 0, false},
	} {
		if got, ok := StorageTokens(cells, tt.bpt, tt.tp); got != tt.want || ok != tt.ok {
			t.Errorf("%s: %v %v, want %v %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The reasons Summarize gives for what it could not measure.
const (
	refTokens = "the reference's figure is its total tokens generated over its total storage I/O time, which only a closed-loop replay (--closed-loop) of a trace with a Tokens column measures: an open-loop replay's requests do not wait for their storage (kvbench's own KV token rate, kv_tokens_moved_per_s, is the summary's storage_kv_tokens_per_sec)"
	noBPT     = "the trace's bytes per token are unknown: kvreplay reads them from the trace's .meta.json sidecar, which a trace on a pipe and a kv-cache.py trace lack (kvreplay --model names the model)"
	slaMax    = "under --speed max rows are released as fast as workers take them, not at their arrival times: requests wait behind the trace's backlog, so their latency and SLA compliance measure that queue, not the reference's served workload (replay at --speed 1 for the SLA)"
)

func TestTierOpLatency(t *testing.T) {
	cells := []schema.Cell{
		cell("Tier-2", "Read", "Decode", "nvme", 3, ms, 1),
		cell("Tier-2", "Read", "Prefill", "nvme", 2, 5*ms, 1),
		cell("Tier-2", "Write", "Evict", "nvme", 4, 9*ms, 1),
		cell("Tier-1", "Read", "Decode", "ram", 4, 9*ms, 1),
	}
	cells[1].FromSchedule = lat(7*ms, 8*ms)
	got, err := TierOpLatency(cells, schema.TierNVMe, schema.OpRead, false)
	if want := lat(ms, ms, ms, 5*ms, 5*ms); err != nil || got != want {
		t.Errorf("latency %+v %v, want %+v", got, err, want)
	}
	got, err = TierOpLatency(cells, schema.TierNVMe, schema.OpRead, true)
	if want := lat(ms, ms, ms, 7*ms, 8*ms); err != nil || got != want {
		t.Errorf("from schedule %+v %v, want %+v", got, err, want)
	}
	if got, err := TierOpLatency(cells, schema.TierGPU, schema.OpRead, false); err != nil || got != (schema.Latency{}) {
		t.Errorf("no cells: %+v %v", got, err)
	}
}

// rank is what one rank measured, with the whole run's aggregates fed the
// same values.
type rank struct {
	cells map[[3]string]*Cell
	reqs  *Requests
	lag   *Latency
}

var cellIDs = [][3]string{{"Tier-1", "Write", "Prefill"}, {"Tier-2", "Read", "Decode"}, {"Tier-2", "Write", "Evict"}}

// simulate feeds random operations and requests to n ranks and to the
// aggregates of the whole run.
func simulate(rng *rand.Rand, n int) (ranks []rank, whole rank) {
	newRank := func() rank {
		r := rank{cells: map[[3]string]*Cell{}, reqs: NewRequests(), lag: NewLatency()}
		for _, id := range cellIDs {
			r.cells[id] = NewCell()
		}
		return r
	}
	whole = newRank()
	for range n {
		r := newRank()
		for _, id := range cellIDs {
			if rng.IntN(4) == 0 {
				continue // this rank had none
			}
			for range 1 + rng.IntN(300) {
				d := time.Duration(rng.ExpFloat64() * float64(3*ms))
				s := d + time.Duration(rng.IntN(int(ms)))
				b := int64(1 + rng.IntN(1<<20))
				r.cells[id].Add(d, s, b, b+4096)
				whole.cells[id].Add(d, s, b, b+4096)
			}
			busy := time.Duration(rng.Int64N(int64(time.Second)))
			r.cells[id].Busy += busy
			whole.cells[id].Busy = max(whole.cells[id].Busy, busy)
		}
		for range rng.IntN(400) {
			q := schema.QoS(rng.IntN(schema.NumQoS))
			// Around the targets, so that compliance is neither 0 nor 1.
			d := time.Duration(rng.ExpFloat64() * float64(QoSTarget(q)+10*ms) / 3)
			if rng.IntN(10) == 0 {
				d = QoSTarget(q)
			}
			r.reqs.Add(q, d)
			whole.reqs.Add(q, d)
		}
		for range rng.IntN(100) {
			d := time.Duration(rng.IntN(10000)) * time.Microsecond
			r.lag.Add(d)
			whole.lag.Add(d)
		}
		ranks = append(ranks, r)
	}
	return ranks, whole
}

// TestMergeEqualsWhole: finalizing each rank, merging the documents and
// finalizing again gives what aggregating the whole run gives, exactly:
// counts, bytes, within-target counts, compliance, percentiles and the
// encoded histograms; with Merge one at a time, with MergeAll at once, and
// with documents written before within_target existed.
func TestMergeEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const wall = 3 * time.Second
	for iter := range 6 {
		ranks, whole := simulate(rng, 1+rng.IntN(5))
		// Some ranks' documents come from before within_target: drop it,
		// through JSON as an older kvreplay wrote them.
		docs := make([]schema.RequestStats, len(ranks))
		lags := make([]schema.Latency, len(ranks))
		cells := map[[3]string][]schema.Cell{}
		for i, r := range ranks {
			docs[i] = r.reqs.Finalize()
			if i%2 == 1 {
				docs[i] = olderRequests(t, docs[i])
			}
			lags[i] = r.lag.Finalize()
			for _, id := range cellIDs {
				cells[id] = append(cells[id], r.cells[id].Finalize(id[0], id[1], id[2], "nvme", wall))
			}
		}
		wantReqs, wantLag := whole.reqs.Finalize(), whole.lag.Finalize()
		for _, how := range []string{"Merge", "MergeAll"} {
			for _, id := range cellIDs {
				m := NewCell()
				if how == "Merge" {
					for _, d := range cells[id] {
						if err := m.Merge(d); err != nil {
							t.Fatal(err)
						}
					}
				} else if err := m.MergeAll(cells[id]); err != nil {
					t.Fatal(err)
				}
				got, want := m.Finalize(id[0], id[1], id[2], "nvme", wall), whole.cells[id].Finalize(id[0], id[1], id[2], "nvme", wall)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("iter %d %s: cell %v:\ngot  %+v\nwant %+v", iter, how, id, got, want)
				}
			}

			reqs, lag := NewRequests(), NewLatency()
			if how == "Merge" {
				for i := range docs {
					if err := reqs.Merge(docs[i]); err != nil {
						t.Fatal(err)
					}
					if err := lag.Merge(lags[i]); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				if err := reqs.MergeAll(docs); err != nil {
					t.Fatal(err)
				}
				if err := lag.MergeAll(lags); err != nil {
					t.Fatal(err)
				}
			}
			if got := reqs.Finalize(); !reflect.DeepEqual(got, wantReqs) {
				t.Errorf("iter %d %s: requests:\ngot  %+v\nwant %+v", iter, how, got, wantReqs)
			}
			if got := lag.Finalize(); got != wantLag {
				t.Errorf("iter %d %s: lag:\ngot  %+v\nwant %+v", iter, how, got, wantLag)
			}
		}
		// The whole run has classes both met and not, sometimes.
		if testing.Verbose() {
			for _, q := range whole.reqs.Finalize().ByQoS {
				t.Logf("iter %d: %s %d of %d within, met %v", iter, q.QoS, q.WithinTarget, q.Count, q.Met)
			}
		}
	}
}

// olderRequests is s as a document written before within_target existed
// reads: encoded, the field removed, decoded.
func olderRequests(tb testing.TB, s schema.RequestStats) schema.RequestStats {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	if qs, ok := m["by_qos"].([]any); ok {
		for _, q := range qs {
			delete(q.(map[string]any), "within_target")
		}
	}
	if b, err = json.Marshal(m); err != nil {
		tb.Fatal(err)
	}
	if strings.Contains(string(b), "within_target") {
		tb.Fatal("within_target left in")
	}
	var out schema.RequestStats
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestOlderDocument reads a QoS class as kvreplay wrote it before
// within_target: the count within target is recovered from compliance.
func TestOlderDocument(t *testing.T) {
	r := NewRequests()
	for i := range 7 {
		r.Add(schema.QoSBatch, time.Duration(i)*400*ms) // 0 .. 2.4 s: 3 within 1 s
	}
	s := olderRequests(t, r.Finalize())
	if s.ByQoS[0].WithinTarget != 0 || s.ByQoS[0].Compliance != 3.0/7 {
		t.Fatalf("older document %+v", s.ByQoS[0])
	}
	m := NewRequests()
	if err := m.Merge(s); err != nil {
		t.Fatal(err)
	}
	if err := m.Merge(s); err != nil {
		t.Fatal(err)
	}
	if q := m.Finalize().ByQoS[0]; q.WithinTarget != 6 || q.Count != 14 || q.Compliance != 6.0/14 || q.Met {
		t.Errorf("merged %+v", q)
	}
}

func TestMergeRefuses(t *testing.T) {
	good := NewRequests()
	for i := range 10 {
		good.Add(schema.QoSInteractive, time.Duration(i)*10*ms)
	}
	base := good.Finalize()
	qos := func(f func(*schema.QoSStats)) schema.RequestStats {
		s := base
		s.ByQoS = append([]schema.QoSStats(nil), base.ByQoS...)
		f(&s.ByQoS[0])
		return s
	}
	for _, tt := range []struct {
		name string
		s    schema.RequestStats
		want error
	}{
		{"another target", qos(func(q *schema.QoSStats) { q.TargetP95MS = 40 }), ErrTargetMismatch},
		{"more within than requests", qos(func(q *schema.QoSStats) { q.WithinTarget = 11 }), ErrInconsistent},
		{"compliance against within", qos(func(q *schema.QoSStats) { q.Compliance = 0.9 }), ErrInconsistent},
		{"older, compliance above 1", qos(func(q *schema.QoSStats) { q.WithinTarget, q.Compliance = 0, 1.5 }), ErrInconsistent},
		{"count against histogram", qos(func(q *schema.QoSStats) { q.Count = 9 }), ErrInconsistent},
		{"unknown class", qos(func(q *schema.QoSStats) { q.QoS = "urgent" }), schema.ErrUnknownValue},
		{"no class", qos(func(q *schema.QoSStats) { q.QoS = "" }), ErrInconsistent},
		{"damaged histogram", qos(func(q *schema.QoSStats) { q.Latency.Histogram = "HISTFAAA" }), hist.ErrCorrupt},
		{"class twice", func() schema.RequestStats { s := base; s.ByQoS = append(s.ByQoS, s.ByQoS[0]); return s }(), ErrInconsistent},
		{"requests against histogram", func() schema.RequestStats { s := base; s.Count++; return s }(), ErrInconsistent},
		{"no histogram", func() schema.RequestStats { s := base; s.Latency.Histogram = ""; return s }(), hist.ErrNoHistogram},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequests()
			if err := r.Merge(base); err != nil {
				t.Fatal(err)
			}
			before := r.Finalize()
			if err := r.Merge(tt.s); !errors.Is(err, tt.want) {
				t.Errorf("Merge: error %v, want %v", err, tt.want)
			}
			// A refused document changes nothing.
			if after := r.Finalize(); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused Merge changed the aggregate:\n%+v\n%+v", after, before)
			}
			err := r.MergeAll([]schema.RequestStats{base, base, tt.s})
			var ie *IndexError
			if !errors.Is(err, tt.want) || !errors.As(err, &ie) || ie.Index != 2 {
				t.Errorf("MergeAll: error %v, want %v about value 2", err, tt.want)
			}
			if after := r.Finalize(); !reflect.DeepEqual(after, before) {
				t.Error("a refused MergeAll changed the aggregate")
			}
		})
	}
}

func TestCellMergeRefuses(t *testing.T) {
	base := cell("Tier-2", "Read", "Decode", "nvme", 4, ms, 100)
	for _, tt := range []struct {
		name string
		f    func(*schema.Cell)
		want error
	}{
		{"ops against histogram", func(c *schema.Cell) { c.Ops = 5 }, ErrInconsistent},
		{"ops against schedule histogram", func(c *schema.Cell) { c.FromSchedule = lat(ms) }, ErrInconsistent},
		{"negative bytes", func(c *schema.Cell) { c.LogicalBytes = -1 }, ErrInconsistent},
		{"damaged histogram", func(c *schema.Cell) { c.FromSchedule.Histogram = "!!" }, hist.ErrCorrupt},
		{"histogram of another count", func(c *schema.Cell) { c.Latency = lat(ms, ms, ms, ms, ms); c.Latency.Count = 4 }, hist.ErrCountMismatch},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := base
			tt.f(&bad)
			c := NewCell()
			if err := c.Merge(base); err != nil {
				t.Fatal(err)
			}
			before := c.Finalize("a", "b", "c", "d", time.Second)
			if err := c.Merge(bad); !errors.Is(err, tt.want) {
				t.Errorf("Merge: error %v, want %v", err, tt.want)
			}
			err := c.MergeAll([]schema.Cell{base, bad, base})
			var ie *IndexError
			if !errors.Is(err, tt.want) || !errors.As(err, &ie) || ie.Index != 1 {
				t.Errorf("MergeAll: error %v, want %v about value 1", err, tt.want)
			}
			if after := c.Finalize("a", "b", "c", "d", time.Second); !reflect.DeepEqual(after, before) {
				t.Errorf("a refused merge changed the cell:\n%+v\n%+v", after, before)
			}
		})
	}
}

func TestCellFinalize(t *testing.T) {
	c := NewCell()
	c.Add(2*ms, 3*ms, 1000, 4096)
	c.Add(4*ms, 5*ms, 3000, 4096)
	c.Busy = 500 * ms
	got := c.Finalize("Tier-2", "Read", "Decode", "nvme", 2*time.Second)
	want := schema.Cell{Tier: "Tier-2", Op: "Read", Phase: "Decode", Backend: "nvme", Ops: 2, LogicalBytes: 4000,
		PhysicalBytes: 8192, BusyS: 0.5, DeviceBps: 8000, OfferedBps: 2000,
		Latency: lat(2*ms, 4*ms), FromSchedule: lat(3*ms, 5*ms)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	empty := NewCell().Finalize("Tier-0", "Read", "Decode", "ram", 0)
	if empty.OfferedBps != 0 || empty.DeviceBps != 0 || empty.Latency != (schema.Latency{}) {
		t.Errorf("empty cell %+v", empty)
	}
	// A merged busy time survives the document's seconds exactly.
	m := NewCell()
	d := got
	d.BusyS = (10486133 * time.Nanosecond).Seconds()
	if err := m.Merge(d); err != nil || m.Busy != 10486133*time.Nanosecond {
		t.Errorf("busy %v, %v", m.Busy, err)
	}
}

func BenchmarkCellAdd(b *testing.B) {
	c := NewCell()
	d := 137 * time.Microsecond
	for b.Loop() {
		c.Add(d, d+time.Millisecond, 1<<20, 1<<20)
		d += 7 * time.Microsecond
		if d > time.Second {
			d = time.Microsecond
		}
	}
}

// BenchmarkCellMergeAll times merging one cell of 1,000 documents.
func BenchmarkCellMergeAll(b *testing.B) {
	c := NewCell()
	for v := time.Microsecond; v < 10*time.Second; v = v*11/10 + time.Microsecond {
		c.Add(v, 2*v, 1, 1)
	}
	d := c.Finalize("Tier-2", "Read", "Decode", "nvme", time.Second)
	ds := make([]schema.Cell, 1000)
	for i := range ds {
		ds[i] = d
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := NewCell().MergeAll(ds); err != nil {
			b.Fatal(err)
		}
	}
}
