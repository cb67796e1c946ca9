package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestClosedLoopUnstartedRequestsMissTarget: ten interactive users
// (target 50 ms) each have one request of two rows, released at once; one
// worker takes 100 ms an operation, and the run's window of tasks holds
// two requests. The 1 s --duration window closes on requests released
// about 1 s before and never started: as an open loop's requests due and
// never started, each is cut and, released longer than its target before
// the window's end, counts as missing it (and the 500 ms SLO), with a
// warning. Before, the closed loop cut them silently: a system too slow to
// start its users' requests was judged on those it started.
func TestClosedLoopUnstartedRequestsMissTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const users = 10
		recs := replaytest.UserRecords(users, 1, 0, 4096, schema.TierCPU, schema.QoSInteractive)
		cfg := closedConfig()
		cfg.Speed, cfg.Workers, cfg.Duration = 1, 1, time.Second
		cfg.SLO = results.SLO{All: 500 * time.Millisecond}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 100*time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		cl, r := res.ClosedLoop, res.Replay
		// Two requests at a time, 200 ms of the worker each: four or so
		// complete, one or two are cut with rows run, the rest never start.
		started := (r.Rows + 1) / 2
		if cl.RequestsReleased != users || cl.RequestsCompleted >= started || started > users-3 {
			t.Fatalf("closed_loop %+v, %d rows released: want every request released, some cut with rows run and some never started", cl, r.Rows)
		}
		cut := users - cl.RequestsCompleted
		// Every request cut was released about 1 s before the window's
		// end, far past 50 ms and 500 ms.
		if r.RequestsCut != cut || r.RequestsCutLate != cut {
			t.Errorf("requests cut %d, late %d; want %d and %d: every request not completed, released long before the window closed", r.RequestsCut, r.RequestsCutLate, cut, cut)
		}
		if res.Requests.Count != users {
			t.Errorf("requests %d, want %d: those completed and those cut late", res.Requests.Count, users)
		}
		if s := res.Requests.SLO; s == nil || s.Count != users {
			t.Errorf("SLO %+v: want %d requests", s, users)
		}
		want := "requests released before the --duration window closed never started"
		if !strings.Contains(strings.Join(res.Warnings, "\n"), want) {
			t.Errorf("warnings %q: want one that says %q", res.Warnings, want)
		}
	})
}

// TestClosedLoopCutWaitingRequestLate: user 1's interactive request
// writes a, at once, then reads K, whose write rides in user 2's second
// request; user 2's first request takes 1 s, so the 500 ms --duration
// window closes with user 1's read still waiting for its turn. The
// request was due whole by then and had not finished: it took at least
// the 500 ms to the window's end, past its 50 ms target, and is cut late.
// Before, a cut request counted only its released rows' time, here none,
// and was not late.
func TestClosedLoopCutWaitingRequestLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := func(at time.Duration, op schema.Op, key string, req, user uint64) schema.Record {
			return schema.Record{Time: at, Op: op, Size: 4096, Tier: schema.TierCPU, Key: []byte(key), Phase: schema.PhasePrefill,
				Request: req, QoS: schema.QoSInteractive, User: user, Tokens: 1}
		}
		us := time.Microsecond
		var recs []schema.Record
		for i := range 10 { // user 2's first request: 10 rows of 100 ms in sequence
			recs = append(recs, r(time.Duration(i)*us, schema.OpWrite, fmt.Sprint("c", i), 1, 2))
		}
		recs = append(recs,
			r(20*us, schema.OpWrite, "K", 2, 2),
			r(30*us, schema.OpWrite, "a", 3, 1),
			r(30*us, schema.OpRead, "K", 3, 1),
		)
		cfg := closedConfig()
		cfg.Duration = 500 * time.Millisecond
		slow := func(k string) bool { return strings.HasPrefix(k, "1_c") }
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": slowWriter{newRAM(t, 16<<20), 100 * time.Millisecond, slow}})
		if err != nil {
			t.Fatal(err)
		}
		r0 := res.Replay
		if cl := res.ClosedLoop; cl.RequestsReleased != 2 || cl.RequestsCompleted != 1 || r0.Rows != 11 {
			t.Fatalf("closed_loop %+v, %d rows released; want user 2's first request, whole, and user 1's released, its write of a run", cl, r0.Rows)
		}
		// User 2's first request took 1 s; user 1's at least 500 ms.
		if r0.RequestsCut != 1 || r0.RequestsCutLate != 1 || res.Requests.Count != 2 {
			t.Errorf("requests cut %d, late %d, counted %d; want 1, 1, 2", r0.RequestsCut, r0.RequestsCutLate, res.Requests.Count)
		}
		if l := res.Requests.Latency; l.MinUS < 499_000 { // the histogram's precision
			t.Errorf("request latency %+v: want each at least the 500 ms to the window's end", l)
		}
	})
}
