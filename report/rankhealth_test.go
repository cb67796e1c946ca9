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

// TestMergeRankHealth: the merged document says each rank's own status in
// rank_health, read back from JSON; a merge of merged documents keeps
// every rank's, so rank 0's failure still fails a merge of merges by the
// field. A merged document written before rank_health (its failure only
// in its warnings) leaves the new merge without the field, and its
// warnings still fail it.
func TestMergeRankHealth(t *testing.T) {
	rank := func(r int, late int64) *schema.Result {
		d := slaRank(t, r, 40, late)
		d.Ranks = 4
		return d
	}
	// Rank 0 fails alone (3 of 40 late), 1-3 pass (1 of 40).
	lo := mustMerge(t, rank(1, 1), rank(0, 3))
	want := []schema.RankStatus{{Rank: 0, Status: results.HealthFail}, {Rank: 1, Status: results.HealthPass}}
	if len(lo.RankHealth) != 2 || lo.RankHealth[0].Rank != 0 || lo.RankHealth[0].Status != results.HealthFail ||
		len(lo.RankHealth[0].Reasons) == 0 || lo.RankHealth[1].Rank != 1 || lo.RankHealth[1].Status != results.HealthPass || lo.RankHealth[1].Reasons != nil {
		t.Fatalf("rank_health %+v, want %+v with rank 0's reasons", lo.RankHealth, want)
	}
	raw, err := json.Marshal(lo)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"rank_health":[{"rank":0,"status":"FAIL","reasons":["interactive p95 200 ms`) {
		t.Errorf("rank_health in JSON: %.400s", raw[strings.Index(string(raw), "rank_health"):])
	}
	var back schema.Result
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	hi := mustMerge(t, rank(2, 1), rank(3, 1))
	all := mustMerge(t, &back, hi)
	if len(all.RankHealth) != 4 {
		t.Fatalf("merge of merges: rank_health %+v, want 4 ranks", all.RankHealth)
	}
	for i, s := range all.RankHealth {
		if s.Rank != i || (s.Status == results.HealthFail) != (i == 0) {
			t.Errorf("merge of merges: rank_health[%d] %+v", i, s)
		}
	}
	// The field decides: with rank 0's warning removed, the merge of
	// merges still fails, naming rank 0.
	all.Warnings = nil
	if h := results.Health(all, &all.Summary); h.OverallStatus != results.HealthFail || !strings.Contains(strings.Join(h.Reasons, "; "), "rank 0: STORAGE_HEALTH FAIL") {
		t.Errorf("merge of merges by rank_health: %s %q", h.OverallStatus, h.Reasons)
	}

	// A merged document of before rank_health: its warnings carry rank
	// 0's failure; the new merge has no rank_health, and fails by them.
	old := back
	old.RankHealth = nil
	mixed := mustMerge(t, &old, hi)
	if mixed.RankHealth != nil {
		t.Errorf("merge with an older merged document: rank_health %+v, want none", mixed.RankHealth)
	}
	if st := mixed.Summary.StorageHealth.OverallStatus; st != results.HealthFail {
		t.Errorf("merge with an older merged document: %s %q", st, mixed.Summary.StorageHealth.Reasons)
	}
}
