package results

import (
	"errors"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// TestDevice: device spans add per tier and operation, two documents
// merge into what one process adding every span gives, and the summary's
// device figures are the Tier-2 device spans where a document has them
// (the cells' latency from submission, which adds the files' open and
// close, only where it has not).
func TestDevice(t *testing.T) {
	ms := time.Millisecond
	var a, b, all Device
	for i := range 20 {
		d := time.Duration(i+1) * ms
		a.Add(schema.TierNVMe, schema.OpRead, schema.PhaseDecode, d)
		all.Add(schema.TierNVMe, schema.OpRead, schema.PhaseDecode, d)
		b.Add(schema.TierNVMe, schema.OpWrite, schema.PhasePrefill, 3*d)
		all.Add(schema.TierNVMe, schema.OpWrite, schema.PhasePrefill, 3*d)
		b.Add(schema.TierNVMe, schema.OpRead, schema.PhaseDecode, 2*d)
		all.Add(schema.TierNVMe, schema.OpRead, schema.PhaseDecode, 2*d)
	}
	a.Add(schema.Tier(9), schema.OpRead, schema.PhaseDecode, ms) // no such tier: ignored
	a.Add(schema.TierNVMe, schema.OpRead, schema.Phase(7), ms)   // no such phase: ignored
	var merged Device
	if err := merged.MergeAll(a.Finalize(), b.Finalize()); err != nil {
		t.Fatal(err)
	}
	got, want := merged.Finalize(), all.Finalize()
	if len(got) != 2 || len(want) != 2 {
		t.Fatalf("%d and %d entries, want 2", len(got), len(want))
	}
	for i := range got {
		if got[i].Tier != want[i].Tier || got[i].Op != want[i].Op || got[i].Latency.Count != want[i].Latency.Count ||
			got[i].Latency.P95US != want[i].Latency.P95US || got[i].Latency.Histogram != want[i].Latency.Histogram {
			t.Errorf("entry %d: merged %+v, added %+v", i, got[i], want[i])
		}
	}
	if got[0].Op != "Read" || got[0].Latency.Count != 40 || got[1].Op != "Write" || got[1].Latency.Count != 20 {
		t.Errorf("entries %+v", got)
	}
	var bad Device
	if err := bad.MergeAll([]schema.DeviceLatency{{Tier: "Tier-7", Op: "Read"}}); err == nil {
		t.Error("an unknown tier merged")
	}
	if err := bad.MergeAll([]schema.DeviceLatency{{Tier: "Tier-2", Op: "Read", Phase: "Warmup"}}); err == nil {
		t.Error("an unknown phase merged")
	}
	if err := bad.MergeAll([]schema.DeviceLatency{{Tier: "Tier-2", Op: "Read", Latency: schema.Latency{Count: 5, Histogram: "!"}}}); !errors.Is(err, hist.ErrCorrupt) {
		t.Errorf("a damaged histogram: %v", err)
	}

	// The summary takes the device spans, not the cells' latency.
	cells := []schema.Cell{cell("Tier-2", "Read", "Decode", "nvme", 20, 90*ms, 1<<20), cell("Tier-2", "Write", "Prefill", "nvme", 20, 95*ms, 1<<20)}
	r := &schema.Result{WallS: 1, Complete: true, Cells: cells, Tiers: TierTotals(cells, time.Second), Device: all.Finalize()}
	s, err := Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd, _, err := DeviceOf(r.Device, r.Cells, schema.TierNVMe, schema.OpRead)
	if err != nil {
		t.Fatal(err)
	}
	if s.StorageReadDeviceP95MS != rd.P95US/1000 || s.StorageReadDeviceP95MS > 45 || s.StorageReadP95MS < 89 {
		t.Errorf("device read p95 %v (want the spans' %v), total %v", s.StorageReadDeviceP95MS, rd.P95US/1000, s.StorageReadP95MS)
	}
	r.Device = nil
	if s, _ = Summarize(r, nil); s.StorageReadDeviceP95MS != s.StorageReadP95MS {
		t.Errorf("without device spans: device %v, total %v", s.StorageReadDeviceP95MS, s.StorageReadP95MS)
	}
}
