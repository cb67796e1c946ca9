package replay_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestClosedLoopSampleStartsAtItsFirstRow: a closed loop of --users N
// (a users search's probe) is paced from the first row it replays, from
// which its plan's window is measured too. User 1 (batch) appears at 0 s,
// users 2 and 3 (interactive) at 10 s; --users 1 replays user 2 (the
// larger class's first) with --duration 2s: its plan covers its rows (10
// s to 12 s of the trace), and its request starts at the run's start.
// Paced from the trace's first row, user 1's, the request was due 10 s
// into a 2 s window: the probe replayed nothing, while its plan had
// prepared and sized the tiers for user 2's rows.
func TestClosedLoopSampleStartsAtItsFirstRow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var recs []schema.Record
		users := []struct {
			id  uint64
			at  time.Duration
			qos schema.QoS
		}{{1, 0, schema.QoSBatch}, {2, 10 * time.Second, schema.QoSInteractive}, {3, 10*time.Second + 100*time.Millisecond, schema.QoSInteractive}}
		for _, u := range users {
			key := []byte{'k', byte('0' + u.id)}
			for _, op := range []schema.Op{schema.OpWrite, schema.OpRead} {
				recs = append(recs, schema.Record{Time: u.at, Op: op, Size: 64 << 10, Tier: schema.TierCPU, Key: key,
					Phase: schema.PhasePrefill, Request: u.id, QoS: u.qos, User: u.id, Tokens: 10})
			}
		}
		cfg := closedConfig()
		cfg.Speed, cfg.Duration, cfg.Users = 1, 2*time.Second, 1
		src := memTrace(t, recs)
		plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Window != 2*time.Second || plan.Written["ram"] != 64<<10 {
			t.Fatalf("the plan: window %v, %d bytes written; want 2s, user 2's 64 KiB", plan.Window, plan.Written["ram"])
		}
		rec := fault.Record(newRAM(t, 64<<20))
		begin := time.Now()
		res, err := replay.Run(t.Context(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": rec}, replay.Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		cl := res.ClosedLoop
		if cl.RequestsCompleted != 1 || len(cl.PerUser) != 1 || cl.PerUser[0].User != 2 {
			t.Fatalf("closed loop: %d requests completed, users %+v; want user 2's request", cl.RequestsCompleted, cl.PerUser)
		}
		if start, _ := span(callsOf(rec.Log())["k2"]); start.Sub(begin) != 0 {
			t.Errorf("user 2's request started %v after the run's start; want at once", start.Sub(begin))
		}
	})
}
