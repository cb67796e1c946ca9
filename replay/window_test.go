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
// A window of 22 ms closes between requests: none is cut.
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
	for _, tc := range []struct {
		window                    time.Duration
		rows, cut, released, left int64
	}{
		// The window closes in request 2: 1 and 3 complete, 2 is cut, 4
		// is due in user 2's think time.
		{window: 100 * ms, rows: 7, cut: 1, released: 3, left: 1},
		// The window closes between requests (3 ran, 2's first row is
		// due at 25 ms, later in the closed loop): none is cut.
		{window: 22 * ms, rows: 3, cut: 0, released: 2, left: 2},
	} {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprint(tc.window, " closed=", closed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := replay.DefaultConfig()
					cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
					cfg.Speed, cfg.ClosedLoop, cfg.Duration = 1, closed, tc.window
					res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), ms)})
					if err != nil {
						t.Fatal(err)
					}
					if r := res.Replay; r.Rows != tc.rows || r.RowsDone != tc.rows || r.RequestsCut != tc.cut || r.RowsMissed != 0 {
						t.Errorf("replay %+v; want %d rows done, %d requests cut, none missed", r, tc.rows, tc.cut)
					}
					end := tc.window.Seconds()
					if res.Requests.Count != 2 || res.WallS < end || res.WallS > end+0.002 {
						t.Errorf("%d requests measured, wall %.4f s; want 2 (1 and 3), ending within a row's time after the window", res.Requests.Count, res.WallS)
					}
					if !closed {
						return
					}
					if cl := res.ClosedLoop; cl.RequestsReleased != tc.released || cl.RequestsCompleted != 2 || cl.RequestsLeft != tc.left {
						t.Errorf("closed_loop %+v; want %d released, 2 completed, %d left", cl, tc.released, tc.left)
					}
				})
			})
		}
	}
}
