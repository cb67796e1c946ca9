package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestReplaySummaryColumns: kvreplay's terminal summary puts each figure
// under its own column: a cell's data in GB (10^9 bytes, not GiB), its
// device rate apart from its offered load, its p99 apart from its p99
// from schedule; a tier that moved bytes without a device rate shows "-"
// (unknown), not 0; the requests' p95 is the p95; a run neither PASS nor
// FAIL (INCOMPLETE) has its verdict line. (Mutation-testing gaps: each
// of these, swapped or changed, went unnoticed by report's and
// kvreplay's tests.)
func TestReplaySummaryColumns(t *testing.T) {
	r := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	reqs := results.NewRequests()
	for i := range 100 {
		d := 10 * time.Millisecond
		switch {
		case i >= 96:
			d = 40 * time.Millisecond
		case i >= 92:
			d = 20 * time.Millisecond
		}
		reqs.Add(schema.QoSInteractive, d)
	}
	r.Requests = reqs.Finalize()
	r.Complete, r.IncompleteReason = false, "interrupt signal received"
	s, err := results.Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary = s
	if s.StorageHealth.OverallStatus != results.HealthIncomplete || r.Requests.Latency.P95US == r.Requests.Latency.P99US {
		t.Fatalf("test setup: %s %q, p95 %v p99 %v", s.StorageHealth.OverallStatus, s.StorageHealth.Reasons,
			r.Requests.Latency.P95US, r.Requests.Latency.P99US)
	}
	var b strings.Builder
	WriteReplaySummary(&b, r)
	out := b.String()

	var cell, tier []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 12 && f[0] == "Tier-2" && f[2] == "Read":
			cell = f
		case len(f) == 8 && f[0] == "Tier-2":
			tier = f
		}
	}
	c := r.Cells[0]
	if c.Tier != "Tier-2" || c.Op != "Read" || c.DeviceBps == c.OfferedBps || c.Latency.P99US == c.FromSchedule.P99US {
		t.Fatalf("test setup: cell %+v", c)
	}
	want := []string{"2.000", fmt.Sprintf("%.3f", c.DeviceBps/1e9), fmt.Sprintf("%.3f", c.OfferedBps/1e9), fmt.Sprintf("%.3f", c.Latency.P50US/1000),
		fmt.Sprintf("%.3f", c.Latency.P99US/1000), fmt.Sprintf("%.3f", c.FromSchedule.P99US/1000)}
	if len(cell) != 12 || strings.Join(cell[5:11], " ") != strings.Join(want, " ") {
		t.Errorf("Tier-2 Read cell %q, want GB, GB/s, offered, p50, p99, p99 sched %q\n%s", cell, want, out)
	}
	if len(tier) != 8 || tier[1] != "-" || tier[2] != "-" {
		t.Errorf("Tier-2 tier row %q: want \"-\" for device rates not measured\n%s", tier, out)
	}
	l := r.Requests.Latency
	if w := fmt.Sprintf("requests 100: storage latency p50 %.3f ms, p95 %.3f ms, p99 %.3f ms", l.P50US/1000, l.P95US/1000, l.P99US/1000); !strings.Contains(out, w) {
		t.Errorf("no %q in\n%s", w, out)
	}
	if !strings.Contains(out, "  verdict: INCOMPLETE") {
		t.Errorf("no verdict line for INCOMPLETE in\n%s", out)
	}
}

// TestReplaySummaryScheduledLag: kvreplay's terminal summary of a closed
// loop shows the lag of its rows released at their trace times apart
// from every row's (its users' rows keep no schedule), and the verdict
// that judged them: the schedule criterion under its own name, failed,
// and FAIL.
func TestReplaySummaryScheduledLag(t *testing.T) {
	r := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	l := results.NewLatency()
	for i := range 20 {
		l.Add(time.Duration(i) * 250 * time.Millisecond)
	}
	sl := l.Finalize()
	r.ClosedLoop.ScheduledLag = &sl
	r.Replay.Speed = 1
	s, err := results.Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary = s
	var b strings.Builder
	WriteReplaySummary(&b, r)
	out := b.String()
	for _, want := range []string{
		"lag of every row behind its scheduled time (a user's rows: behind their request's release, which keeps no schedule)",
		fmt.Sprintf("  of the 20 rows released at their trace times (and missed), the schedule storage_health judges: p50 %.3f ms, p95 %.3f ms, max %.3f ms",
			sl.P50US/1000, sl.P95US/1000, sl.MaxUS/1000),
		fmt.Sprintf("  %s < 1000ms: %.3f ms (FAIL: lag of the rows released at their trace times", results.ScheduledCriterion, sl.P95US/1000),
		"  verdict: FAIL: lag of the rows released at their trace times",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
