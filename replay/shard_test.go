package replay_test

import (
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestShards replays one trace as 3 ranks in each shard mode: key and
// user split the rows (every row on exactly one rank; a request's rows,
// and with user a user's requests, on one rank), tp gives every rank
// every row.
func TestShards(t *testing.T) {
	recs := userTrace(7, 5, 0) // requests write then read their own key
	// Each request also reads a key of another request, which key
	// sharding alone would put elsewhere.
	var withShared []schema.Record
	for i, r := range recs {
		withShared = append(withShared, r)
		if r.Op == schema.OpRead && i > 2 {
			o := recs[i-2]
			o.Request, o.User, o.QoS, o.Tokens, o.Op = r.Request, r.User, r.QoS, r.Tokens, schema.OpRead
			withShared = append(withShared, o)
		}
	}
	for _, mode := range []string{replay.ShardKey, replay.ShardUser, replay.ShardTP} {
		t.Run(mode, func(t *testing.T) {
			rowsOf := map[string]int{} // key -> rows replayed, all ranks
			rankOfUser := map[string]int{}
			var total int64
			for rank := range 3 {
				cfg := closedConfig()
				cfg.ClosedLoop = mode == replay.ShardUser
				cfg.Rank, cfg.Ranks, cfg.Shard = rank, 3, mode
				rec := fault.Record(newRAM(t, 64<<20))
				trace := withShared
				if mode == replay.ShardUser {
					trace = recs // a user's keys are touched by its requests only
				}
				res, err := runReplay(t, cfg, memTrace(t, trace), map[string]backend.Backend{"ram": rec})
				if err != nil {
					t.Fatal(err)
				}
				total += res.Replay.RowsDone
				for _, c := range rec.Log() {
					if c.Op&(fault.OpRead|fault.OpWrite) == 0 {
						continue
					}
					k := c.Key[strings.IndexByte(c.Key, '_')+1:]
					rowsOf[k]++
					user := k[:strings.IndexByte(k, 'r')]
					if mode == replay.ShardUser {
						if r, ok := rankOfUser[user]; ok && r != rank {
							t.Errorf("user %s on ranks %d and %d", user, r, rank)
						}
						rankOfUser[user] = rank
					}
				}
			}
			want := int64(len(withShared))
			if mode == replay.ShardUser {
				want = int64(len(recs))
				if len(rankOfUser) != 7 {
					t.Errorf("%d users replayed, want 7", len(rankOfUser))
				}
			}
			if mode == replay.ShardTP {
				want *= 3
			}
			if total != want {
				t.Errorf("%d rows replayed by the ranks, want %d", total, want)
			}
			if mode != replay.ShardTP && len(rowsOf) != 35 {
				t.Errorf("%d keys touched, want 35", len(rowsOf))
			}
		})
	}
}
