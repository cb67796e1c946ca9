package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestSLAIncompleteRun: the SLA of a run stopped early is not judged, as
// its storage_health is not (INCOMPLETE, never PASS): its classes' p95 and
// share within target are shown, their verdict is "incomplete" in every
// format, and qos_*_sla_met is absent as storage_health_pass is. A real
// closed-loop replay interrupted after 3 s had its SLA "met" beside
// storage_health INCOMPLETE.
func TestSLAIncompleteRun(t *testing.T) {
	d := loadOne(t, "testdata/closed_t1.json", "sysA")
	d.Result.Complete, d.Result.IncompleteReason = false, "interrupt signal received"
	rep, err := Build([]*Doc{d}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Groups[0].TrialValues[0]
	for _, q := range []string{"interactive", "responsive", "batch"} {
		if _, ok := v[qosMetric(q, "sla_met")]; ok {
			t.Errorf("%s = %v for an incomplete run", qosMetric(q, "sla_met"), v[qosMetric(q, "sla_met")])
		}
		if _, ok := v[qosMetric(q, "within_target")]; !ok {
			t.Errorf("no %s: the share is still shown", qosMetric(q, "within_target"))
		}
	}
	rows := slaRows(rep)
	if len(rows) != 3 {
		t.Fatalf("%d SLA rows", len(rows))
	}
	for _, s := range rows {
		if s.verdict() != "incomplete" || !strings.Contains(s.Why, "interrupt signal received") {
			t.Errorf("%s: verdict %q (%s)", s.QoS, s.verdict(), s.Why)
		}
	}
	for _, f := range []string{"text", "md", "csv", "json", "html"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if f != "csv" && (!strings.Contains(out, "incomplete") || strings.Contains(out, ">met<") || strings.Contains(out, `"sla": "met"`) ||
			strings.Contains(out, "  met\n") || strings.Contains(out, "| met |")) {
			t.Errorf("%s: an SLA verdict of an incomplete run:\n%.3000s", f, out)
		}
		if f == "csv" && strings.Contains(out, "sla_met,met,,higher,1,") {
			t.Errorf("csv: an sla_met of an incomplete run:\n%s", out)
		}
	}
}
