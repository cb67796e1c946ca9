package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// scheduledCriterion is the name of storage_health's criterion on a
// closed loop's rows released at their trace times.
var scheduledCriterion = fmt.Sprintf("%s < %gms", results.ScheduledCriterion, float64(results.LagP95Limit.Milliseconds()))

// criterion returns h's criterion named name.
func criterion(h schema.StorageHealth, name string) (schema.Criterion, bool) {
	for _, c := range h.Criteria {
		if c.Name == name {
			return c, true
		}
	}
	return schema.Criterion{}, false
}

// TestClosedLoopScheduledRowsBehind: a closed loop releases the rows of
// no user at their trace times, as an open loop does, and they have a
// schedule to keep. 500 such rows are due 10 ms apart; one worker takes
// 50 ms an operation, so within the 5 s --duration window about 100 are
// released, up to 4 s late, and the rest are never released
// (rows_missed). Every latency criterion passes (50 ms a Tier-1
// operation; the user's one request well within its batch target): the
// run fell behind its trace's pace and nothing else. Before, a closed
// loop had no schedule criterion, and this run was PASS (only a warning
// said rows were missed); now the scheduled rows' lag is kept apart
// (closed_loop.scheduled_lag: the rows released and those missed) and
// judged by the open loop's limit, under its own name, and the run FAILs
// BEHIND SCHEDULE.
func TestClosedLoopScheduledRowsBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := []schema.Record{{Time: 0, Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte("u0"),
			Phase: schema.PhasePrefill, Request: 1, User: 1, QoS: schema.QoSBatch}}
		const userless = 500
		for i := range userless {
			recs = append(recs, schema.Record{Time: time.Duration(i)*10*time.Millisecond + time.Millisecond, Op: schema.OpWrite,
				Size: 4096, Tier: schema.TierCPU, Key: []byte(fmt.Sprint("p", i)), Phase: schema.PhasePrefill})
		}
		cfg := closedConfig()
		cfg.Speed, cfg.Workers, cfg.Duration = 1, 1, 5*time.Second
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 50*time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		h := res.Summary.StorageHealth
		cl := res.ClosedLoop
		if res.Replay.RowsMissed == 0 || cl == nil {
			t.Fatalf("rows_missed %d, closed_loop %v: want rows missed in a closed loop", res.Replay.RowsMissed, cl)
		}
		sl := cl.ScheduledLag
		// The user's row is not in it: the scheduled rows released (all
		// the rows but the user's) and those missed are.
		if want := res.Replay.Rows - 1 + res.Replay.RowsMissed; sl == nil || sl.Count != want {
			t.Fatalf("closed_loop.scheduled_lag %+v: want the %d rows of no user released or missed", sl, want)
		}
		if sl.P95US < 1e6 || sl.Histogram == "" {
			t.Errorf("scheduled lag p95 %.0f us, histogram %q: want over 1 s, encoded", sl.P95US, sl.Histogram)
		}
		c, ok := criterion(h, scheduledCriterion)
		if !ok || c.Passed || c.Actual != sl.P95US/1000 || !strings.Contains(c.Reason, "at their trace times") {
			t.Errorf("criteria %+v: want %q failed at the scheduled rows' p95 %.1f ms", h.Criteria, scheduledCriterion, sl.P95US/1000)
		}
		if h.OverallStatus != results.HealthFail {
			t.Errorf("storage_health %s (%v): a closed loop whose scheduled rows fell %.1f s behind (%d rows missed) must not PASS",
				h.OverallStatus, h.Reasons, sl.P95US/1e6, res.Replay.RowsMissed)
		}
		for _, c := range h.Criteria {
			if c.Name != scheduledCriterion && !c.Passed {
				t.Errorf("criterion %q failed (%s): the test wants the schedule alone behind", c.Name, c.Reason)
			}
		}
		if !strings.Contains(strings.Join(res.Warnings, "\n"), "BEHIND SCHEDULE: ") {
			t.Errorf("warnings %q: want BEHIND SCHEDULE", res.Warnings)
		}
	})
}

// TestClosedLoopUsersRowsNotJudged: a user's rows keep no schedule (its
// request is released when its previous one completed, plus think time),
// so their lag behind their request's offsets is not judged. A user's
// request of 15 rows 10 ms apart runs its rows in sequence, 100 ms each:
// its last rows start over a second after their offsets, and the run's
// lag p95 is over the limit. The rows of no user beside it, one every
// 100 ms, find free workers and are on time: the schedule criterion
// passes on them. A closed loop without rows at trace times has no
// schedule criterion and no scheduled_lag block.
func TestClosedLoopUsersRowsNotJudged(t *testing.T) {
	user := func(n int) []schema.Record {
		var recs []schema.Record
		for i := range n {
			recs = append(recs, schema.Record{Time: time.Duration(i) * 10 * time.Millisecond, Op: schema.OpWrite, Size: 4096,
				Tier: schema.TierCPU, Key: []byte(fmt.Sprint("u", i)), Phase: schema.PhasePrefill, Request: 1, User: 1})
		}
		return recs
	}
	for _, tc := range []struct {
		name      string
		userless  int
		criterion bool
	}{
		{name: "beside rows at trace times", userless: 20, criterion: true},
		{name: "users alone", criterion: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				recs := user(15)
				for i := range tc.userless {
					recs = append(recs, schema.Record{Time: time.Duration(i)*100*time.Millisecond + 5*time.Millisecond, Op: schema.OpWrite,
						Size: 4096, Tier: schema.TierCPU, Key: []byte(fmt.Sprint("p", i)), Phase: schema.PhasePrefill})
				}
				cfg := closedConfig()
				cfg.Speed, cfg.Workers = 1, 8
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 100*time.Millisecond)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Lag.P95US < 1e6 {
					t.Fatalf("lag p95 %.0f us: the test wants the user's rows over a second behind their offsets", res.Lag.P95US)
				}
				h := res.Summary.StorageHealth
				c, ok := criterion(h, scheduledCriterion)
				sl := res.ClosedLoop.ScheduledLag
				switch {
				case !tc.criterion && (ok || sl != nil):
					t.Errorf("criteria %+v, scheduled_lag %+v: a closed loop of users' rows alone has no schedule to judge", h.Criteria, sl)
				case tc.criterion && (!ok || !c.Passed || sl == nil || sl.Count != int64(tc.userless)):
					t.Errorf("criteria %+v, scheduled_lag %+v: want %q passed on the %d rows of no user", h.Criteria, sl, scheduledCriterion, tc.userless)
				}
				if h.OverallStatus != results.HealthPass {
					t.Errorf("storage_health %s (%v): a user's rows behind their request's offsets are not behind a schedule", h.OverallStatus, h.Reasons)
				}
			})
		})
	}
}

// TestClosedLoopCarriedRowsScheduled: under --users, a left-out user's
// request that demotes a replayed user's object carries rows the loop
// releases at their trace times (so that the object is where the trace
// has it when its user reads it again): they have a schedule, and their
// lag is the scheduled rows'. With every user replayed, the same rows
// are their user's, released with its request, and keep none.
func TestClosedLoopCarriedRowsScheduled(t *testing.T) {
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	recs := []schema.Record{
		user(rec(0, schema.OpWrite, 4096, schema.TierCPU, "a", schema.PhasePrefill, 1), 1),
		user(rec(time.Millisecond, schema.OpWrite, 4096, schema.TierCPU, "b", schema.PhasePrefill, 2), 2),
		user(rec(2*time.Millisecond, schema.OpRead, 4096, schema.TierCPU, "a", schema.PhaseEvict, 2), 2),
		user(rec(2*time.Millisecond, schema.OpWrite, 4096, schema.TierNVMe, "a", schema.PhaseEvict, 2), 2),
		user(rec(3*time.Millisecond, schema.OpRead, 4096, schema.TierNVMe, "a", schema.PhaseDecode, 3), 1),
	}
	for _, tc := range []struct {
		users int
		want  int64 // rows in scheduled_lag
	}{{users: 1, want: 2}, {users: 0, want: 0}} {
		t.Run(fmt.Sprint("users=", tc.users), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := closedConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", "disk"}
				cfg.Speed, cfg.Users = 1, tc.users
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20), "disk": newRAM(t, 16<<20)})
				if err != nil {
					t.Fatal(err)
				}
				var got int64
				if sl := res.ClosedLoop.ScheduledLag; sl != nil {
					got = sl.Count
				}
				_, judged := criterion(res.Summary.StorageHealth, scheduledCriterion)
				if got != tc.want || judged != (tc.want > 0) {
					t.Errorf("scheduled_lag of %d rows, criterion %v; want %d rows (the demotion a left-out user's request carries), judged: %v",
						got, judged, tc.want, tc.want > 0)
				}
			})
		})
	}
}
