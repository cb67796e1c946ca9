package report

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
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

// TestClosedLoopScheduleJudged: a closed loop's rows released at their
// trace times (closed_loop.scheduled_lag) keep the trace's schedule, and
// kvreport judges them by today's rule in every format, whatever status
// the document carries: 5 s behind, the run is not PASS, and each format
// names the criterion with its figures. A document without the block
// (written before it, or of a closed loop with no such rows) is judged as
// before: its users' rows, 26.5 s behind their requests' releases here,
// keep no schedule, and it passes.
func TestClosedLoopScheduleJudged(t *testing.T) {
	for _, behind := range []bool{false, true} {
		docs, err := Load([]string{closedResult}, nil, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr := docs[0].Result
		tr.Requests.ByQoS = nil // its classes' SLAs, which it missed, aside
		tr.Lag.Count, tr.Lag.P95US, tr.Lag.MaxUS = 1000, 26.5e6, 28e6
		if behind {
			tr.ClosedLoop.ScheduledLag = &schema.Latency{Count: 40, P50US: 2e6, P95US: 5e6, MaxUS: 6e6}
		}
		tr.Summary.StorageHealth.OverallStatus = "PASS"
		tr.Summary.StorageHealth.Reasons = nil
		r, err := Build(docs, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := "PASS"
		if behind {
			want = "FAIL"
		}
		if got := r.Groups[0].Health[0]; got != want {
			t.Errorf("rows at trace times behind: %v: storage_health %s, want %s", behind, got, want)
		}
		unescape := strings.NewReplacer(`\u003e`, ">", "&gt;", ">", "&#39;", "'", "&#34;", `"`)
		for f, out := range renderAll(t, r) {
			out = unescape.Replace(out)
			named := strings.Contains(out, "lag of the rows released at their trace times") && strings.Contains(out, "p95 5000 ms >= 1000 ms limit")
			if named != behind {
				t.Errorf("%s, rows at trace times behind: %v: their lag named %v:\n%.4000s", f, behind, named, out)
			}
		}
	}
}
