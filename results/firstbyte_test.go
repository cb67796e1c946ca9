package results

import (
	"errors"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestCellFirstByte: a cell's times to first byte are rendered when it has
// any (and only then), merge exactly across documents, and a document
// claiming more of them than its operations is refused.
func TestCellFirstByte(t *testing.T) {
	a, b := NewCell(), NewCell()
	for i := range 4 {
		a.Add(10*time.Millisecond, 10*time.Millisecond, 100, 100)
		a.AddFirstByte(time.Duration(i+1) * time.Millisecond)
	}
	b.Add(10*time.Millisecond, 10*time.Millisecond, 100, 100)
	if s := b.Finalize("Tier-2", "Read", "Decode", "nvme", time.Second); s.FirstByte != nil {
		t.Fatalf("a cell without times to first byte renders %+v", s.FirstByte)
	}
	b.AddFirstByte(8 * time.Millisecond)
	m := NewCell()
	if err := m.MergeAll([]schema.Cell{
		a.Finalize("Tier-2", "Read", "Decode", "s3", time.Second),
		b.Finalize("Tier-2", "Read", "Decode", "s3", time.Second),
	}); err != nil {
		t.Fatal(err)
	}
	s := m.Finalize("Tier-2", "Read", "Decode", "s3", time.Second)
	if s.FirstByte == nil || s.FirstByte.Count != 5 || s.FirstByte.MinUS != 1000 || s.FirstByte.MaxUS < 7990 || s.FirstByte.MaxUS > 8010 {
		t.Fatalf("merged first byte %+v, want 5 values of 1 to 8 ms", s.FirstByte)
	}
	bad := a.Finalize("Tier-2", "Read", "Decode", "s3", time.Second)
	bad.Ops, bad.Latency, bad.FromSchedule = 1, b.Finalize("", "", "", "", 0).Latency, b.Finalize("", "", "", "", 0).FromSchedule
	if err := NewCell().Merge(bad); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("a cell of 1 op and 4 times to first byte: %v, want ErrInconsistent", err)
	}
}
