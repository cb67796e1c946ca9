package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
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

// TestReplaySummarySLA: kvreplay's terminal summary gives each class the
// verdict and share kvreport gives it: an incomplete run's SLA is not
// judged (it said "SLA met"), and a share is rounded down to a tenth.
func TestReplaySummarySLA(t *testing.T) {
	d := loadOne(t, "testdata/closed_t1.json", "sysA")
	var b bytes.Buffer
	WriteReplaySummary(&b, d.Result)
	whole := b.String()
	for _, s := range slaRows(&Report{Groups: []*Group{{Label: "x", Trials: []*schema.Result{d.Result}}}}) {
		want := s.within() + " within, SLA " + s.verdict()
		if !strings.Contains(whole, want) {
			t.Errorf("%s: no %q in\n%s", s.QoS, want, whole)
		}
	}
	d.Result.Complete, d.Result.IncompleteReason = false, "interrupt signal received"
	b.Reset()
	WriteReplaySummary(&b, d.Result)
	if out := b.String(); strings.Contains(out, "SLA met") || strings.Contains(out, "SLA NOT met") ||
		!strings.Contains(out, "SLA incomplete") || !strings.Contains(out, "SLA not judged: an incomplete run (interrupt signal received)") {
		t.Errorf("an incomplete run's summary:\n%s", out)
	}
}
