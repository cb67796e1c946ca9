package report

import (
	"strings"
	"testing"
)

// TestFailuresNamedInEveryFormat: a run that fell behind its schedule and
// missed an SLA is not PASS in any format, and each format names the
// failed criteria with their figures, never only "FAIL"; kvreport judges
// the document's figures by today's rule, whatever status it carries.
func TestFailuresNamedInEveryFormat(t *testing.T) {
	docs, err := Load([]string{closedResult}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := docs[0].Result
	// An open loop at --speed 1, 28 s behind its schedule, written by a
	// kvreplay that called it PASS.
	tr.ClosedLoop = nil
	tr.Replay.ClosedLoop, tr.Replay.Speed = false, 1
	tr.Lag.Count, tr.Lag.P95US, tr.Lag.MaxUS = 1000, 26.5e6, 28e6
	delete(tr.Summary.NotMeasured, "requests.by_qos")
	tr.Summary.StorageHealth.OverallStatus = "PASS"
	tr.Summary.StorageHealth.Reasons = nil
	r, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unescape := strings.NewReplacer(`\u003e`, ">", "&gt;", ">", "&#39;", "'", "&#34;", `"`)
	for f, out := range renderAll(t, r) {
		out = unescape.Replace(out)
		if !strings.Contains(out, "lag behind the trace's schedule: p95 26500 ms >= 1000 ms limit") {
			t.Errorf("%s: the lag is not named:\n%.4000s", f, out)
		}
		if strings.Contains(out, "\tPASS\t") || strings.Contains(out, " PASS ") && !strings.Contains(out, "FAIL") {
			t.Errorf("%s: shows PASS", f)
		}
	}
}
