package results

import (
	"errors"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestCellFailedOps: a cell's failed operations are counted apart from
// its operations, with no bytes or latency; they add up in a merge, a
// negative count is refused, and a tier whose operations all failed is
// still a tier, with them.
func TestCellFailedOps(t *testing.T) {
	c := NewCell()
	c.Add(time.Millisecond, time.Millisecond, 100, 4096)
	c.AddFailed()
	d := c.Finalize("Tier-2", "Write", "Prefill", "nvme", time.Second)
	if d.Ops != 1 || d.FailedOps != 1 || d.Latency.Count != 1 || d.LogicalBytes != 100 {
		t.Fatalf("cell %+v; want 1 op of 100 bytes, 1 failed", d)
	}
	m := NewCell()
	if err := m.MergeAll([]schema.Cell{d, d}); err != nil {
		t.Fatal(err)
	}
	if m.Ops != 2 || m.Failed != 2 {
		t.Errorf("merged %d ops, %d failed; want 2 and 2", m.Ops, m.Failed)
	}
	d.FailedOps = -1
	if err := NewCell().Merge(d); !errors.Is(err, ErrInconsistent) {
		t.Errorf("a cell of -1 failed operations merged: %v", err)
	}
	failed := schema.Cell{Tier: "Tier-1", Op: "Read", Phase: "Decode", Backend: "ram", FailedOps: 2, BusyS: 0.25}
	got := TierTotals([]schema.Cell{failed}, time.Second)
	if len(got) != 1 || got[0].Tier != "Tier-1" || got[0].FailedOps != 2 || got[0].ReadOps != 0 || got[0].BusyS != 0.25 {
		t.Errorf("TierTotals = %+v; want Tier-1 with its 2 failed operations", got)
	}
}
