package replay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
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
	}
}

// TestClosedLoopThinkTime checks that a user's next request waits for the
// previous one and then the think time the trace recorded, where an open
// loop issues it at its trace time.
func TestClosedLoopThinkTime(t *testing.T) {
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
	// A loaded machine wakes late, never early.
	if gap := start1.Sub(end0); gap < think-5*time.Millisecond || gap > think+150*time.Millisecond {
		t.Errorf("request 1 started %v after request 0 ended; want the think time, %v", gap, think)
	}
}

// TestClosedLoopFasterSystem replays one trace closed-loop, bounded by
// --duration, on a fast and a slow device: the fast one completes more
// requests per second, and each says how many requests it left.
func TestClosedLoopFasterSystem(t *testing.T) {
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
		if res.WallS > 1.5 {
			t.Errorf("delay %v: a 0.4 s window ran %.2f s", d, res.WallS)
		}
		rps[d] = res.Summary.RequestsPerSecond
	}
	if r := rps[time.Millisecond] / rps[16*time.Millisecond]; r < 2 {
		t.Errorf("requests/s fast %.0f, slow %.0f: ratio %.2f, want at least 2", rps[time.Millisecond], rps[16*time.Millisecond], r)
	}
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
