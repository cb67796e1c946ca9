package replay_test

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestUnstartedRequestsMissTarget: a batch request of two rows is due
// every 10 ms; one worker runs them at once but for the request due at
// 1 s, whose first write takes 5 s. The window (4 tasks for one worker)
// then takes one more request, and the 3 s --duration window closes on
// 199 requests due and never started. Those due more than the class's
// 1 s target before the window's end (before 2 s) took at least that
// long: they count as missing it, as a cut request whose released rows
// passed it does (requests_cut_late), and in the SLO's attainment on its
// own target (500 ms: those due before 2.5 s); the others' outcome is not
// known, and they are cut. Before, none of them counted anywhere, and
// the class met its SLA on the 100 quick requests before the slow one.
func TestUnstartedRequestsMissTarget(t *testing.T) {
	const (
		gap    = 10 * time.Millisecond
		slowAt = 100 // the request due at 1 s
		window = 3 * time.Second
		slo    = 500 * time.Millisecond
	)
	var recs []schema.Record
	for i := range 1000 {
		at, key := time.Duration(i)*gap, fmt.Sprint("k", i)
		if i == slowAt {
			key = "slow"
		}
		recs = append(recs, rec(at, schema.OpWrite, 4096, schema.TierCPU, key, schema.PhasePrefill, uint64(i+1)),
			rec(at, schema.OpWrite, 4096, schema.TierCPU, key+"b", schema.PhasePrefill, uint64(i+1)))
	}
	synctest.Test(t, func(t *testing.T) {
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
		cfg.Speed, cfg.Workers, cfg.Duration = 1, 1, window
		cfg.SLO = results.SLO{All: slo}
		b := slowWriter{newRAM(t, 64<<20), 5 * time.Second, named("1_slow")}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
		if err != nil {
			t.Fatal(err)
		}
		// Released: the requests up to the slow one's next.
		const started = slowAt + 2
		if res.Replay.Rows != 2*started {
			t.Fatalf("%d rows released, want %d: the requests up to the slow one's next", res.Replay.Rows, 2*started)
		}
		var cut, late, sloLate int64
		for i := started; time.Duration(i)*gap <= window; i++ {
			took := window - time.Duration(i)*gap
			cut++
			if took > results.QoSTarget(schema.QoSBatch) {
				late++
			}
			if took > slo {
				sloLate++
			}
		}
		if cut != 199 || late != 98 || sloLate != 148 {
			t.Fatalf("the test's arithmetic: %d unstarted, %d late, %d past the SLO", cut, late, sloLate)
		}
		r := res.Replay
		if r.RequestsCut != cut || r.RequestsCutLate != late {
			t.Errorf("requests cut %d, of them late %d; want %d and %d: the requests due and never started", r.RequestsCut, r.RequestsCutLate, cut, late)
		}
		if res.Requests.Count != started+late || res.Summary.TotalRequests != started {
			t.Errorf("requests %d, completed %d; want %d, %d", res.Requests.Count, res.Summary.TotalRequests, started+late, started)
		}
		if len(res.Requests.ByQoS) != 1 {
			t.Fatalf("classes %+v, want batch's", res.Requests.ByQoS)
		}
		// The 100 quick ones are within target; the slow one and the one
		// after it are not, nor are the late ones.
		if q := res.Requests.ByQoS[0]; q.Count != started+late || q.WithinTarget != slowAt || q.Met {
			t.Errorf("batch: %d requests, %d within target, met %v; want %d, %d, not met", q.Count, q.WithinTarget, q.Met, started+late, slowAt)
		}
		if s := res.Requests.SLO; s == nil || s.Count != started+sloLate || s.Within != slowAt {
			t.Errorf("SLO %+v: want %d requests, %d within", s, started+sloLate, slowAt)
		}
		want := fmt.Sprintf("; of their requests, %d never started: each is cut", cut)
		found := false
		for _, w := range res.Warnings {
			found = found || strings.Contains(w, want)
		}
		if !found {
			t.Errorf("warnings %q: want rows_missed's to say %q", res.Warnings, want)
		}
	})
}

// TestShardKeySplitCountsReleased: sharded by key on two ranks, requests
// of two rows (two objects, often on two ranks) are due every 10 ms of a
// 10 s trace, and a --duration window of just under 1 s takes the first
// 100. The
// warning that requests are split among the ranks counts the requests
// each rank ran, those it released rows of: the ranks' counts add up to
// the 100 requests, a split one counted on both ranks. Before, the sharder
// counted every request it read, the batches read ahead of the window's
// end included.
func TestShardKeySplitCountsReleased(t *testing.T) {
	const (
		gap    = 10 * time.Millisecond
		window = 995 * time.Millisecond // paced from the first row: between two requests
		ranks  = 2
	)
	var recs []schema.Record
	for i := range 1000 {
		at := time.Duration(i) * gap
		recs = append(recs, rec(at, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("a", i), schema.PhasePrefill, uint64(i+1)),
			rec(at, schema.OpWrite, 4096, schema.TierCPU, fmt.Sprint("b", 3*i), schema.PhasePrefill, uint64(i+1)))
	}
	var ran, split int64
	for rank := range ranks {
		synctest.Test(t, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed, cfg.Duration = 1, window
			cfg.Rank, cfg.Ranks, cfg.Shard = rank, ranks, replay.ShardKey
			res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": newRAM(t, 16<<20)})
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Replay; r.RowsMissed != 0 || r.RequestsCut != 0 {
				t.Fatalf("%d rows missed, %d requests cut; want none: the test's premise", r.RowsMissed, r.RequestsCut)
			}
			var s, n int64
			for _, w := range res.Warnings {
				if _, err := fmt.Sscanf(w, "--shard key: %d of the %d requests this rank ran", &s, &n); err == nil {
					break
				}
			}
			if n != res.Summary.TotalRequests || s == 0 {
				t.Errorf("rank %d: %d of %d requests split; want some of the %d it ran: %q", rank, s, n, res.Summary.TotalRequests, res.Warnings)
			}
			ran += n
			split += s
		})
	}
	// Each split request is on both ranks, and counted split on each.
	if ran != 100+split/2 {
		t.Errorf("the ranks ran %d requests, %d of them split; want the window's 100, a split one on both ranks", ran, split)
	}
}
