package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// slaRank is rank r of 2 of a run at --speed 1 whose interactive requests
// took 10 ms, but late of them 200 ms (the target is 50 ms).
func slaRank(t *testing.T, r int, n, late int64) *schema.Result {
	t.Helper()
	h := hist.New()
	for i := range n {
		v := 10 * time.Millisecond
		if i < late {
			v = 200 * time.Millisecond
		}
		h.Record(v)
	}
	share, met := results.Compliance(n-late, n)
	d := &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion, Tool: KindKVReplay},
		Rank: r, Ranks: 2, Started: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), WallS: 10, Complete: true, SizeScale: 1,
		Host: schema.Host{Hostname: "h" + string(rune('0'+r))}, Replay: schema.ReplayStats{Speed: 1}}
	d.Requests = schema.RequestStats{Count: n, Latency: h.Latency(), ByQoS: []schema.QoSStats{{QoS: "interactive", Count: n,
		TargetP95MS: 50, WithinTarget: n - late, Compliance: share, Met: met, Latency: h.Latency()}}}
	s, err := results.Summarize(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Summary = s
	return d
}

// TestMergeKeepsRankFailure: kvreport merge of two ranks, rank 0 FAIL on
// its own (interactive SLA: 92.5 % within 50 ms), rank 1 PASS, pooled
// 97.5 % within: the merged storage_health was PASS 1/1 and nothing said
// rank 0 had failed. The merged document's warnings name rank 0 with its
// reasons, and a merged PASS requires every rank's: the merge is FAIL, its
// pooled criterion still passed (1/1), the reason naming rank 0; kvreport
// judges the merged document so again when it reads it, and shows both.
func TestMergeKeepsRankFailure(t *testing.T) {
	r0, r1 := slaRank(t, 0, 40, 3), slaRank(t, 1, 160, 2)
	if st := r0.Summary.StorageHealth.OverallStatus; st != results.HealthFail {
		t.Fatalf("test setup: rank 0 %s", st)
	}
	if st := r1.Summary.StorageHealth.OverallStatus; st != results.HealthPass {
		t.Fatalf("test setup: rank 1 %s", st)
	}
	m := mustMerge(t, r0, r1)
	q := m.Requests.ByQoS[0]
	if !q.Met || q.WithinTarget != 195 {
		t.Fatalf("pooled: %+v", q)
	}
	want := "rank 0: STORAGE_HEALTH FAIL of this rank alone: interactive p95 200 ms > 50 ms target (92.5 % of 40 requests within it, 95 % needed)"
	var found bool
	for _, w := range m.Warnings {
		found = found || w == want
		if strings.Contains(w, "rank 1") {
			t.Errorf("a warning of rank 1, which passed: %q", w)
		}
	}
	if !found {
		t.Errorf("merged warnings %q: want %q", m.Warnings, want)
	}
	h := m.Summary.StorageHealth
	if h.OverallStatus != results.HealthFail || h.PassedCount != 1 || h.TotalCount != 1 || !strings.Contains(strings.Join(h.Reasons, "; "), want) {
		t.Errorf("merged storage_health %s %d/%d %q: want FAIL 1/1 naming rank 0", h.OverallStatus, h.PassedCount, h.TotalCount, h.Reasons)
	}
	// Read back (kvreport all.json), judged again by today's rule.
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back schema.Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if h := results.Health(&back, &back.Summary); h.OverallStatus != results.HealthFail {
		t.Errorf("the merged document read back: %s", h.OverallStatus)
	}
	rep, err := Build([]*Doc{{Path: "all.json", Kind: KindKVReplay, Label: "all", Result: &back}}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "json", "html"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "rank 0: STORAGE_HEALTH FAIL of this rank alone: interactive p95 200 ms") {
			t.Errorf("%s: rank 0's failure unsaid:\n%.3000s", f, b.String())
		}
	}

	// Both ranks passing: the merge passes, and says nothing of them.
	m = mustMerge(t, slaRank(t, 0, 40, 1), r1)
	if st := m.Summary.StorageHealth.OverallStatus; st != results.HealthPass {
		t.Errorf("two passing ranks merged: %s %q", st, m.Summary.StorageHealth.Reasons)
	}
	for _, w := range m.Warnings {
		if strings.Contains(w, "STORAGE_HEALTH") {
			t.Errorf("two passing ranks merged: %q", w)
		}
	}
}
