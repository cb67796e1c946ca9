package trace_test

import (
	"maps"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Tests written from mutation testing: kvtrace inspect's figures (start,
// span, cold reads, size mismatches, Evict pairs and moves, delete rows,
// object size quantiles) each changed under a one-token change of
// summary.go without a test failing.

// TestSummaryFigures: a hand-made trace whose every figure is counted
// here by hand.
func TestSummaryFigures(t *testing.T) {
	r := func(sec int, op schema.Op, tier schema.Tier, key string, size int64, ph schema.Phase) schema.Record {
		return schema.Record{Time: time.Duration(sec) * time.Second, Op: op, Tier: tier, Key: []byte(key), Size: size, Phase: ph, Request: 1}
	}
	const (
		rd, wr, del   = schema.OpRead, schema.OpWrite, schema.OpDelete
		t0, t1, t2    = schema.TierGPU, schema.TierCPU, schema.TierNVMe
		pre, dec, evi = schema.PhasePrefill, schema.PhaseDecode, schema.PhaseEvict
	)
	recs := []schema.Record{
		r(2, wr, t0, "a", 100, pre),
		r(1, rd, t2, "c", 300, dec), // cold, and the earliest row
		r(3, rd, t2, "c", 300, dec), // cold again: one key
		r(4, rd, t0, "a", 100, evi), // a pair, adjacent: Tier-0 -> Tier-1
		r(4, wr, t1, "a", 100, evi),
		r(5, rd, t2, "c", 300, evi), // cold; a pair, not adjacent: Tier-2 -> Tier-1
		r(5, wr, t1, "b", 200, pre),
		r(6, wr, t1, "c", 300, evi),
		r(7, rd, t2, "b", 250, evi), // b's size differs: one key mismatched
		r(7, rd, t2, "b", 250, evi), // a second Evict read before a write: unpaired
		r(8, del, t1, "b", 250, dec),
		r(8, wr, t2, "d", 400, evi), // an Evict write without its read: unpaired
	}
	z := trace.NewSummarizer()
	for i := range recs {
		z.Add(&recs[i])
	}
	s := z.Summary()
	if s.Rows != 12 || s.StartS != 1 || s.EndS != 8 || s.SpanS != 7 || s.Objects != 4 {
		t.Errorf("rows %d, start %g, end %g, span %g, objects %d; want 12, 1, 8, 7, 4", s.Rows, s.StartS, s.EndS, s.SpanS, s.Objects)
	}
	if s.ColdReads != 3 || s.ColdReadKeys != 1 || s.SizeMismatchKeys != 1 || s.Totals.DeleteRows != 1 {
		t.Errorf("cold reads %d of %d keys, %d keys of mismatched sizes, %d delete rows; want 3, 1, 1, 1", s.ColdReads, s.ColdReadKeys, s.SizeMismatchKeys, s.Totals.DeleteRows)
	}
	e := s.Evict
	if e.Pairs != 2 || e.Adjacent != 1 || e.NonAdjacent != 1 || e.UnpairedReads != 2 || e.UnpairedWrites != 1 {
		t.Errorf("evict %+v; want 2 pairs (1 adjacent), 2 unpaired reads, 1 unpaired write", e)
	}
	if want := map[string]int64{"Tier-0->Tier-1": 1, "Tier-2->Tier-1": 1}; !maps.Equal(e.Moves, want) {
		t.Errorf("moves %v, want %v", e.Moves, want)
	}
	if o := s.ObjectSize; o.Min != 100 || o.P50 != 200 || o.Max != 400 {
		t.Errorf("object sizes %+v; want min 100, p50 200 (nearest rank), max 400", o)
	}
}

// TestSummaryP95: the p95 of 20 object sizes is the 19th (nearest rank).
func TestSummaryP95(t *testing.T) {
	z := trace.NewSummarizer()
	for i := range 20 {
		z.Add(&schema.Record{Op: schema.OpWrite, Tier: schema.TierCPU, Key: []byte{'k', byte('a' + i)}, Size: int64(i + 1)})
	}
	if p := z.Summary().ObjectSize.P95; p != 19 {
		t.Errorf("p95 %d, want 19", p)
	}
}
