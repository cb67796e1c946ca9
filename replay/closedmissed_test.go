package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/schema"
)

// TestClosedLoopUserlessRowsMissed: a closed loop releases the rows of no
// user (preconditioning, RAG ingestion, request traces' requests) at
// their trace times, as an open loop does. Ten such rows are due 100 ms
// apart from 1 ms; one worker takes 300 ms an operation, and the run's
// window of tasks holds four. The 1 s --duration window closes with four
// of them due and never released: as in the open loop, each is
// rows_missed and counts in the lag, with a warning, and the rows
// released and missed add up to the ten. Before, the closed loop dropped
// them uncounted. With the reader's buffer full of a user's rows when the
// window closes (rows read ahead: closedBuffer), the rows of no user not
// read yet are counted by reading on, as the open loop does.
func TestClosedLoopUserlessRowsMissed(t *testing.T) {
	userless := func(i int, at time.Duration) schema.Record {
		return schema.Record{Time: at, Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte(fmt.Sprint("p", i)), Phase: schema.PhasePrefill}
	}
	user := func(i int, at time.Duration) schema.Record {
		return schema.Record{Time: at, Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte(fmt.Sprint("u", i)),
			Phase: schema.PhasePrefill, Request: 1, User: 1, QoS: schema.QoSBatch}
	}
	for _, tc := range []struct {
		name      string
		userRows  int // of the user's one request, at 0
		wantRows  int64
		wantMiss  int64
		wantLagGE time.Duration
	}{
		// The user's request and three rows of no user fill the window of
		// four tasks (1 worker): the rows of no user due from 301 ms on
		// wait for room, and by 1 s, three ran (at 0, 300 and 600 ms)
		// and the four due from 601 ms never did.
		{name: "read", userRows: 1, wantRows: 7, wantMiss: 4},
		// 300,000 rows of the user's request fill the buffer: the rows of
		// no user behind them are not read when the window closes.
		{name: "not read", userRows: 300_000, wantMiss: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var recs []schema.Record
				for i := range tc.userRows {
					recs = append(recs, user(i, 0))
				}
				for i := range 10 {
					recs = append(recs, userless(i, time.Duration(i)*100*time.Millisecond+time.Millisecond))
				}
				cfg := closedConfig()
				cfg.Speed, cfg.Workers, cfg.Duration = 1, 1, time.Second
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 16<<20), 300*time.Millisecond)})
				if err != nil {
					t.Fatal(err)
				}
				r := res.Replay
				if r.RowsMissed != tc.wantMiss {
					t.Errorf("rows_missed %d (%d rows released), want %d", r.RowsMissed, r.Rows, tc.wantMiss)
				}
				// Every row due by the window's end is released or missed
				// (the user's rows are released with the request).
				if tc.userRows == 1 && r.Rows+r.RowsMissed != 11 {
					t.Errorf("rows %d and rows_missed %d, want the 11 rows due by the window's end", r.Rows, r.RowsMissed)
				}
				if res.Lag.Count < r.RowsMissed {
					t.Errorf("lag of %d rows, want the %d missed among them", res.Lag.Count, r.RowsMissed)
				}
				want := fmt.Sprintf("--closed-loop: %d rows of no user", tc.wantMiss)
				if !strings.Contains(strings.Join(res.Warnings, "\n"), want) {
					t.Errorf("warnings %q: want one that says %q", res.Warnings, want)
				}
			})
		})
	}
}
