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
			d, ok := results.DeviceOf(res.Device, schema.TierNVMe, op)
			if !ok || d.Count != 10 {
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
