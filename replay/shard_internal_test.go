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

// TestShardUserOwnerPerTrace: two traces replayed side by side name their
// objects alike (kvtrace's keys, conv_user_0002_0000_turn_1, repeat in
// traces of one seed), but each trace's K is an object of its own. User a
// writes trace 0's K, user b trace 1's K, and the Evict pair of trace
// 1's K rides in a's request of trace 1: b's rank, which wrote it, moves
// it. Before, the sharder knew K by its key alone: a's rank moved trace
// 1's K, which it never wrote, and b's rank kept it on Tier-1 (counted as
// a row of another rank's object).
func TestShardUserOwnerPerTrace(t *testing.T) {
	const ranks = 2
	a := uint64(1)
	b := a + 1
	for mix(b)%ranks == mix(a)%ranks {
		b++
	}
	type row struct {
		src int
		rec schema.Record
	}
	r := func(src int, op schema.Op, tier schema.Tier, ph schema.Phase, req, user uint64) row {
		return row{src, schema.Record{Op: op, Tier: tier, Key: []byte("K"), Phase: ph, Request: req, User: user}}
	}
	trace := []row{ // merged by time
		r(0, schema.OpWrite, schema.TierCPU, schema.PhasePrefill, 1, a),
		r(1, schema.OpWrite, schema.TierCPU, schema.PhasePrefill, 1, b),
		r(1, schema.OpRead, schema.TierCPU, schema.PhaseEvict, 2, a),
		r(1, schema.OpWrite, schema.TierNVMe, schema.PhaseEvict, 2, a),
	}
	got := map[int][]string{}
	for rank := range ranks {
		s := newSharder(&Config{Rank: rank, Ranks: ranks, Shard: ShardUser, ClosedLoop: true}, 2)
		for _, x := range trace {
			if s.mine(&x.rec, x.src) {
				got[rank] = append(got[rank], fmt.Sprintf("trace %d %s %s %s", x.src, x.rec.Op, x.rec.Tier, x.rec.Phase))
			}
		}
		if w := s.splitWarning(); w != "" {
			t.Errorf("rank %d: %q; want no row of another rank's object", rank, w)
		}
	}
	ra, rb := int(mix(a)%ranks), int(mix(b)%ranks)
	wantA := []string{"trace 0 Write Tier-1 Prefill"}
	wantB := []string{"trace 1 Write Tier-1 Prefill", "trace 1 Read Tier-1 Evict", "trace 1 Write Tier-2 Evict"}
	if fmt.Sprint(got[ra]) != fmt.Sprint(wantA) || fmt.Sprint(got[rb]) != fmt.Sprint(wantB) {
		t.Errorf("a's rank %d took %q, b's rank %d took %q; want %q and %q", ra, got[ra], rb, got[rb], wantA, wantB)
	}
}
