package report

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestMLPerfDeviceP95TodaysRule: a rank's device write p95 in the rule is
// of new objects' writes (the reference's phases), for a document written
// before device latency was kept by phase too: its one Tier-2 write entry
// mixes 600 ms demotions with 5 ms writes, its summary says 600 ms, and
// the rule takes the new objects' 5 ms from its cells (the entry not
// known), as today's summary does. The summary's figure was taken as it
// was, so old and new ranks were scored on two distributions.
func TestMLPerfDeviceP95TodaysRule(t *testing.T) {
	ms := time.Millisecond
	lat := func(n int, d time.Duration) schema.Latency {
		var l results.Latency
		for range n {
			l.Add(d)
		}
		return l.Finalize()
	}
	cell := func(phase string, n int, d time.Duration) schema.Cell {
		return schema.Cell{Tier: "Tier-2", Op: "Write", Phase: phase, Backend: "nvme", Ops: int64(n), LogicalBytes: int64(n) << 20,
			PhysicalBytes: int64(n) << 20, Latency: lat(n, d), FromSchedule: lat(n, d)}
	}
	cells := []schema.Cell{cell("Prefill", 20, 5*ms), cell("Evict", 200, 600*ms)}
	r := &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion, Tool: KindKVReplay},
		WallS: 10, Complete: true, Cells: cells, Tiers: results.TierTotals(cells, 10*time.Second),
		Device: []schema.DeviceLatency{{Tier: "Tier-2", Op: "Write", Latency: lat(220, 600*ms)}}}
	s, err := results.Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Summary = s
	r.Summary.StorageWriteDeviceP95MS = 600 // as the older kvreplay wrote it
	var rk MLPerfRank
	if err := kvreplayFigures(&rk, r); err != nil {
		t.Fatal(err)
	}
	if rk.DeviceWriteP95MS < 4.9 || rk.DeviceWriteP95MS > 5.1 {
		t.Errorf("rank device write p95 %v ms, want the new objects' 5 ms", rk.DeviceWriteP95MS)
	}
}
