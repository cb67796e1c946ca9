package replay

import (
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestShardUserMovesFollowTheObject: user a writes K; the Evict pair that
// demotes K rides in user b's request (the trace's LRU ran then); a reads
// K on Tier-2. Sharded by user on two ranks, with a and b on different
// ranks, a's rank takes the Evict pair, as rows outside requests (its
// closed loop releases them at their trace times), and b's rank leaves it:
// K is written, moved and read on one rank. Before, b's rank moved a K it
// never wrote (made cold) and a's rank read K on Tier-2 where it was not.
func TestShardUserMovesFollowTheObject(t *testing.T) {
	const ranks = 2
	a := uint64(1)
	b := a + 1
	for mix(b)%ranks == mix(a)%ranks {
		b++
	}
	row := func(op schema.Op, tier schema.Tier, ph schema.Phase, req, user uint64) schema.Record {
		return schema.Record{Op: op, Tier: tier, Key: []byte("K"), Phase: ph, Request: req, User: user}
	}
	trace := []schema.Record{
		row(schema.OpWrite, schema.TierCPU, schema.PhasePrefill, 1, a),
		row(schema.OpRead, schema.TierCPU, schema.PhaseEvict, 2, b),
		row(schema.OpWrite, schema.TierNVMe, schema.PhaseEvict, 2, b),
		row(schema.OpDelete, schema.TierNVMe, schema.PhaseEvict, 2, b),
		row(schema.OpRead, schema.TierNVMe, schema.PhaseDecode, 3, a),
	}
	got := map[int][]string{}
	for rank := range ranks {
		s := newSharder(&Config{Rank: rank, Ranks: ranks, Shard: ShardUser, ClosedLoop: true}, 1)
		for _, r := range trace {
			if s.mine(&r, 0) {
				got[rank] = append(got[rank], fmt.Sprintf("%s %s req %d user %d", r.Op, r.Tier, r.Request, r.User))
			}
		}
		if w := s.splitWarning(); w != "" {
			t.Errorf("rank %d: %q; want no row of another rank's object", rank, w)
		}
	}
	ra, rb := int(mix(a)%ranks), int(mix(b)%ranks)
	want := []string{
		fmt.Sprintf("Write Tier-1 req 1 user %d", a),
		"Read Tier-1 req 0 user 0", "Write Tier-2 req 0 user 0", "Delete Tier-2 req 0 user 0",
		fmt.Sprintf("Read Tier-2 req 3 user %d", a),
	}
	if fmt.Sprint(got[ra]) != fmt.Sprint(want) || len(got[rb]) != 0 {
		t.Errorf("a's rank %d took %q, b's rank %d took %q; want a's %q and none for b", ra, got[ra], rb, got[rb], want)
	}
}
