package replay_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// slowOpen is a backend whose opens take d: a file system slow to create
// and open files.
type slowOpen struct {
	backend.Backend
	d time.Duration
}

func (b slowOpen) Open(key string, size int64, create bool) (backend.Object, error) {
	time.Sleep(b.d)
	return b.Backend.Open(key, size, create)
}

// TestDeviceLatency: a replay measures each Tier-2 operation's device
// span, its I/Os alone, apart from its latency from submission, which
// adds opening its file. On the bubble's clock, with I/Os of 20 ms and
// opens of 5 ms, a write's device span is 20 ms and its latency 25 ms.
func TestDeviceLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const io, open = 20 * time.Millisecond, 5 * time.Millisecond
		var recs []schema.Record
		for i := range 10 {
			key := "k" + string(rune('a'+i))
			recs = append(recs, rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, key, schema.PhasePrefill, uint64(i+1)),
				rec(0, schema.OpRead, 64<<10, schema.TierNVMe, key, schema.PhaseDecode, uint64(i+1)))
		}
		cfg := closedConfig()
		cfg.ClosedLoop = false
		cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
		b := slowOpen{Backend: fault.Delay(newRAM(t, 64<<20), io), d: open}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range []schema.Op{schema.OpRead, schema.OpWrite} {
			d, ok, err := results.DeviceOf(res.Device, res.Cells, schema.TierNVMe, op)
			if err != nil || !ok || d.Count != 10 {
				t.Fatalf("%s: device latency %+v (of %+v), want 10 spans", op, d, res.Device)
			}
			if ms := d.P95US / 1000; ms < 20 || ms > 20.1 {
				t.Errorf("%s: device p95 %v ms, want the I/O's 20 ms", op, ms)
			}
		}
		wl, err := results.TierOpLatency(res.Cells, schema.TierNVMe, schema.OpWrite, false)
		if err != nil {
			t.Fatal(err)
		}
		if ms := wl.P50US / 1000; ms < 25 || ms > 25.1 {
			t.Errorf("write latency from submission p50 %v ms, want the open's 5 and the I/O's 20", ms)
		}
		s := res.Summary
		if s.StorageWriteDeviceP95MS >= s.StorageWriteP95MS || s.StorageReadDeviceP95MS > s.StorageReadP95MS ||
			s.StorageReadDeviceP95MS < 20 || s.StorageWriteDeviceP95MS < 20 {
			t.Errorf("summary: device read %v write %v, from submission read %v write %v", s.StorageReadDeviceP95MS,
				s.StorageWriteDeviceP95MS, s.StorageReadP95MS, s.StorageWriteP95MS)
		}
	})
}

// TestDeviceLatencyPhases: a replay keeps the device spans of demotions
// (an Evict Read on Tier-1 and an Evict Write of the key on Tier-2) apart
// from those of new objects' writes: the reference's device latency, the
// summary's storage_write_device_*, is of the new objects' 4 writes, and
// the demotions' 3 are under the Evict phase (results.DeviceEvictOf).
func TestDeviceLatencyPhases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var recs []schema.Record
		for i := range 3 {
			key := "d" + string(rune('a'+i))
			recs = append(recs, rec(0, schema.OpWrite, 64<<10, schema.TierCPU, key, schema.PhasePrefill, uint64(i+1)),
				rec(time.Millisecond, schema.OpRead, 64<<10, schema.TierCPU, key, schema.PhaseEvict, uint64(i+1)),
				rec(time.Millisecond, schema.OpWrite, 64<<10, schema.TierNVMe, key, schema.PhaseEvict, uint64(i+1)))
		}
		for i := range 4 {
			recs = append(recs, rec(2*time.Millisecond, schema.OpWrite, 64<<10, schema.TierNVMe, "n"+string(rune('a'+i)), schema.PhasePrefill, uint64(10+i)))
		}
		cfg := closedConfig()
		cfg.ClosedLoop = false
		cfg.TierMap = [schema.NumTiers]string{"", "ram", "ram2"}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{
			"ram": newRAM(t, 64<<20), "ram2": fault.Delay(newRAM(t, 64<<20), 3*time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		ref, ok, err := results.DeviceOf(res.Device, res.Cells, schema.TierNVMe, schema.OpWrite)
		if err != nil || !ok || ref.Count != 4 {
			t.Errorf("new objects' device latency %+v %v %v, want 4 spans (of %+v)", ref, ok, err, res.Device)
		}
		ev, ok, err := results.DeviceEvictOf(res.Device, schema.TierNVMe, schema.OpWrite)
		if err != nil || !ok || ev.Count != 3 {
			t.Errorf("demotions' device latency %+v %v %v, want 3 spans (of %+v)", ev, ok, err, res.Device)
		}
		if s := res.Summary; s.StorageWriteDeviceP95MS < 3 {
			t.Errorf("summary write device p95 %v ms, want the new objects' 3 ms", s.StorageWriteDeviceP95MS)
		}
	})
}
