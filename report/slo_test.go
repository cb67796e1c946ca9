package report

import (
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestSLOAttainmentMetrics: a kvreplay document with --slo-ms figures
// gives kvreport its attainment, overall and by QoS class, as the share of
// requests within the target (from the counts, so merged documents stay
// exact); a document without them gives none.
func TestSLOAttainmentMetrics(t *testing.T) {
	r := loadTestResult(t, "a1.json")
	if v, err := MetricsOf(r); err != nil || len(v) == 0 {
		t.Fatalf("%v, %v", v, err)
	} else if _, ok := v[MetricSLO]; ok {
		t.Fatalf("slo_attainment %v without --slo-ms", v[MetricSLO])
	}
	r.Requests.SLO = &schema.SLOStats{TargetMS: 500, Count: 200, Within: 150, Attainment: 0.75,
		ByQoS: []schema.SLOClass{{QoS: "interactive", TargetMS: 50, Count: 40, Within: 10, Attainment: 0.25}}}
	v, err := MetricsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if v[MetricSLO] != 75 || v[qosMetric("interactive", "slo_attainment")] != 25 {
		t.Errorf("slo_attainment %v, interactive %v; want 75 and 25", v[MetricSLO], v[qosMetric("interactive", "slo_attainment")])
	}
	if MetricDescription(MetricSLO) == "" {
		t.Error("slo_attainment has no description")
	}
}
