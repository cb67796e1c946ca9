package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
)

// TestClosedLoopNullMaxSpeed replays a closed loop on the null backend at
// --speed max: every task completes on the loop itself, so the next
// requests it releases are due at once with nothing in flight to wake the
// loop. It used to sleep forever there (a bubble reports that as a
// deadlock); it must run every request.
func TestClosedLoopNullMaxSpeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const users, requests = 4, 50
		cfg := closedConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "null", ""}
		res, err := runReplay(t, cfg, memTrace(t, userTrace(users, requests, time.Millisecond)), map[string]backend.Backend{"null": null.New()})
		if err != nil {
			t.Fatal(err)
		}
		if cl := res.ClosedLoop; cl.RequestsCompleted != users*requests || cl.RequestsLeft != 0 || res.Replay.RowsDone != 2*users*requests {
			t.Errorf("closed_loop %+v, rows done %d", cl, res.Replay.RowsDone)
		}
	})
}

// TestClosedLoopKeyOrder: the Evict pair that moves user 1's object K to
// Tier-2 rides in user 2's request, between user 1's write of K and its
// read of K on Tier-2. A closed loop releases the users' requests by their
// completions, not in trace order, yet the rows of one object must run in
// trace order: K written on Tier-1, read there and written to Tier-2 by
// the move, then read on Tier-2; nothing prepared cold, rewritten, or read
// where the trace did not put it.
func TestClosedLoopKeyOrder(t *testing.T) {
	r := func(at time.Duration, op schema.Op, tier schema.Tier, key string, ph schema.Phase, req, user uint64) schema.Record {
		return schema.Record{Time: at, Op: op, Size: 64 << 10, Tier: tier, Key: []byte(key), Phase: ph, Request: req,
			QoS: schema.QoSBatch, User: user, Tokens: 1}
	}
	us := time.Microsecond
	recs := []schema.Record{
		r(0, schema.OpWrite, schema.TierCPU, "a", schema.PhasePrefill, 1, 1),
		r(1*us, schema.OpWrite, schema.TierCPU, "K", schema.PhasePrefill, 1, 1),
		r(2*us, schema.OpRead, schema.TierCPU, "K", schema.PhaseEvict, 2, 2),
		r(3*us, schema.OpWrite, schema.TierNVMe, "K", schema.PhaseEvict, 2, 2),
		r(4*us, schema.OpRead, schema.TierNVMe, "K", schema.PhaseDecode, 3, 1),
	}
	for _, speed := range []float64{0, 1} {
		t.Run(fmt.Sprint("speed=", speed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := closedConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", "ram"}
				cfg.Speed = speed
				rb := fault.Record(fault.Delay(newRAM(t, 64<<20), time.Millisecond))
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, c := range rb.Log() {
					if strings.HasSuffix(c.Key, "_K") && c.Op&(fault.OpRead|fault.OpWrite) != 0 {
						got = append(got, fmt.Sprintf("%s %s", c.Op, c.Key))
					}
				}
				want := []string{"write 1_K", "read 1_K", "write 2_K", "read 2_K"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("K's I/O %q, want %q", got, want)
				}
				if res.Replay.ColdPrepared != 0 || res.Replay.Rematerialised != 0 || strings.Contains(strings.Join(res.Warnings, "\n"), "named a tier") {
					t.Errorf("cold prepared %d, rewritten %d, warnings %q", res.Replay.ColdPrepared, res.Replay.Rematerialised, res.Warnings)
				}
				if cl := res.ClosedLoop; cl.RequestsCompleted != 3 {
					t.Errorf("closed_loop %+v", cl)
				}
			})
		})
	}
}

// TestClosedLoopWindowCutsWaitingRow: user 1's request, released at once,
// reads K, whose write rides in user 2's second request; user 2's first
// request outlasts --duration, so that write is never released. The read
// waits for its turn until the window closes, then its request ends
// there (as requests the window cuts do) instead of waiting forever.
func TestClosedLoopWindowCutsWaitingRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := func(at time.Duration, op schema.Op, key string, req, user uint64) schema.Record {
			return schema.Record{Time: at, Op: op, Size: 4096, Tier: schema.TierCPU, Key: []byte(key), Phase: schema.PhasePrefill,
				Request: req, QoS: schema.QoSBatch, User: user, Tokens: 1}
		}
		us := time.Microsecond
		var recs []schema.Record
		for i := range 10 { // user 2's first request: 10 rows of 10 ms in sequence
			recs = append(recs, r(time.Duration(i)*us, schema.OpWrite, fmt.Sprint("c", i), 1, 2))
		}
		recs = append(recs,
			r(20*us, schema.OpWrite, "K", 2, 2),
			r(30*us, schema.OpRead, "K", 3, 1),
		)
		cfg := closedConfig()
		cfg.Duration = 50 * time.Millisecond
		rb := fault.Record(fault.Delay(newRAM(t, 16<<20), 10*time.Millisecond))
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rb.Log() {
			if strings.HasSuffix(c.Key, "_K") {
				t.Errorf("%s of K ran: its write was never released", c.Op)
			}
		}
		if cl := res.ClosedLoop; cl.RequestsReleased != 2 || res.WallS != 0.1 {
			t.Errorf("closed_loop %+v, wall %v s; want user 2's first request and user 1's released, the run ending with the first at 0.1 s", cl, res.WallS)
		}
	})
}

// TestClosedLoopSharedReadsDoNotWait: user 1's first request writes X,
// which takes 500 ms, and its second reads the shared object S and
// writes W; user 2's requests, after them in the trace, read S and then
// W. User 2's read of S does not wait for user 1's, held back by its
// slow write: reads of one object run in either order, as they run side
// by side, and its latency, from its release, is its own. Its read of W
// still waits for user 1's write of W, which it reads. Before, every row
// of an object waited for the object's earlier rows in the trace, reads
// too: user 2's read of S took 500 ms, user 1's time.
func TestClosedLoopSharedReadsDoNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		r := func(at time.Duration, op schema.Op, key string, req, user uint64) schema.Record {
			return schema.Record{Time: at, Op: op, Size: 4096, Tier: schema.TierCPU, Key: []byte(key), Phase: schema.PhaseDecode,
				Request: req, QoS: schema.QoSInteractive, User: user, Tokens: 1}
		}
		recs := []schema.Record{
			{Time: 0, Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte("S"), Phase: schema.PhasePrefill},
			r(1*ms, schema.OpWrite, "X", 1, 1),
			r(2*ms, schema.OpRead, "S", 2, 1),
			r(2*ms, schema.OpWrite, "W", 2, 1),
			r(3*ms, schema.OpRead, "S", 3, 2),
			r(4*ms, schema.OpRead, "W", 4, 2),
		}
		cfg := closedConfig()
		cfg.Speed = 1
		rb := fault.Record(slowWriter{newRAM(t, 16<<20), 500 * ms, named("1_X")})
		begin := time.Now()
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rb})
		if err != nil {
			t.Fatal(err)
		}
		calls := callsOf(rb.Log())
		var readsS []time.Duration
		for _, c := range calls["S"] {
			if c.Op == fault.OpRead {
				readsS = append(readsS, c.Start.Sub(begin))
			}
		}
		if len(readsS) != 2 || min(readsS[0], readsS[1]) != 3*ms {
			t.Errorf("S read at %v, want user 2's read at its trace time, 3 ms", readsS)
		}
		if w := calls["W"]; len(w) != 2 || w[0].Op != fault.OpWrite || w[1].Op != fault.OpRead || w[1].Start.Before(w[0].End) {
			t.Errorf("W's I/O %+v: want user 2's read after user 1's write", calls["W"])
		}
		if cl := res.ClosedLoop; cl.RequestsCompleted != 4 || cl.PerUser[1].MeanMS >= 500 {
			t.Errorf("closed_loop %+v", cl)
		}
	})
}
