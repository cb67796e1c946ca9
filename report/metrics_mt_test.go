package report

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found in a
// document's metrics: each fails on a small change to the code under it
// (named in its comment) that the rest of the package's tests let
// through.

// slaDoc is a kvreplay document of 100 interactive requests, 92 within
// the 50 ms target (4 at 100 ms, 4 at 300 ms: a p95 of 100 ms and a p99
// of 300 ms), at --speed speed, its summary by results.
func slaDoc(t *testing.T, speed float64) *schema.Result {
	t.Helper()
	reqs := results.NewRequests()
	for i := range 100 {
		d := 10 * time.Millisecond
		switch {
		case i >= 96:
			d = 300 * time.Millisecond
		case i >= 92:
			d = 100 * time.Millisecond
		}
		reqs.Add(schema.QoSInteractive, d)
	}
	r := &schema.Result{Header: schema.Header{Tool: KindKVReplay}, WallS: 2, Complete: true, Requests: reqs.Finalize(),
		Replay: schema.ReplayStats{Speed: speed}}
	s, err := results.Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary = s
	return r
}

// TestMetricsSLAFigures: a class that had 92 % of its requests within
// its target did not meet its SLA (sla_met 0, not a looser rule's 1); the
// request p95 is the p95, not the p99; a run that could not measure its
// SLA (--speed max of an open loop) has no per-class SLA metric at all.
func TestMetricsSLAFigures(t *testing.T) {
	r := slaDoc(t, 1)
	q := r.Requests.ByQoS[0]
	if q.Met || q.Compliance != 0.92 || r.Requests.Latency.P95US == r.Requests.Latency.P99US {
		t.Fatalf("test setup: %+v, request p95 %v p99 %v", q, r.Requests.Latency.P95US, r.Requests.Latency.P99US)
	}
	v, err := MetricsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := v[qosMetric("interactive", "sla_met")]; !ok || got != 0 {
		t.Errorf("sla_met %v (present %v), want 0: 92 %% within is not 95 %%", got, ok)
	}
	if got := v[MetricRequestP95]; got != r.Requests.Latency.P95US/1000 {
		t.Errorf("%s %v, want the p95 %v ms (p99 %v)", MetricRequestP95, got, r.Requests.Latency.P95US/1000, r.Requests.Latency.P99US/1000)
	}

	unpaced := slaDoc(t, 0)
	if unpaced.Summary.NotMeasured[results.NotMeasuredSLA] == "" {
		t.Fatal("test setup: --speed max measured the SLA")
	}
	if v, err = MetricsOf(unpaced); err != nil {
		t.Fatal(err)
	}
	for k := range v {
		if strings.HasPrefix(k, "qos_") {
			t.Errorf("--speed max: metric %s = %v, want no per-class SLA metric", k, v[k])
		}
	}
}

// TestMetricsTierThatOnlyDeleted: a tier whose only operations were
// deletes was used: its offered loads are measured zeros, not absent.
func TestMetricsTierThatOnlyDeleted(t *testing.T) {
	r := &schema.Result{Header: schema.Header{Tool: KindKVReplay}, WallS: 1, Complete: true,
		Tiers: []schema.TierTotals{{Tier: "Tier-1", Backend: "ram", DeleteOps: 5}}}
	v, err := MetricsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := v[tierMetric(1, "read_offered")]; !ok || got != 0 {
		t.Errorf("tier1_read_offered %v (present %v), want a measured 0", got, ok)
	}
}
