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

// TestWindowCutsRequests: a --duration window of 100 ms closes on user
// 1's second request, whose rows go on to 205 ms, and while user 2 thinks
// (its next request is due at 300 ms). Open or closed loop, no row is
// released after the window: the run ends a row's time after it, the
// request it closed on is cut (counted apart, not a completed request
// whose latency would be that of the rows it had), and the requests that
// ran all their rows complete. Before, a closed loop ran released
// requests to their end at trace pace, and the think times it had
// released, so a 5 s window ran 20 s and counted its requests over that.
func TestWindowCutsRequests(t *testing.T) {
	ms := time.Millisecond
	w := func(at time.Duration, key string, req, user uint64) schema.Record {
		return schema.Record{Time: at, Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte(key),
			Phase: schema.PhasePrefill, Request: req, QoS: schema.QoSBatch, User: user, Tokens: 1}
	}
	recs := []schema.Record{w(0, "a0", 1, 1), w(10*ms, "a1", 1, 1), w(12*ms, "c0", 3, 2)}
	for i := range 10 { // user 1's second request: 25 ms to 205 ms
		recs = append(recs, w(25*ms+time.Duration(i)*20*ms, fmt.Sprint("b", i), 2, 1))
	}
	recs = append(recs, w(300*ms, "d0", 4, 2))
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprint("closed=", closed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := replay.DefaultConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
				cfg.Speed, cfg.ClosedLoop, cfg.Duration = 1, closed, 100*ms
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), ms)})
				if err != nil {
					t.Fatal(err)
				}
				// Rows a0, a1, c0 and the first four of b (the closed loop
				// releases b 1 ms later: a1's completion, plus think time).
				if r := res.Replay; r.Rows != 7 || r.RowsDone != 7 || r.RequestsCut != 1 || r.RowsMissed != 0 {
					t.Errorf("replay %+v; want 7 rows done, 1 request cut, none missed", r)
				}
				if res.Requests.Count != 2 || res.WallS < 0.1 || res.WallS > 0.102 {
					t.Errorf("%d requests measured, wall %.4f s; want 2 (1 and 3), ending a row's time after the window", res.Requests.Count, res.WallS)
				}
				if !closed {
					return
				}
				if cl := res.ClosedLoop; cl.RequestsReleased != 3 || cl.RequestsCompleted != 2 || cl.RequestsLeft != 1 {
					t.Errorf("closed_loop %+v; want 3 released (1, 2, 3), 2 completed, 1 left (4, due in user 2's think time)", cl)
				}
			})
		})
	}
}
