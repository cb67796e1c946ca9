package replay_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestMisnamedReadCountsWhereItRan: a trace that writes K on Tier-1 and
// reads it on Tier-2 with no Evict pair between (a broken or hand-cut
// trace) has its read run where K is, on the RAM tier, and counted there:
// Tier-2's figures hold no read, so its bandwidth is not RAM's. Before,
// the read was counted as Tier-2's.
func TestMisnamedReadCountsWhereItRan(t *testing.T) {
	recs := []schema.Record{
		rec(0, schema.OpWrite, 64<<10, schema.TierCPU, "K", schema.PhasePrefill, 1),
		rec(time.Millisecond, schema.OpRead, 64<<10, schema.TierNVMe, "K", schema.PhaseDecode, 2),
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", "disk"}
	cfg.Speed = 0
	ram, disk := fault.Record(newRAM(t, 16<<20)), fault.Record(newRAM(t, 16<<20))
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": ram, "disk": disk})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range disk.Log() {
		if c.Op&(fault.OpRead|fault.OpWrite) != 0 {
			t.Errorf("Tier-2's backend did %s %s: K is on Tier-1", c.Op, c.Key)
		}
	}
	reads := map[string]int64{}
	for _, c := range res.Cells {
		if c.Op == "Read" {
			reads[c.Tier] += c.Ops
		}
	}
	if reads["Tier-1"] != 1 || reads["Tier-2"] != 0 {
		t.Errorf("reads by tier %v; want the one read on Tier-1, where it ran", reads)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "1 reads named a tier their object was not on") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
