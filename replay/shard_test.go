package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/trace"
)

// TestShards replays one trace as 3 ranks in each shard mode: key and
// user split the rows (every row on exactly one rank; with key every row
// of an object on one rank, with user a user's requests on one rank), tp
// gives every rank every row.
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
			rankOfKey := map[string]int{}
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
					if mode == replay.ShardKey {
						if r, ok := rankOfKey[k]; ok && r != rank {
							t.Errorf("object %s on ranks %d and %d", k, r, rank)
						}
						rankOfKey[k] = rank
					}
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

// simTrace simulates cfg (kvtrace's engine) into a trace in memory.
func simTrace(t testing.TB, cfg sim.Config) (replay.Source, int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	if _, err := sim.Run(context.Background(), &cfg, func(r *schema.Record) error { rows++; return w.Write(r) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	return replay.Source{Name: "sim", Rescan: true, Open: func() (*trace.Reader, error) {
		return trace.NewReader(bytes.NewReader(data)), nil
	}}, rows
}

// TestShardKeyKeepsObjects replays kvtrace's MLPerf-like workload (kvtrace
// --model llama3.1-8b --num-users 20 --duration 60 --generation-mode none
// --gpu-mem-gb 0 --cpu-mem-gb 4, with RAG: multi-turn reads of earlier
// turns, the Evict pairs of one user's objects in another user's request,
// document chunks read by many users) as 4 key-sharded ranks. No rank
// touches an object another rank wrote: the keys of the ranks are
// disjoint, no rank prepares a cold object (the trace has none) and no
// read finds its object on another tier than its row names; each rank
// says that requests were split among ranks. Before, a
// request's rows followed its first row's rank, and 34 of 77 objects were
// read on a rank that never wrote them.
func TestShardKeyKeepsObjects(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Model, cfg.NumUsers, cfg.Duration = "llama3.1-8b", 20, 60*time.Second
	cfg.GenerationMode, cfg.GPUMemGB, cfg.CPUMemGB, cfg.EnableRAG = "none", 0, 4, true
	src, rows := simTrace(t, cfg)
	const ranks = 4
	rankOf := map[string]int{} // object -> the rank that touched it
	var done int64
	for rank := range ranks {
		rcfg := replay.DefaultConfig()
		rcfg.TierMap = [schema.NumTiers]string{"", "null", "null"}
		rcfg.Speed = 0
		rcfg.SizeScale = 1.0 / 65536
		rcfg.Rank, rcfg.Ranks, rcfg.Shard = rank, ranks, replay.ShardKey
		rec := fault.Record(null.New())
		res, err := runReplay(t, rcfg, src, map[string]backend.Backend{"null": rec})
		if err != nil {
			t.Fatal(err)
		}
		done += res.Replay.RowsDone
		if n := res.Replay.ColdPrepared; n != 0 {
			t.Errorf("rank %d prepared %d cold objects, want 0: it reads objects another rank writes", rank, n)
		}
		split := false
		for _, w := range res.Warnings {
			if strings.Contains(w, "named a tier") {
				t.Errorf("rank %d: %s", rank, w)
			}
			split = split || strings.HasPrefix(w, "--shard key: ") && strings.Contains(w, "parts of requests")
		}
		if !split {
			// A request reads earlier turns and moves other users'
			// objects: its rows lie on several ranks, and the result
			// says that its request figures are of parts.
			t.Errorf("rank %d does not say that requests were split: %q", rank, res.Warnings)
		}
		mine := map[string]bool{}
		for _, c := range rec.Log() {
			k := c.Key[strings.IndexByte(c.Key, '_')+1:]
			if c.Op == fault.OpOpen && c.Create {
				mine[k] = true
			}
			if c.Op == fault.OpRead && !mine[k] {
				t.Errorf("rank %d read %s before it wrote it", rank, k)
			}
			if r, ok := rankOf[k]; ok && r != rank {
				t.Fatalf("object %s on ranks %d and %d", k, r, rank)
			}
			rankOf[k] = rank
		}
		if len(mine) == 0 {
			t.Errorf("rank %d wrote nothing", rank)
		}
	}
	if done != rows {
		t.Errorf("the ranks replayed %d rows, the trace has %d", done, rows)
	}
	if len(rankOf) < 1000 {
		t.Errorf("%d objects, want the trace's thousands", len(rankOf))
	}
	t.Logf("%d rows, %d objects on %d ranks", rows, len(rankOf), ranks)
}

// TestShardUserSaysForeignObjects replays kvtrace's MLPerf-like workload
// (as TestShardKeyKeepsObjects, whose requests carry the Evict pairs of
// other users' objects and read documents other users wrote) as 4
// user-sharded closed-loop ranks. Every row runs on one rank. An object's
// moves run on the rank that wrote it, whichever request carries them;
// reads follow their request, so a rank reads documents another rank
// wrote: each rank that prepared such objects cold says how many of its
// rows are of objects another rank touched first. Reads found off the
// tier their row names are few: before, the moves followed the request,
// and this trace's ranks prepared 2027 objects cold and misread 6724
// times (now 332 and 23). A trace whose users touch only their own
// objects draws no such word.
func TestShardUserSaysForeignObjects(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Model, cfg.NumUsers, cfg.Duration = "llama3.1-8b", 20, 60*time.Second
	cfg.GenerationMode, cfg.GPUMemGB, cfg.CPUMemGB, cfg.EnableRAG = "none", 0, 4, true
	sim, _ := simTrace(t, cfg)
	own := memTrace(t, userTrace(7, 5, 0))
	const ranks = 4
	for _, tt := range []struct {
		name string
		src  replay.Source
	}{{"rag", sim}, {"own objects", own}} {
		t.Run(tt.name, func(t *testing.T) {
			var foreign, cold, misread, rows, traceRows int64
			for rank := range ranks {
				rcfg := replay.DefaultConfig()
				rcfg.TierMap = [schema.NumTiers]string{"", "null", "null"}
				rcfg.Speed, rcfg.ClosedLoop = 0, true
				rcfg.SizeScale = 1.0 / 65536
				if tt.name == "own objects" {
					rcfg.TierMap = [schema.NumTiers]string{"", "null", ""}
					rcfg.SizeScale = 1
				}
				rcfg.Rank, rcfg.Ranks, rcfg.Shard = rank, ranks, replay.ShardUser
				res, err := runReplay(t, rcfg, tt.src, map[string]backend.Backend{"null": null.New()})
				if err != nil {
					t.Fatal(err)
				}
				var n, m int64
				for _, w := range res.Warnings {
					if strings.HasPrefix(w, "--shard user: ") {
						if _, err := fmt.Sscanf(w, "--shard user: %d rows this rank ran are of objects another rank touched first", &n); err != nil {
							t.Fatalf("rank %d: %q: %v", rank, w, err)
						}
					}
					if strings.Contains(w, "reads named a tier") {
						fmt.Sscanf(w, "%d reads named a tier", &m)
					}
				}
				if n < res.Replay.ColdPrepared {
					t.Errorf("rank %d: %d rows of others' objects, %d cold objects prepared: %q", rank, n, res.Replay.ColdPrepared, res.Warnings)
				}
				foreign, cold, misread, rows = foreign+n, cold+res.Replay.ColdPrepared, misread+m, rows+res.Replay.RowsDone
				traceRows = res.Traces[0].Rows
			}
			if rows != traceRows {
				t.Errorf("the ranks ran %d rows of the trace's %d: want each once", rows, traceRows)
			}
			if tt.name == "rag" && (foreign == 0 || misread > cold) {
				t.Errorf("the ranks ran %d rows of others' objects, prepared %d cold, read %d off their rows' tiers: want some of the first, the last few", foreign, cold, misread)
			}
			if tt.name == "own objects" && foreign != 0 {
				t.Errorf("users touching only their own objects: %d rows of others' objects", foreign)
			}
			t.Logf("%d rows of objects another rank touched first, %d cold, %d read off their rows' tiers", foreign, cold, misread)
		})
	}
}
