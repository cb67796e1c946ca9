package results

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestRankFailures: a merged document's warning naming a rank whose own
// storage_health failed fails the merge, whatever its pooled criteria; a
// rank's INCOMPLETE or NO_DATA does not (an incomplete rank makes the
// merge incomplete already), nor does such a line in one rank's document.
func TestRankFailures(t *testing.T) {
	fail := "rank 0: " + RankHealthWarning(schema.StorageHealth{OverallStatus: HealthFail, Reasons: []string{"interactive p95 200 ms > 50 ms target"}})
	if fail != "rank 0: STORAGE_HEALTH FAIL of this rank alone: interactive p95 200 ms > 50 ms target" {
		t.Fatalf("warning %q", fail)
	}
	noData := "rank 1: " + RankHealthWarning(schema.StorageHealth{OverallStatus: HealthNoData, Reasons: []string{"nothing the criteria judge ran"}})
	for _, tt := range []struct {
		ranks    []int
		warnings []string
		want     int
	}{
		{[]int{0, 1}, []string{"all ranks: SCALED RUN: ...", fail}, 1},
		{[]int{0, 1}, []string{noData}, 0},
		{nil, []string{fail}, 0},
		{[]int{0}, []string{fail}, 0},
	} {
		r := &schema.Result{MergedRanks: tt.ranks, Warnings: tt.warnings, Complete: true}
		if got := RankFailures(r); len(got) != tt.want {
			t.Errorf("ranks %v warnings %q: %q", tt.ranks, tt.warnings, got)
		}
		h := Health(r, &schema.Summary{})
		if want := map[bool]schema.HealthStatus{true: HealthFail, false: HealthNoData}[tt.want > 0]; h.OverallStatus != want {
			t.Errorf("ranks %v warnings %q: %s, want %s", tt.ranks, tt.warnings, h.OverallStatus, want)
		}
	}
}

// TestRankFailuresFromRankHealth: a merged document's RankHealth decides
// which ranks failed on their own, whatever its warnings say: a FAIL fails
// the merge with the rank and its reasons, a PASS, INCOMPLETE or NO_DATA
// does not, and a warning's text (written by hand, or copied from another
// document) is not read once the field is there. Without the field (a
// merged document written before it) the warnings are read.
func TestRankFailuresFromRankHealth(t *testing.T) {
	failText := "rank 1: " + RankHealthWarning(schema.StorageHealth{OverallStatus: HealthFail, Reasons: []string{"copied"}})
	for _, tt := range []struct {
		name     string
		health   []schema.RankStatus
		warnings []string
		want     []string
	}{
		{"a rank failed", []schema.RankStatus{{Rank: 0, Status: HealthPass}, {Rank: 1, Status: HealthFail, Reasons: []string{"a", "b"}}},
			nil, []string{"rank 1: STORAGE_HEALTH FAIL of this rank alone: a; b"}},
		{"two failed", []schema.RankStatus{{Rank: 2, Status: HealthFail, Reasons: []string{"x"}}, {Rank: 5, Status: HealthFail, Reasons: []string{"y"}}},
			nil, []string{"rank 2: STORAGE_HEALTH FAIL of this rank alone: x", "rank 5: STORAGE_HEALTH FAIL of this rank alone: y"}},
		{"incomplete and no data", []schema.RankStatus{{Rank: 0, Status: HealthIncomplete}, {Rank: 1, Status: HealthNoData}}, nil, nil},
		{"the field, not the text", []schema.RankStatus{{Rank: 0, Status: HealthPass}, {Rank: 1, Status: HealthPass}}, []string{failText}, nil},
		{"no field: the text", nil, []string{failText}, []string{failText}},
	} {
		r := &schema.Result{MergedRanks: []int{0, 1, 2, 5}, RankHealth: tt.health, Warnings: tt.warnings, Complete: true}
		got := RankFailures(r)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if h := Health(r, &schema.Summary{}); (h.OverallStatus == HealthFail) != (len(tt.want) > 0) {
			t.Errorf("%s: storage_health %s %q", tt.name, h.OverallStatus, h.Reasons)
		}
	}
}
