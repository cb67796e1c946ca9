package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// TestPlanSharesTheRunsOrigin: traces replayed together are merged by
// time and paced from one origin, the first row the run replays of them
// all; the plan measures its --duration window from the same row. Before,
// it measured each trace's from the trace's own first row: with trace A at
// 0-0.8 s and trace B at 10-10.8 s, --duration 2s replayed A alone (B's
// rows were due 10 s into a 2 s window), while the plan counted, sized and
// prepared B's rows too, and called the 0.8 s it thought it covered the
// whole trace. Each case checks the plan's rows and bytes against what the
// run released and moved, the plan's span against the merged trace's, and
// that the result names a trace the window reached no row of (a complete
// run of its window, it otherwise read as a replay of both traces).
func TestPlanSharesTheRunsOrigin(t *testing.T) {
	const size = 64 << 10
	// rows writes and reads n objects of trace name, 0.1 s apart from at,
	// in request req (0: none) of user user (0: none).
	rows := func(name string, at time.Duration, n int, req, user uint64) []schema.Record {
		var recs []schema.Record
		for i := range n {
			r := rec(at+time.Duration(i)*100*time.Millisecond, schema.OpWrite, size, schema.TierCPU, fmt.Sprintf("%s%d", name, i), schema.PhasePrefill, req+uint64(i)*user)
			r.User, r.Tokens = user, 10
			recs = append(recs, r)
		}
		return recs
	}
	cases := []struct {
		name     string
		a, b     []schema.Record
		closed   bool
		duration time.Duration
		rows     int64 // the rows the run releases
		// span is the window's, from the origin to its last row; whole the
		// traces', first row to last.
		span, whole time.Duration
		unreached   string // the trace the window reaches no row of
	}{
		{"B starts past the window", rows("a", 0, 9, 0, 0), rows("b", 10*time.Second, 9, 0, 0), false, 2 * time.Second, 9, 800 * time.Millisecond, 10800 * time.Millisecond, "B"},
		{"B first, starts past the window", rows("b", 10*time.Second, 9, 0, 0), rows("a", 0, 9, 0, 0), false, 2 * time.Second, 9, 800 * time.Millisecond, 10800 * time.Millisecond, "A"},
		{"B starts inside the window", rows("a", 0, 9, 0, 0), rows("b", time.Second, 9, 0, 0), false, 1450 * time.Millisecond, 14, 1400 * time.Millisecond, 1800 * time.Millisecond, ""},
		// The open loop releases no row past the window, even of a
		// request that started in it (the run cuts the request): before,
		// the plan kept the request whole.
		{"B's request crosses the window", rows("a", 0, 9, 0, 0), rows("b", time.Second, 9, 7, 0), false, 1450 * time.Millisecond, 14, 1400 * time.Millisecond, 1800 * time.Millisecond, ""},
		{"A's request crosses the window", rows("a", 0, 9, 7, 0), rows("b", 10*time.Second, 9, 0, 0), false, 450 * time.Millisecond, 5, 400 * time.Millisecond, 10800 * time.Millisecond, "B"},
		// A closed loop paces each user's first request from the same
		// origin: user 2's, at 10 s, is not released in a 2 s window.
		{"closed loop, B's user past the window", rows("a", 0, 9, 1, 1), rows("b", 10*time.Second, 9, 1, 2), true, 2 * time.Second, 9, 800 * time.Millisecond, 10800 * time.Millisecond, "B"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := replay.DefaultConfig()
				cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
				cfg.Speed, cfg.Duration, cfg.ClosedLoop = 1, c.duration, c.closed
				if err := cfg.Validate(); err != nil {
					t.Fatal(err)
				}
				a, b := memTrace(t, c.a), memTrace(t, c.b)
				a.Name, b.Name = "A", "B"
				srcs := []replay.Source{a, b}
				plan, err := replay.Prepare(t.Context(), &cfg, srcs)
				if err != nil {
					t.Fatal(err)
				}
				res, err := replay.Run(t.Context(), &cfg, plan, srcs, map[string]backend.Backend{"ram": newRAM(t, 64<<20)}, replay.Hooks{})
				if err != nil {
					t.Fatal(err)
				}
				var moved int64
				for _, cell := range res.Cells {
					moved += cell.LogicalBytes
				}
				planned := plan.Written["ram"] + plan.Read["ram"]
				if res.Replay.RowsDone != c.rows || plan.WindowRows != c.rows || moved != planned || moved != c.rows*size {
					t.Errorf("the run released %d rows and moved %d bytes; the plan models %d rows and %d bytes; want %d rows and %d bytes in both",
						res.Replay.RowsDone, moved, plan.WindowRows, planned, c.rows, c.rows*size)
				}
				if !res.Complete || res.Replay.RowsMissed != 0 {
					t.Errorf("complete %v (%s), %d rows missed: want a complete run of its window, none missed", res.Complete, res.IncompleteReason, res.Replay.RowsMissed)
				}
				// The result says which trace the window left out whole.
				var said []string
				for _, w := range res.Warnings {
					if strings.Contains(w, " reached no row of ") {
						said = append(said, w)
					}
				}
				want := fmt.Sprintf("--duration %v at --speed 1 reached no row of %s: the traces replay merged by time, from the first row of them all, and its rows come after the window's %v of trace time",
					c.duration, c.unreached, c.duration)
				if c.unreached == "" && len(said) != 0 || c.unreached != "" && (len(said) != 1 || !strings.HasPrefix(said[0], want)) {
					t.Errorf("warnings %q; want %q", said, want)
				}
				if plan.Span != c.span || plan.Rows != int64(len(c.a)+len(c.b)) {
					t.Errorf("the plan: a span of %v, %d rows; want %v (the origin to the window's last row), %d", plan.Span, plan.Rows, c.span, len(c.a)+len(c.b))
				}
				whole := cfg
				whole.Duration = 0
				wp, err := replay.Prepare(t.Context(), &whole, srcs)
				if err != nil {
					t.Fatal(err)
				}
				if wp.Span != c.whole || wp.WindowRows != wp.Rows {
					t.Errorf("without --duration, the plan: a span of %v, %d of %d rows modelled; want %v (first row to last of the traces merged), all",
						wp.Span, wp.WindowRows, wp.Rows, c.whole)
				}
				if peak := plan.Peak["ram"]; peak != c.rows*size {
					t.Errorf("the plan's peak: %d bytes; want %d, the window's objects", peak, c.rows*size)
				}
			})
		})
	}
}
