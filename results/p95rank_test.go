package results

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestWriteP95OneInElevenFails: of 11 Tier-2 writes, one took 600 ms:
// 9.1 % of the writes are past the 500 ms limit, so their P95 is too, and
// storage_health fails. A p95 read at the rank rounded to the nearest
// (the 10th write) passed it.
func TestWriteP95OneInElevenFails(t *testing.T) {
	c := NewCell()
	for range 10 {
		c.Add(time.Millisecond, time.Millisecond, 4096, 4096)
	}
	c.Add(600*time.Millisecond, 600*time.Millisecond, 4096, 4096)
	r := &schema.Result{Complete: true, WallS: 1,
		Cells: []schema.Cell{c.Finalize(schema.TierNVMe.String(), schema.OpWrite.String(), schema.PhasePrefill.String(), "nvme", time.Second)}}
	s, err := Summarize(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.StorageWriteP95MS < 500 || s.StorageHealth.OverallStatus != HealthFail {
		t.Errorf("write p95 %g ms, storage_health %s; want at least 500 ms, FAIL", s.StorageWriteP95MS, s.StorageHealth.OverallStatus)
	}
}
