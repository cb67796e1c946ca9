package report

import "testing"

// TestUnknownMetric: --metrics naming no metric is refused with the
// metrics whose names begin as it does, or the words metrics begin with.
func TestUnknownMetric(t *testing.T) {
	docs, err := Load(trials3[:1], nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const note = " (a text report's metrics section says what each means)"
	for _, tt := range []struct{ metric, want string }{
		{"tier2_read_bandwith", "report: --metrics tier2_read_bandwith: no such metric; did you mean tier2_read_bw, tier2_read_offered, tier2_read_p50, " +
			"tier2_read_p95, tier2_read_p99, tier2_read_sched_p50 or another tier2_read_* metric?" + note},
		{"qos_batch", "report: --metrics qos_batch: no such metric; did you mean qos_batch_slo_attainment, qos_batch_p95, qos_batch_within_target " +
			"or qos_batch_sla_met?" + note},
		{"elapsed_s", "report: --metrics elapsed_s: no such metric; did you mean elapsed?" + note},
		{"nope", "report: --metrics nope: no such metric: kvreport's metrics are tier0_*, tier1_*, tier2_*, tier3_*, decode_*, kv_*, storage_*, " +
			"requests_*, request_*, slo_*, qos_*, lag_*, elapsed" + note},
		// A class-less request has no QoS class of its own to attain.
		{"qos__slo_attainment", "report: --metrics qos__slo_attainment: no such metric; did you mean qos_interactive_slo_attainment, " +
			"qos_responsive_slo_attainment, qos_batch_slo_attainment, qos_interactive_p95, qos_interactive_within_target, " +
			"qos_interactive_sla_met or another qos_* metric?" + note},
	} {
		if _, err := Build(docs, BuildOptions{Metrics: []string{"elapsed", tt.metric}}); err == nil || err.Error() != tt.want {
			t.Errorf("--metrics %s: error\n%v\nwant\n%s", tt.metric, err, tt.want)
		}
	}
}
