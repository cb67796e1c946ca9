package replay_test

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// userTrace is replaytest.UserRecords of 64 KiB objects on Tier-1, batch.
func userTrace(users, requests int, gap time.Duration) []schema.Record {
	return replaytest.UserRecords(users, requests, gap, 64<<10, schema.TierCPU, schema.QoSBatch)
}

// callsOf groups a recorder's reads and writes by object key (the tier
// prefix removed).
func callsOf(log []fault.Call) map[string][]fault.Call {
	m := map[string][]fault.Call{}
	for _, c := range log {
		if c.Op&(fault.OpRead|fault.OpWrite) == 0 {
			continue
		}
		k := c.Key[strings.IndexByte(c.Key, '_')+1:]
		m[k] = append(m[k], c)
	}
	return m
}

// span is the first start and the last end of calls.
func span(calls []fault.Call) (start, end time.Time) {
	for i, c := range calls {
		if i == 0 || c.Start.Before(start) {
			start = c.Start
		}
		if c.End.After(end) {
			end = c.End
		}
	}
	return start, end
}

func closedConfig() replay.Config {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed = 0
	cfg.ClosedLoop = true
	return cfg
}

// TestClosedLoopOrder proves with a recording backend that a closed loop
// runs each user's requests one after another, and that the users run
// side by side; the same trace open-loop overlaps a user's requests, so
// the test fails if the loop is not closed.
func TestClosedLoopOrder(t *testing.T) {
	const users, requests = 4, 6
	recs := userTrace(users, requests, 0)
	for _, closed := range []bool{true, false} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := closedConfig()
				cfg.ClosedLoop = closed
				rec := fault.Record(fault.Delay(newRAM(t, 64<<20), 2*time.Millisecond))
				res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rec})
				if err != nil {
					t.Fatal(err)
				}
				calls := callsOf(rec.Log())
				overlaps, parallel := 0, 0
				for u := 1; u <= users; u++ {
					for k := 1; k < requests; k++ {
						_, prevEnd := span(calls[fmt.Sprintf("u%dr%d", u, k-1)])
						start, _ := span(calls[fmt.Sprintf("u%dr%d", u, k)])
						if start.Before(prevEnd) {
							overlaps++
						}
					}
				}
				// Users run side by side: user 2's first request starts before
				// user 1's last one ends.
				s2, _ := span(calls["u2r0"])
				if _, e1 := span(calls[fmt.Sprintf("u1r%d", requests-1)]); s2.Before(e1) {
					parallel++
				}
				if closed {
					if overlaps != 0 {
						t.Errorf("%d requests started before their user's previous one ended", overlaps)
					}
					if parallel == 0 {
						t.Errorf("the users ran one after another, not side by side")
					}
					cl := res.ClosedLoop
					if cl == nil || cl.Users != users || cl.RequestsCompleted != users*requests || cl.RequestsLeft != 0 ||
						cl.TokensGenerated != 10*users*requests || len(cl.PerUser) != users || !res.Replay.ClosedLoop {
						t.Fatalf("closed_loop %+v", cl)
					}
					if res.Summary.StorageThroughputTokensPerSec <= 0 {
						t.Errorf("storage throughput %v tokens/s; want the reference's figure", res.Summary.StorageThroughputTokensPerSec)
					}
					return
				}
				if overlaps == 0 {
					t.Errorf("open loop: no user's requests overlapped; the test cannot tell the loops apart")
				}
				if res.ClosedLoop != nil {
					t.Errorf("open loop has a closed_loop block")
				}
			})
		})
	}
}

// TestClosedLoopThinkTime checks that a user's next request waits for the
// previous one and then the think time the trace recorded, where an open
// loop issues it at its trace time. The run is in a synctest bubble, whose
// clock moves only when every goroutine of the run waits: the gap is the
// think time exactly, at any load.
func TestClosedLoopThinkTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const think, delay = 300 * time.Millisecond, 40 * time.Millisecond
		recs := userTrace(1, 2, think) // request 0 at 0, request 1 at think
		cfg := closedConfig()
		cfg.Speed = 1
		rec := fault.Record(fault.Delay(newRAM(t, 64<<20), delay))
		if _, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rec}); err != nil {
			t.Fatal(err)
		}
		calls := callsOf(rec.Log())
		_, end0 := span(calls["u1r0"])
		start1, _ := span(calls["u1r1"])
		if gap := start1.Sub(end0); gap != think {
			t.Errorf("request 1 started %v after request 0 ended; want the think time, %v", gap, think)
		}
		// Open loop: request 1 starts at its trace time, request 0's
		// delay or not.
		cfg.ClosedLoop = false
		rec = fault.Record(fault.Delay(newRAM(t, 64<<20), delay))
		begin := time.Now()
		if _, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rec}); err != nil {
			t.Fatal(err)
		}
		start1, _ = span(callsOf(rec.Log())["u1r1"])
		if at := start1.Sub(begin); at != think {
			t.Errorf("open loop: request 1 started at %v, want its trace time %v", at, think)
		}
	})
}

// TestClosedLoopFasterSystem replays one trace closed-loop, bounded by
// --duration, on a fast and a slow device: the fast one completes more
// requests per second, and each says how many requests it left. On the
// bubble's clock the window ends at 0.4 s exactly, and what it released
// ends within a request's time after.
func TestClosedLoopFasterSystem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := userTrace(4, 400, time.Millisecond)
		rps := map[time.Duration]float64{}
		for _, d := range []time.Duration{time.Millisecond, 16 * time.Millisecond} {
			cfg := closedConfig()
			cfg.Duration = 400 * time.Millisecond
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": fault.Delay(newRAM(t, 64<<20), d)})
			if err != nil {
				t.Fatal(err)
			}
			cl := res.ClosedLoop
			if !res.Complete || cl.RequestsLeft <= 0 || cl.RequestsLeft+cl.RequestsCompleted != 1600 || cl.WindowS != 0.4 {
				t.Fatalf("delay %v: complete %v, closed_loop %+v", d, res.Complete, cl)
			}
			// A request of userTrace is a few rows in sequence: at most
			// 8 delays past the window.
			if max := 0.4 + 8*d.Seconds(); res.WallS < 0.4 || res.WallS > max {
				t.Errorf("delay %v: a 0.4 s window ran %.3f s, want 0.4 to %.3f", d, res.WallS, max)
			}
			rps[d] = res.Summary.RequestsPerSecond
		}
		if r := rps[time.Millisecond] / rps[16*time.Millisecond]; r < 2 {
			t.Errorf("requests/s fast %.0f, slow %.0f: ratio %.2f, want at least 2", rps[time.Millisecond], rps[16*time.Millisecond], r)
		}
	})
}

// TestClosedLoopUsers replays only the first users to appear.
func TestClosedLoopUsers(t *testing.T) {
	recs := userTrace(5, 3, 0)
	cfg := closedConfig()
	cfg.Users = 2
	rec := fault.Record(newRAM(t, 64<<20))
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": rec})
	if err != nil {
		t.Fatal(err)
	}
	for k := range callsOf(rec.Log()) {
		if !strings.HasPrefix(k, "u1r") && !strings.HasPrefix(k, "u2r") {
			t.Errorf("user outside --users 2 replayed: %s", k)
		}
	}
	if cl := res.ClosedLoop; cl.Users != 2 || cl.UserLimit != 2 || cl.RequestsCompleted != 6 || cl.RequestsLeft != 0 {
		t.Errorf("closed_loop %+v", cl)
	}
}

// TestClosedLoopNeedsUsers refuses a trace without a User column, on a
// file (the prescan) and on a pipe (the run), naming why.
func TestClosedLoopNeedsUsers(t *testing.T) {
	recs := []schema.Record{rec(0, schema.OpWrite, 4096, schema.TierCPU, "k", schema.PhasePrefill, 1)}
	var buf strings.Builder
	buf.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS\n")
	for _, r := range recs {
		fmt.Fprintf(&buf, "%.6f,%s,%d,%s,%s,%s,%d,%s\n", r.Time.Seconds(), r.Op, r.Size, r.Tier, r.Key, r.Phase, r.Request, r.QoS)
	}
	src := textTrace(buf.String())
	cfg := closedConfig()
	if _, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src}); !errors.Is(err, replay.ErrNoUsers) {
		t.Errorf("prescan: %v, want ErrNoUsers", err)
	}
	cfg.Prescan = false
	plan, err := replay.Prepare(t.Context(), &cfg, []replay.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	_, err = replay.Run(t.Context(), &cfg, plan, []replay.Source{src}, map[string]backend.Backend{"ram": newRAM(t, 64<<20)}, replay.Hooks{})
	if !errors.Is(err, replay.ErrNoUsers) || !strings.Contains(err.Error(), "User column") {
		t.Errorf("run: %v, want ErrNoUsers", err)
	}
}

// textTrace is a Source reading the trace text s.
func textTrace(s string) replay.Source {
	return replay.Source{Name: "text", Rescan: true, Open: func() (*trace.Reader, error) {
		return trace.NewReader(strings.NewReader(s)), nil
	}}
}

// mixedUsers is a trace of 8 users whose first 4 to appear are batch
// class, then 2 interactive and 2 responsive, 3 requests each.
func mixedUsers() []schema.Record {
	recs := userTrace(8, 3, 0)
	for i := range recs {
		switch u := recs[i].User; {
		case u <= 4:
			recs[i].QoS = schema.QoSBatch
		case u <= 6:
			recs[i].QoS = schema.QoSInteractive
		default:
			recs[i].QoS = schema.QoSResponsive
		}
	}
	return recs
}

// TestClosedLoopUsersKeepQoSMix replays --users N of a trace whose first
// users are all batch class: the users replayed are a sample of every
// class, the lowest IDs of each, not the first N; a trace the plan
// did not read replays the first N, and says so.
func TestClosedLoopUsersKeepQoSMix(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want []uint64
	}{
		{1, []uint64{1}},
		{3, []uint64{1, 5, 7}},
		{4, []uint64{1, 2, 5, 7}},
		{6, []uint64{1, 2, 3, 5, 6, 7}},
		{8, []uint64{1, 2, 3, 4, 5, 6, 7, 8}},
	} {
		cfg := closedConfig()
		cfg.Users = tt.n
		res, err := runReplay(t, cfg, memTrace(t, mixedUsers()), map[string]backend.Backend{"ram": newRAM(t, 64<<20)})
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, u := range res.ClosedLoop.PerUser {
			got = append(got, u.User)
		}
		slices.Sort(got)
		if !slices.Equal(got, tt.want) || res.ClosedLoop.RequestsCompleted != int64(3*len(tt.want)) {
			t.Errorf("--users %d replayed users %v (%d requests), want %v", tt.n, got, res.ClosedLoop.RequestsCompleted, tt.want)
		}
	}
	cfg := closedConfig()
	cfg.Users, cfg.Prescan = 3, false
	res, err := runReplay(t, cfg, memTrace(t, mixedUsers()), map[string]backend.Backend{"ram": newRAM(t, 64<<20)})
	if err != nil {
		t.Fatal(err)
	}
	if cl := res.ClosedLoop; cl.Users != 3 || cl.PerUser[2].User != 3 || !strings.Contains(strings.Join(res.Warnings, "\n"), "not a sample that keeps the trace's QoS mix") {
		t.Errorf("unscanned trace, --users 3: %+v, warnings %q", cl.PerUser, res.Warnings)
	}
}

// TestSelectUsers checks the stratified sample on its own: each class's
// share of any n within one user of its share of the trace (once n covers
// the classes), every class present from n = number of classes, the users
// of n among those of n+1, and the first of each class taken first.
func TestSelectUsers(t *testing.T) {
	classes := map[schema.QoS]int{schema.QoSBatch: 61, schema.QoSInteractive: 7, schema.QoSResponsive: 29, schema.QoSNone: 3}
	var users []replay.User
	id := uint64(0)
	// Batch users first, then the rest interleaved.
	for range classes[schema.QoSBatch] {
		id++
		users = append(users, replay.User{ID: id, QoS: schema.QoSBatch})
	}
	for i := 0; i < 29; i++ {
		for _, q := range []schema.QoS{schema.QoSInteractive, schema.QoSResponsive, schema.QoSNone} {
			if i < classes[q] {
				id++
				users = append(users, replay.User{ID: id, QoS: q})
			}
		}
	}
	total := len(users)
	prev := map[uint64]bool{}
	for n := 1; n <= total; n++ {
		sel := replay.SelectUsers(users, n)
		if len(sel) != n {
			t.Fatalf("n %d: %d users", n, len(sel))
		}
		got := map[schema.QoS]int{}
		now := map[uint64]bool{}
		for _, u := range sel {
			got[u.QoS]++
			now[u.ID] = true
		}
		for id := range prev {
			if !now[id] {
				t.Fatalf("n %d: user %d of n-1 left the sample", n, id)
			}
		}
		prev = now
		for q, c := range classes {
			share := float64(n) * float64(c) / float64(total)
			if n >= len(classes) && (got[q] < 1 || math.Abs(float64(got[q])-share) > 1.5) {
				t.Errorf("n %d: %d %q users, share %.2f", n, got[q], q, share)
			}
		}
		// Within a class, in the order of their IDs (here, of their appearance).
		var last [schema.NumQoS]uint64
		for _, u := range users {
			if now[u.ID] {
				if last[u.QoS] == ^uint64(0) {
					t.Fatalf("n %d: a %q user taken after one skipped", n, u.QoS)
				}
				last[u.QoS] = u.ID
			} else {
				last[u.QoS] = ^uint64(0)
			}
		}
	}
	if got := replay.SelectUsers(users, 0); len(got) != total {
		t.Errorf("n 0: %d users, want all", len(got))
	}
}

// TestClosedLoopUsersKeepTheirEvictions replays --users 1 of a trace in
// which the trace's LRU demotes user 1's object during user 2's request
// (the Evict pair rides in the request that caused it): the pair is
// replayed, at its trace time, so that user 1's later read finds the
// object on Tier-2, where the trace reads it, and is measured there; user
// 2's own rows, its read of user 1's object too, are not replayed.
// Before, the pair went with user 2's request, and the read, counted as
// Tier-2's, read the object in Tier-1's RAM, with a warning that blamed
// the trace's Evict pairs. On a file (the users sampled from the plan)
// and a pipe (the first users to appear).
func TestClosedLoopUsersKeepTheirEvictions(t *testing.T) {
	user := func(r schema.Record, u uint64) schema.Record { r.User = u; return r }
	ms := time.Millisecond
	recs := []schema.Record{
		user(rec(0, schema.OpWrite, 1<<20, schema.TierCPU, "a", schema.PhasePrefill, 1), 1),
		user(rec(1*ms, schema.OpRead, 1<<20, schema.TierCPU, "a", schema.PhaseEvict, 2), 2),
		user(rec(1*ms, schema.OpWrite, 1<<20, schema.TierNVMe, "a", schema.PhaseEvict, 2), 2),
		user(rec(1*ms, schema.OpWrite, 1<<20, schema.TierCPU, "b", schema.PhasePrefill, 2), 2),
		user(rec(1500*time.Microsecond, schema.OpRead, 1<<20, schema.TierNVMe, "a", schema.PhaseDecode, 4), 2),
		user(rec(2*ms, schema.OpRead, 1<<20, schema.TierNVMe, "a", schema.PhaseDecode, 3), 1),
	}
	for _, prescan := range []bool{true, false} {
		cfg := closedConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", "nvme"}
		cfg.Users, cfg.Prescan = 1, prescan
		cpu, nvme := fault.Record(newRAM(t, 64<<20)), fault.Record(newRAM(t, 64<<20))
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": cpu, "nvme": nvme})
		if err != nil {
			t.Fatal(err)
		}
		cells := map[string]int64{}
		for _, c := range res.Cells {
			cells[c.Tier+" "+c.Op+" "+c.Phase] = c.Ops
		}
		want := map[string]int64{"Tier-1 Write Prefill": 1, "Tier-1 Read Evict": 1, "Tier-2 Write Evict": 1, "Tier-2 Read Decode": 1}
		if !maps.Equal(cells, want) || res.Replay.RowsDone != 4 {
			t.Errorf("prescan %v: cells %v, %d rows done; want %v and 4", prescan, cells, res.Replay.RowsDone, want)
		}
		for _, w := range res.Warnings {
			if strings.Contains(w, "named a tier their object was not on") {
				t.Errorf("prescan %v: %s", prescan, w)
			}
		}
		if _, ok := callsOf(cpu.Log())["b"]; ok {
			t.Errorf("prescan %v: user 2's object b was written", prescan)
		}
		if len(callsOf(nvme.Log())["a"]) == 0 {
			t.Errorf("prescan %v: Tier-2's backend never saw a: %v", prescan, callsOf(nvme.Log()))
		}
	}
}
