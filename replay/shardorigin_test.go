package replay_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// keyOfRank returns a key that --shard key puts on rank of ranks (FNV-1a
// 64 of the key, as shard.go hashes it).
func keyOfRank(t *testing.T, prefix string, rank, ranks int) string {
	t.Helper()
	for i := range 1000 {
		k := fmt.Sprint(prefix, i)
		h := fnv.New64a()
		h.Write([]byte(k))
		if int(h.Sum64()%uint64(ranks)) == rank {
			return k
		}
	}
	t.Fatalf("no key of rank %d of %d", rank, ranks)
	return ""
}

// lateRankTrace is a trace whose first row is rank 0's of 2 (by key),
// at 0, and rank 1's rows come 3 s and 3.5 s into it; rank 1's config at
// --speed 1 in a --duration window (0: none).
func lateRankTrace(t *testing.T, window time.Duration) (recs []schema.Record, keys [3]string, cfg replay.Config) {
	keys = [3]string{keyOfRank(t, "a", 0, 2), keyOfRank(t, "b", 1, 2), keyOfRank(t, "c", 1, 2)}
	recs = []schema.Record{
		rec(0, schema.OpWrite, 4096, schema.TierCPU, keys[0], schema.PhasePrefill, 0),
		rec(3*time.Second, schema.OpWrite, 4096, schema.TierCPU, keys[1], schema.PhasePrefill, 0),
		rec(3500*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, keys[2], schema.PhasePrefill, 0),
	}
	cfg = replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.Duration = 1, window
	cfg.Rank, cfg.Ranks, cfg.Shard = 1, 2, replay.ShardKey
	return recs, keys, cfg
}

// TestShardPacedFromTracesFirstRow: the ranks of a run start at one
// instant and replay the trace's times in step. A rank whose first row
// (by key) comes 3 s into the trace replays it 3 s after the start, as
// one process would, not at once: each rank was paced from its own first
// row, so rank 1 wrote its objects 3 s before their time beside rank 0.
func TestShardPacedFromTracesFirstRow(t *testing.T) {
	recs, keys, cfg := lateRankTrace(t, 0)
	a, b0, b1 := keys[0], keys[1], keys[2]
	synctest.Test(t, func(t *testing.T) {
		rb := fault.Record(newRAM(t, 16<<20))
		begin := time.Now()
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
		if err != nil {
			t.Fatal(err)
		}
		starts := map[string]time.Duration{}
		for _, c := range rb.Log() {
			if c.Op == fault.OpWrite {
				starts[c.Key] = c.Start.Sub(begin)
			}
		}
		for k, want := range map[string]time.Duration{"1_" + b0: 3 * time.Second, "1_" + b1: 3500 * time.Millisecond} {
			if got, ok := starts[k]; !ok || got != want {
				t.Errorf("rank 1 wrote %s at %v after the start (%v), want %v: its trace time", k, got, ok, want)
			}
		}
		if _, ok := starts["1_"+a]; ok || res.Replay.RowsDone != 2 {
			t.Errorf("rank 1 did %d rows (rank 0's %s among them: %v), want its 2", res.Replay.RowsDone, a, ok)
		}
	})

}

// TestShardWindowFromTracesFirstRow: a --duration window of 2 s, the
// trace's first 2 s, gives a rank whose rows come 3 s into the trace
// nothing to replay, in its plan and its run, as one process replays
// none of them; each rank's window had been 2 s from its own first row,
// so the ranks together replayed rows past the window of the run.
func TestShardWindowFromTracesFirstRow(t *testing.T) {
	recs, _, cfg := lateRankTrace(t, 2*time.Second)
	src := memTrace(t, recs)
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	if plan.WindowRows != 0 {
		t.Errorf("plan of rank 1 in the trace's first 2 s: %d rows, want none (its rows are at 3 s and 3.5 s)", plan.WindowRows)
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.RowsDone != 0 {
			t.Errorf("rank 1 in the trace's first 2 s: %d rows done, want none", res.Replay.RowsDone)
		}
	})
}
