package results

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found: each
// fails on a small change to the code under it (named in its comment)
// that the rest of the package's tests let through.

// TestNotAMeasurementOneFailure: a run that completed with a single
// failed operation is not a measurement (a rule of "more than one
// failure" would publish it); a cut-short run with one failure names the
// failure once, by count, for its reason names the operation.
func TestNotAMeasurementOneFailure(t *testing.T) {
	one := schema.ErrorStats{Count: 1, First: []string{"nvme: read 7_b: input/output error"}}
	for _, c := range []struct {
		name string
		r    schema.Result
		want string
	}{
		{"complete, one failure", schema.Result{Complete: true, Errors: one},
			"1 operation(s) failed, the first: nvme: read 7_b: input/output error"},
		{"cut short by one failure", schema.Result{IncompleteReason: "nvme: read 7_b: input/output error", Errors: one},
			"an incomplete run (nvme: read 7_b: input/output error); 1 operation(s) failed"},
	} {
		if got := NotAMeasurement(&c.r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := FailedOperations(&schema.Result{Complete: true, Errors: one}); got == "" {
		t.Error("FailedOperations of one failed operation is empty")
	}
}

// TestComplianceOfNoRequests: no requests are a share of 0, not 0/0: a
// NaN would not encode as JSON and compares false to everything.
func TestComplianceOfNoRequests(t *testing.T) {
	share, met := Compliance(0, 0)
	if share != 0 || met || math.IsNaN(share) {
		t.Errorf("Compliance(0, 0) = %v, %v; want 0, false", share, met)
	}
}

// TestOlderDocumentRoundsCompliance: an older document's within-target
// count is recovered by rounding Compliance*Count, not truncating it:
// 0.57*100 is 56.99999999999999 in float64, and 57 requests were within.
func TestOlderDocumentRoundsCompliance(t *testing.T) {
	if 0.57*float64(100) >= 57 {
		t.Fatal("test setup: 0.57*100 is exact here, so truncation would not show")
	}
	ds := times(100, 10*time.Millisecond)
	s := schema.RequestStats{Count: 100, Latency: lat(ds...), ByQoS: []schema.QoSStats{
		{QoS: "interactive", Count: 100, TargetP95MS: 50, Compliance: 0.57, Latency: lat(ds...)},
	}}
	r := NewRequests()
	if err := r.Merge(s); err != nil {
		t.Fatal(err)
	}
	got := r.Finalize().ByQoS
	if len(got) != 1 || got[0].WithinTarget != 57 || got[0].Compliance != 0.57 {
		t.Errorf("by_qos %+v, want 57 of 100 within", got)
	}
}

// TestHealthSkipsClassWithoutTarget: a QoS class that carries no target
// is not judged against one (a criterion "within 0ms" would fail a run
// that nothing judged).
func TestHealthSkipsClassWithoutTarget(t *testing.T) {
	r := schema.Result{Complete: true, Replay: schema.ReplayStats{Speed: 1}, Requests: schema.RequestStats{Count: 5, ByQoS: []schema.QoSStats{
		{QoS: "interactive", Count: 5, TargetP95MS: 0, Latency: schema.Latency{Count: 5, P95US: 9000}},
	}}}
	h := Health(&r, &schema.Summary{})
	if h.OverallStatus != HealthNoData || len(h.Criteria) != 0 {
		t.Errorf("health %+v, want NO DATA without criteria", h)
	}
}

// TestHealthSkipsCPUCellsWithoutLatency: a Tier-1 cell with no measured
// latency (nothing completed) is not a CPU criterion passed at 0 ms.
func TestHealthSkipsCPUCellsWithoutLatency(t *testing.T) {
	r := schema.Result{Complete: true, Cells: []schema.Cell{{Tier: "Tier-1", Op: "Read", Phase: "Decode", Backend: "ram", BusyS: 1}}}
	h := Health(&r, &schema.Summary{})
	if h.OverallStatus != HealthNoData {
		t.Errorf("health %s %+v, want NO DATA: no Tier-1 operation completed", h.OverallStatus, h.Criteria)
	}
}

// TestSLAFailureAtTheTarget: a p95 exactly at the target is not above
// it, so the reason of a class that failed on its share must not read
// "50 ms > 50 ms".
func TestSLAFailureAtTheTarget(t *testing.T) {
	share, met := Compliance(90, 100)
	q := schema.QoSStats{QoS: "interactive", Count: 100, TargetP95MS: 50, WithinTarget: 90, Compliance: share, Met: met,
		Latency: schema.Latency{Count: 100, P95US: 50_000}}
	got := SLAFailure(q)
	want := "interactive: 90.0 % of 100 requests within the 50 ms target, 95 % needed (p95 50.0 ms)"
	if got != want {
		t.Errorf("SLAFailure = %q, want %q", got, want)
	}
}

// TestSummarizeP95IsP95: the summary's P95 figures are the 95th
// percentile of their cells, not a neighbour: each distribution here has
// a P95 distinct from its P50 and P99.
func TestSummarizeP95IsP95(t *testing.T) {
	// 94 fast, 3 at the middle, 3 slow: the P95 is the middle value.
	spread := func(fast, mid, slow time.Duration) []time.Duration {
		return append(append(times(94, fast), times(3, mid)...), times(3, slow)...)
	}
	mk := func(tier, op string, ds []time.Duration) schema.Cell {
		l := lat(ds...)
		return schema.Cell{Tier: tier, Op: op, Phase: "Decode", Backend: "x", Ops: int64(len(ds)), LogicalBytes: 1e6,
			PhysicalBytes: 1e6, BusyS: 1, Latency: l, FromSchedule: l}
	}
	rd, wr, cpu := spread(ms, 20*ms, 90*ms), spread(2*ms, 30*ms, 140*ms), spread(3*ms, 40*ms, 120*ms)
	cells := []schema.Cell{mk("Tier-2", "Read", rd), mk("Tier-2", "Write", wr), mk("Tier-1", "Read", cpu)}
	r := &schema.Result{WallS: 1, Complete: true, Cells: cells, Tiers: TierTotals(cells, time.Second), Replay: schema.ReplayStats{Speed: 1}}
	s, err := Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  float64
		ds   []time.Duration
	}{
		{"storage read", s.StorageReadP95MS, rd},
		{"storage write", s.StorageWriteP95MS, wr},
		{"cpu", s.CPUP95MS, cpu},
	} {
		l := lat(c.ds...)
		if l.P95US == l.P99US || l.P95US == l.P50US {
			t.Fatalf("test setup: %s percentiles %v %v %v", c.name, l.P50US, l.P95US, l.P99US)
		}
		if c.got != l.P95US/1000 {
			t.Errorf("%s P95 %v ms, want %v ms (P50 %v, P99 %v)", c.name, c.got, l.P95US/1000, l.P50US/1000, l.P99US/1000)
		}
	}
}

// TestSummarizeClosedLoop: a closed loop's SLA is measured even under
// --speed max (its users wait for their storage); its storage throughput
// is tokens generated over storage time, and without a Tokens column it
// is named as not measured, never a silent 0.
func TestSummarizeClosedLoop(t *testing.T) {
	reqs := NewRequests()
	for i := range 20 {
		reqs.Add(schema.QoSInteractive, time.Duration(i+1)*ms)
	}
	base := schema.Result{WallS: 2, Complete: true, Requests: reqs.Finalize(), Replay: schema.ReplayStats{Speed: 0}}

	known := base
	known.ClosedLoop = &schema.ClosedLoopStats{TokensGenerated: 1000, TokensKnown: true, StorageIOS: 4}
	s, err := Summarize(&known, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.NotMeasured[NotMeasuredSLA]; ok {
		t.Errorf("closed loop at --speed max: SLA not measured: %q", s.NotMeasured[NotMeasuredSLA])
	}
	sla := 0
	for _, c := range s.StorageHealth.Criteria {
		if strings.Contains(c.Name, "SLA") {
			sla++
		}
	}
	if sla != 1 {
		t.Errorf("criteria %+v, want the interactive SLA judged", s.StorageHealth.Criteria)
	}
	if s.StorageThroughputTokensPerSec != 250 {
		t.Errorf("storage throughput %v tokens/s, want 1000 tokens / 4 s = 250", s.StorageThroughputTokensPerSec)
	}
	if _, ok := s.NotMeasured[NotMeasuredRefTokens]; ok {
		t.Error("closed loop with tokens: reference throughput named as not measured")
	}

	unknown := base
	unknown.ClosedLoop = &schema.ClosedLoopStats{StorageIOS: 4}
	if s, err = Summarize(&unknown, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.NotMeasured[NotMeasuredRefTokens]; !ok || s.StorageThroughputTokensPerSec != 0 {
		t.Errorf("closed loop without tokens: throughput %v, not measured %q", s.StorageThroughputTokensPerSec, s.NotMeasured)
	}
}

// TestFormatZero: nothing moved reads "0".
func TestFormatZero(t *testing.T) {
	if got := FormatGB(0); got != "0" {
		t.Errorf("FormatGB(0) = %q", got)
	}
	if got := FormatData(0); got != "0 GB" {
		t.Errorf("FormatData(0) = %q", got)
	}
}

// TestSLOAttainmentFigure: the overall attainment is within over count,
// and a class's likewise.
func TestSLOAttainmentFigure(t *testing.T) {
	r := NewRequests()
	r.SetSLO(SLO{All: 10 * time.Millisecond})
	for _, d := range []time.Duration{ms, 10 * ms, 11 * ms, 50 * ms} {
		r.Add(schema.QoSNone, d)
	}
	s := r.Finalize().SLO
	if s == nil || s.Count != 4 || s.Within != 2 || s.Attainment != 0.5 {
		t.Errorf("SLO %+v, want 2 of 4 within 10 ms: 0.5", s)
	}
}

// TestTierBusyUnknown: a busy time of 0 (unknown) leaves a tier's BusyS
// alone; a rank that read without a read busy time makes the merged read
// busy time unknown (0), so no device rate is made up from the others'.
func TestTierBusyUnknown(t *testing.T) {
	tiers := []schema.TierTotals{{Tier: "Tier-2", ReadBytes: 1e9, BusyS: 2.5}}
	ApplyTierBusy(tiers, []TierBusy{{Tier: "Tier-2", Read: time.Second}})
	if got := tiers[0]; got.BusyS != 2.5 || got.ReadDeviceBps != 1e9 {
		t.Errorf("tier %+v: want BusyS 2.5 kept, read device rate 1 GB/s", got)
	}
	rank0 := []schema.TierTotals{{Tier: "Tier-2", ReadBytes: 1, BusyS: 2, ReadBusyS: 1.5}}
	rank1 := []schema.TierTotals{{Tier: "Tier-2", ReadBytes: 1, BusyS: 3}}
	if got := MergeTierBusy(rank0, rank1); len(got) != 1 || got[0].Read != 0 || got[0].All != 3*time.Second {
		t.Errorf("MergeTierBusy = %+v, want read busy unknown (0)", got)
	}
}

// TestTierTotalsPhysicalAndDeletes: a tier's physical read bytes are its
// cells' physical bytes, and a tier that only deleted is still a tier.
func TestTierTotalsPhysicalAndDeletes(t *testing.T) {
	rd := cell("Tier-2", "Read", "Decode", "nvme", 2, ms, 100)
	rd.PhysicalBytes = 8192
	del := cell("Tier-1", "Delete", "Evict", "ram", 3, ms, 0)
	got := TierTotals([]schema.Cell{rd, del}, time.Second)
	if len(got) != 2 || got[0].Tier != "Tier-1" || got[0].DeleteOps != 3 || got[1].PhysicalReadBytes != 8192 || got[1].ReadBytes != 100 {
		t.Errorf("TierTotals = %+v", got)
	}
}

// TestCellMergeRefusesFirstBytes: more times to first byte than
// operations contradict each other.
func TestCellMergeRefusesFirstBytes(t *testing.T) {
	d := cell("Tier-2", "Read", "Decode", "s3", 2, ms, 100)
	fb := lat(ms, ms, ms)
	d.FirstByte = &fb
	if err := NewCell().Merge(d); !errors.Is(err, ErrInconsistent) {
		t.Errorf("3 first bytes of 2 ops merged: %v", err)
	}
}
