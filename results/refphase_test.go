package results

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestRefPhaseLatency: the figures under the reference's names (the
// storage read and write P95s, their device P95s, the CPU RAM P95, and
// storage_health's criteria on them) leave the Evict phase out, as
// kv-cache.py's do: it times a demotion's copy (cache.py _demote_entry)
// but keeps no sample of it, so its storage write P95 is of new objects'
// writes only. With a CPU tier (MLPerf Option 2) nearly every Tier-2 write
// is a demotion: here 600 ms ones beside 5 ms writes of new objects, and
// 900 ms Tier-1 copies beside 2 ms reads. The demotions' own figures stay
// in the cells and under DeviceEvictOf and TierEvictLatency. A run whose
// Tier-2 writes are all demotions has no write P95 and no write
// criterion, as the reference has none.
func TestRefPhaseLatency(t *testing.T) {
	ms := time.Millisecond
	var dev Device
	for range 20 {
		dev.Add(schema.TierNVMe, schema.OpWrite, schema.PhasePrefill, 4*ms)
		dev.Add(schema.TierNVMe, schema.OpWrite, schema.PhaseEvict, 550*ms)
	}
	cells := []schema.Cell{
		cell("Tier-2", "Write", "Prefill", "nvme", 20, 5*ms, 1<<20),
		cell("Tier-2", "Write", "Evict", "nvme", 200, 600*ms, 1<<30),
		cell("Tier-1", "Read", "Decode", "ram", 20, 2*ms, 1<<20),
		cell("Tier-1", "Read", "Evict", "ram", 200, 900*ms, 1<<30),
		cell("Tier-1", "Write", "Evict", "ram", 200, 900*ms, 1<<30),
	}
	r := &schema.Result{WallS: 10, Complete: true, Cells: cells, Tiers: TierTotals(cells, 10*time.Second), Device: dev.Finalize()}
	s, err := Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.StorageWriteP95MS < 4.9 || s.StorageWriteP95MS > 5.1 || s.StorageWriteDeviceP95MS < 3.9 || s.StorageWriteDeviceP95MS > 4.1 || s.CPUP95MS > 2.1 {
		t.Errorf("write p95 %v ms, device %v ms, cpu %v ms: want 5, 4 and 2 (no Evict)", s.StorageWriteP95MS, s.StorageWriteDeviceP95MS, s.CPUP95MS)
	}
	if h := s.StorageHealth; h.OverallStatus != HealthPass {
		t.Errorf("storage_health %s %q: want PASS, the demotions judged by nothing", h.OverallStatus, h.Reasons)
	}
	// The bytes still count every phase (the reference's byte counters
	// count demotions since mlcommons/storage #408).
	if want := float64(1<<20+1<<30) / GB; s.TierStorageKVBytesWrittenGB != want {
		t.Errorf("Tier-2 bytes written %v GB, want %v (demotions included)", s.TierStorageKVBytesWrittenGB, want)
	}
	ev, ok, err := DeviceEvictOf(r.Device, schema.TierNVMe, schema.OpWrite)
	if err != nil || !ok || ev.Count != 20 || ev.P95US < 540e3 {
		t.Errorf("demotions' device latency %+v %v %v", ev, ok, err)
	}
	if el, err := TierEvictLatency(cells, schema.TierNVMe, schema.OpWrite); err != nil || el.Count != 200 || el.P95US < 590e3 {
		t.Errorf("demotions' latency %+v %v", el, err)
	}
	if tl, err := TierOpLatency(cells, schema.TierNVMe, schema.OpWrite, false); err != nil || tl.Count != 20 {
		t.Errorf("Tier-2 write latency %+v %v: want the 20 new objects' writes", tl, err)
	}

	// Only demotions reached Tier-2: no write figure, no write criterion.
	only := []schema.Cell{cells[1]}
	r = &schema.Result{WallS: 10, Complete: true, Cells: only, Tiers: TierTotals(only, 10*time.Second), Device: r.Device[1:]}
	if r.Device[0].Phase != "Evict" {
		t.Fatalf("test setup: device %+v", r.Device)
	}
	if s, err = Summarize(r, nil); err != nil {
		t.Fatal(err)
	}
	if s.StorageWriteP95MS != 0 || s.StorageWriteDeviceP95MS != 0 {
		t.Errorf("demotions only: write p95 %v, device %v: want none", s.StorageWriteP95MS, s.StorageWriteDeviceP95MS)
	}
	for _, c := range s.StorageHealth.Criteria {
		if strings.Contains(c.Name, "Write") {
			t.Errorf("demotions only: criterion %q", c.Name)
		}
	}
	// kvreport judges the document again (Health): the same criteria, not
	// a write criterion of the demotions' cells with a figure of 0.
	if h := Health(r, &s); h.TotalCount != s.StorageHealth.TotalCount || h.TotalCount != 0 {
		t.Errorf("demotions only, judged again: %d criteria %+v, the summary's %d", h.TotalCount, h.Criteria, s.StorageHealth.TotalCount)
	}

	// A document written before phases: a device entry holds every
	// phase. Where its cells have no Evict phase of the tier and
	// operation, the entry is of the reference's phases alone, and
	// counts; where they have, it mixes in the demotions', and the figure
	// is not known (the summary then takes the cells' latency from
	// submission, of the reference's phases).
	old := []schema.DeviceLatency{{Tier: "Tier-2", Op: "Write", Latency: ev}}
	if l, ok, err := DeviceOf(old, cells[:1], schema.TierNVMe, schema.OpWrite); err != nil || !ok || l.Count != 20 {
		t.Errorf("an older document's device latency, no demotion: %+v %v %v", l, ok, err)
	}
	if l, ok, err := DeviceOf(old, cells, schema.TierNVMe, schema.OpWrite); err != nil || ok {
		t.Errorf("an older document's device latency, demotions in it: %+v %v %v; want none", l, ok, err)
	}
	r = &schema.Result{WallS: 10, Complete: true, Cells: cells, Tiers: TierTotals(cells, 10*time.Second), Device: old}
	if s, err = Summarize(r, nil); err != nil {
		t.Fatal(err)
	}
	if s.StorageWriteDeviceP95MS < 4.9 || s.StorageWriteDeviceP95MS > 5.1 {
		t.Errorf("an older document with demotions: write device p95 %v ms, want the new objects' 5 ms from submission", s.StorageWriteDeviceP95MS)
	}
	var merged Device
	if err := merged.MergeAll(old, dev.Finalize()); err != nil {
		t.Fatal(err)
	}
	if f := merged.Finalize(); len(f) != 3 || f[2].Phase != "" || f[0].Phase != "Prefill" || f[1].Phase != "Evict" {
		t.Errorf("merged with an older document: %+v", f)
	}
}
