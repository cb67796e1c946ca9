package replay_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestFailedRequestNotCompleted: a request one of whose rows failed, or
// did not run because the failure had stopped the run, is not a completed
// request: neither the requests measured (count and latency) nor a closed
// loop's requests_completed count it. Three users' requests at 1 ms an
// operation: user 1's (0 ms) completes; user 2's read of b fails at 11 ms;
// user 3's write of d (from 10.5 ms) completes after the failure and its
// read of d never runs. Before, all three counted as completed, user 2's
// and user 3's with the latency of the rows they had.
func TestFailedRequestNotCompleted(t *testing.T) {
	ms := time.Millisecond
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpWrite, 4096, schema.TierCPU, "a", schema.PhasePrefill, 1), 1),
		user(rec(0, schema.OpRead, 4096, schema.TierCPU, "a", schema.PhaseDecode, 1), 1),
		user(rec(10*ms, schema.OpWrite, 4096, schema.TierCPU, "b", schema.PhasePrefill, 2), 2),
		user(rec(10*ms, schema.OpRead, 4096, schema.TierCPU, "b", schema.PhaseDecode, 2), 2),
		user(rec(10500*time.Microsecond, schema.OpWrite, 4096, schema.TierCPU, "d", schema.PhasePrefill, 3), 3),
		user(rec(10500*time.Microsecond, schema.OpRead, 4096, schema.TierCPU, "d", schema.PhaseDecode, 3), 3),
	}
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprint("closed=", closed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := replay.DefaultConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
				cfg.Speed, cfg.ClosedLoop = 1, closed
				rule := fault.IOError(fault.OpRead)
				rule.Key = "1_b"
				ram := fault.Fail(fault.Delay(newRAM(t, 16<<20), ms), rule)
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": ram})
				if err == nil || res == nil || res.Complete {
					t.Fatalf("error %v; want the read of b's failure and an incomplete result", err)
				}
				if res.Errors.Count != 1 {
					t.Errorf("%d failed operations %q, want 1", res.Errors.Count, res.Errors.First)
				}
				// Rows done: user 1's two, b's write and failed read, d's
				// write; d's read never ran.
				if res.Replay.RowsDone != 5 {
					t.Errorf("%d rows done, want 5", res.Replay.RowsDone)
				}
				l := res.Requests.Latency
				if res.Requests.Count != 1 || l.MaxUS < 1_900 || l.MaxUS > 2_100 {
					t.Errorf("%d requests completed, latency max %.0f us; want user 1's alone, 2 ms", res.Requests.Count, l.MaxUS)
				}
				if cl := res.ClosedLoop; closed && (cl.RequestsCompleted != 1 || cl.RequestsReleased != 3) {
					t.Errorf("closed_loop: %d requests released, %d completed; want 3 and 1", cl.RequestsReleased, cl.RequestsCompleted)
				}
			})
		})
	}
}

// TestClosedLoopStopReleasesNothing: user 1's first request and user 2's
// run at once, 1 ms each, and user 2's write fails; user 1's second
// request, due 1 ms after its first completed, never runs: the failure
// stopped the run. It is left (closed_loop.requests_left), not released.
// Before, it counted as released, and neither completed, cut nor left.
func TestClosedLoopStopReleasesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
		recs := []schema.Record{
			user(rec(0, schema.OpWrite, 4096, schema.TierCPU, "a", schema.PhasePrefill, 1), 1),
			user(rec(0, schema.OpWrite, 4096, schema.TierCPU, "b", schema.PhasePrefill, 2), 2),
			user(rec(ms, schema.OpWrite, 4096, schema.TierCPU, "c", schema.PhasePrefill, 3), 1),
		}
		cfg := closedConfig()
		cfg.Speed = 1
		rule := fault.IOError(fault.OpWrite)
		rule.Key = "1_b"
		ram := fault.Fail(fault.Delay(newRAM(t, 16<<20), ms), rule)
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": ram})
		if err == nil || res == nil || res.Complete {
			t.Fatalf("error %v; want the write of b's failure and an incomplete result", err)
		}
		if cl := res.ClosedLoop; res.Replay.Rows != 2 || cl.RequestsReleased != 2 || cl.RequestsCompleted != 1 || cl.RequestsLeft != 1 {
			t.Errorf("closed_loop %+v, %d rows released; want 2 requests released, 1 completed, 1 left", cl, res.Replay.Rows)
		}
	})
}
