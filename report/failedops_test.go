package report

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// withFailedWrites adds to d a Tier-1 Write cell of n failed operations
// (no operation succeeded: a tier whose writes all failed), busy 0.5 s,
// and its errors.
func withFailedWrites(d *schema.Result, n int64) {
	d.Cells = append(d.Cells, schema.Cell{Tier: "Tier-1", Op: "Write", Phase: "Prefill", Backend: "ram", FailedOps: n, BusyS: 0.5})
	d.Tiers = results.TierTotals(d.Cells, time.Duration(d.WallS*float64(time.Second)))
	d.Errors = schema.ErrorStats{Count: n, First: []string{"Write Tier-1 Prefill \"k\": injected"}}
	d.Complete = false
}

// TestMergeRanksFailedOps: the ranks' failed operations add up in the
// merged cell and tier, and a tier whose operations all failed on every
// rank stays in the merged document, with its busy time, and moves no
// bytes there.
func TestMergeRanksFailedOps(t *testing.T) {
	r0, r1 := rankPair(t, 0)
	withFailedWrites(r0, 2)
	withFailedWrites(r1, 1)
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	var cell *schema.Cell
	for i := range m.Cells {
		if m.Cells[i].Tier == "Tier-1" {
			cell = &m.Cells[i]
		}
	}
	if cell == nil || cell.FailedOps != 3 || cell.Ops != 0 {
		t.Errorf("merged Tier-1 cell %+v; want 3 failed operations, none done", cell)
	}
	var tier *schema.TierTotals
	for i := range m.Tiers {
		switch m.Tiers[i].Tier {
		case "Tier-1":
			tier = &m.Tiers[i]
		case "Tier-2":
			if m.Tiers[i].FailedOps != 0 {
				t.Errorf("Tier-2: %d failed operations, want none", m.Tiers[i].FailedOps)
			}
		}
	}
	if tier == nil || tier.FailedOps != 3 || tier.WriteOps != 0 || tier.WriteBytes != 0 || tier.BusyS != 0.5 {
		t.Errorf("merged Tier-1 totals %+v; want 3 failed operations, no write or byte, busy 0.5 s", tier)
	}
}

// TestReplaySummaryFailedOps: kvreplay's summary says which tier's
// operations failed, beside the errors.
func TestReplaySummaryFailedOps(t *testing.T) {
	r := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	withFailedWrites(r, 2)
	var b strings.Builder
	WriteReplaySummary(&b, r)
	if out := b.String(); !strings.Contains(out, "failed operations by tier (in no figure above but busy s): Tier-1 2\n") {
		t.Errorf("summary:\n%s\nwant Tier-1's 2 failed operations said", out)
	}
}
