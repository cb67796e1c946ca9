package results

import (
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
