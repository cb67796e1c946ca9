package replay_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestShardedSetupRowsEachRankItsOwn: 3 ranks of one run, in one process,
// replay a trace whose sidecar's measured window starts at 1 s. Before it,
// rank r (by key) has r+1 writes of its own objects and a read of one of
// them: its setup, slow (each write 200 ms times r+1), so the ranks finish
// theirs at different times. Each rank runs exactly its own setup rows
// (setup_rows r+2, its objects written, no other rank's touched), all of
// them before its wait at the start barrier (Hooks.Ready), which releases
// the ranks together; the measured rows, on the ranks their keys hash to,
// are paced from measured_from_s (trace time 1 s is the clock's start)
// and read the objects the rank's own setup wrote; its plan counts its
// setup rows (Plan.SetupRows), which its progress line leaves out of the
// rows it measures. Sharding by user (closed loop), rows of no user go
// by key: the same split.
func TestShardedSetupRowsEachRankItsOwn(t *testing.T) {
	const ranks = 3
	setupKeys := make([][]string, ranks)
	measured := make([][2]string, ranks) // the read of a setup object, a write
	var recs []schema.Record
	at := time.Duration(0)
	for r := range ranks {
		for i := range r + 1 {
			k := keyOfRank(t, fmt.Sprintf("s%d_%d_", r, i), r, ranks)
			setupKeys[r] = append(setupKeys[r], k)
			recs = append(recs, rec(at, schema.OpWrite, 4096, schema.TierCPU, k, schema.PhasePrefill, 0))
			at += 10 * time.Millisecond
		}
	}
	for r := range ranks {
		recs = append(recs, rec(at, schema.OpRead, 4096, schema.TierCPU, setupKeys[r][0], schema.PhaseDecode, 0))
		at += 10 * time.Millisecond
	}
	for r := range ranks {
		measured[r] = [2]string{setupKeys[r][r], keyOfRank(t, fmt.Sprintf("m%d_", r), r, ranks)}
		base := time.Second + time.Duration(r)*200*time.Millisecond
		recs = append(recs,
			rec(base, schema.OpRead, 4096, schema.TierCPU, measured[r][0], schema.PhaseDecode, 0),
			rec(base+100*time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, measured[r][1], schema.PhasePrefill, 0))
	}
	src := memTrace(t, recs)
	src.Meta = &trace.Meta{MeasuredFrom: 1}
	rankOf := map[string]int{}
	for r := range ranks {
		for _, k := range append(setupKeys[r], measured[r][1]) {
			rankOf["1_"+k] = r
		}
	}
	for _, mode := range []string{replay.ShardKey, replay.ShardUser} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					ready   sync.WaitGroup
					wg      sync.WaitGroup
					t0      = time.Now()
					results = make([]*schema.Result, ranks)
					errs    = make([]error, ranks)
					logs    = make([]*fault.Recorder, ranks)
					started = make([]time.Time, ranks)
					logAt   = make([]int, ranks) // each rank's log length at its Ready
				)
				ready.Add(ranks)
				for r := range ranks {
					cfg := replay.DefaultConfig()
					cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
					cfg.Speed = 1
					cfg.Rank, cfg.Ranks, cfg.Shard, cfg.ClosedLoop = r, ranks, mode, mode == replay.ShardUser
					if err := cfg.Validate(); err != nil {
						t.Fatal(err)
					}
					plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
					if err != nil {
						t.Fatal(err)
					}
					if plan.Rows != int64(r+4) || plan.SetupRows != int64(r+2) {
						t.Errorf("rank %d: the plan has %d rows, %d of them setup rows; want %d and %d", r, plan.Rows, plan.SetupRows, r+4, r+2)
					}
					logs[r] = fault.Record(slowWriter{newRAM(t, 16<<20), time.Duration(r+1) * 200 * time.Millisecond, containing("1_s")})
					wg.Add(1)
					go func() {
						defer wg.Done()
						var once sync.Once
						arrive := func() { once.Do(ready.Done) }
						defer arrive() // a rank that stopped before its wait releases the others
						results[r], errs[r] = replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
							map[string]backend.Backend{"ram": logs[r]}, replay.Hooks{Ready: func() error {
								logAt[r] = len(logs[r].Log())
								arrive()
								ready.Wait()
								started[r] = time.Now()
								return nil
							}})
					}()
				}
				wg.Wait()
				for r := range ranks {
					if errs[r] != nil {
						t.Fatalf("rank %d: %v", r, errs[r])
					}
				}
				// The slowest rank's setup (rank 2's writes of 600 ms) ends
				// at 600 ms: every rank starts then, together.
				for r := range ranks {
					if want := t0.Add(600 * time.Millisecond); !started[r].Equal(want) {
						t.Errorf("rank %d started %v after the run, want %v: at the barrier, after every rank's setup",
							r, started[r].Sub(t0), want.Sub(t0))
					}
				}
				for r, res := range results {
					if got := res.Replay.SetupRows; got != int64(r+2) {
						t.Errorf("rank %d: setup_rows %d, want %d: its %d writes and its read before measured_from_s", r, got, r+2, r+1)
					}
					if res.Replay.RowsDone != 2 || res.Replay.ColdPrepared != 0 {
						t.Errorf("rank %d: rows_done %d, %d cold objects; want its 2 measured rows, its setup's objects there", r, res.Replay.RowsDone, res.Replay.ColdPrepared)
					}
					wrote := map[string]bool{}
					for i, c := range logs[r].Log() {
						if o, ok := rankOf[c.Key]; ok && o != r {
							t.Errorf("rank %d: %s %s, an object of rank %d", r, c.Op, c.Key, o)
						}
						if c.Op != fault.OpWrite || !strings.HasPrefix(c.Key, "1_s") {
							continue
						}
						wrote[c.Key] = true
						if i >= logAt[r] || c.End.After(started[r]) {
							t.Errorf("rank %d: setup write of %s at %v to %v, after its wait (clock at %v)", r, c.Key, c.Start.Sub(t0), c.End.Sub(t0), started[r].Sub(t0))
						}
					}
					for _, k := range setupKeys[r] {
						if !wrote["1_"+k] {
							t.Errorf("rank %d: its setup object %s not written", r, k)
						}
					}
					if mode != replay.ShardKey {
						continue // a closed loop's rows of no user: no pace asserted
					}
					// Paced from measured_from_s: trace time 1 s is the start.
					for i, k := range measured[r] {
						want := time.Duration(r)*200*time.Millisecond + time.Duration(i)*100*time.Millisecond
						op := []fault.Op{fault.OpRead, fault.OpWrite}[i]
						found := false
						for _, c := range logs[r].Log() {
							// Rank 0's setup read the object too: the measured
							// read is the one after the start.
							if c.Key == "1_"+k && c.Op == op && !c.Start.Before(started[r]) {
								found = true
								if got := c.Start.Sub(started[r]); got != want {
									t.Errorf("rank %d: %s of %s %v after the start, want %v: its trace time less measured_from_s", r, c.Op, k, got, want)
								}
								break
							}
						}
						if !found {
							t.Errorf("rank %d: measured row %d (%s %s) not run after the start", r, i, op, k)
						}
					}
				}
			})
		})
	}
}
