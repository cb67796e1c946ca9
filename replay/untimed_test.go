package replay_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// slowWriter is a backend whose writes sleep d on the objects slow picks
// (by name) when they are created: only the writes a test is about are
// slow.
type slowWriter struct {
	backend.Backend
	d    time.Duration
	slow func(key string) bool
}

func (b slowWriter) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil || !create || !b.slow(key) {
		return o, err
	}
	return slowWrites{o, b.d}, nil
}

type slowWrites struct {
	backend.Object
	d time.Duration
}

func (o slowWrites) WriteAt(p []byte, off int64) (int, error) {
	time.Sleep(o.d)
	return o.Object.WriteAt(p, off)
}

// recreated picks an object created once before (a rematerialised one).
func recreated() func(key string) bool {
	var mu sync.Mutex
	created := map[string]int{}
	return func(key string) bool {
		mu.Lock()
		defer mu.Unlock()
		created[key]++
		return created[key] > 1
	}
}

// named picks the object named key.
func named(key string) func(string) bool { return func(k string) bool { return k == key } }

// TestRematerialisationUntimed: a read of an object kvreplay evicted
// itself (--capacity) writes it again first, untimed (design section 4):
// the write's time is in none of the read's figures, neither its latency
// from schedule, the lag, nor its request's latency. Here that write
// takes 100 ms; the read itself takes none.
func TestRematerialisationUntimed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 100 * time.Millisecond
		var recs []schema.Record
		for i := range 6 {
			recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("k", i), schema.PhasePrefill, uint64(i+1)))
		}
		recs = append(recs, rec(time.Second, schema.OpRead, 1<<20, schema.TierNVMe, "k0", schema.PhaseDecode, 9))
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
		cfg.Speed, cfg.Capacity, cfg.Workers = 1, 4<<20, 1
		b := slowWriter{newRAM(t, 64<<20), delay, recreated()}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.Rematerialised != 1 {
			t.Fatalf("rematerialised %d, want 1", res.Replay.Rematerialised)
		}
		reads := 0
		for _, c := range res.Cells {
			if c.Op == schema.OpRead.String() {
				reads++
				if c.FromSchedule.MaxUS >= float64(delay.Microseconds()) {
					t.Errorf("read latency from schedule max %.0f us: the untimed write is in it", c.FromSchedule.MaxUS)
				}
			}
		}
		if reads != 1 {
			t.Errorf("%d read cells, want 1", reads)
		}
		if res.Lag.MaxUS >= float64(delay.Microseconds()) {
			t.Errorf("lag max %.0f us: the untimed write is in it", res.Lag.MaxUS)
		}
		if l := res.Requests.Latency; res.Requests.Count != 7 || l.MaxUS >= float64(delay.Microseconds()) {
			t.Errorf("%d requests, latency max %.0f us; want 7, without the untimed write", res.Requests.Count, l.MaxUS)
		}
	})
}

// TestUntimedWriteWithinSlack: a request's read rewrites an object
// kvreplay evicted (100 ms, untimed), and its next row is due 500 ms
// after its first: the rewrite ended 400 ms before that row was due and
// delayed nothing, so the request took its 500 ms, as without the
// rewrite. Taking the rewrite's whole time off the request's latency
// made it 400 ms, shorter than its rows' own schedule.
func TestUntimedWriteWithinSlack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const delay = 100 * time.Millisecond
		var recs []schema.Record
		for i := range 6 {
			recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("k", i), schema.PhasePrefill, uint64(i+1)))
		}
		recs = append(recs, rec(time.Second, schema.OpRead, 1<<20, schema.TierNVMe, "k0", schema.PhaseDecode, 9),
			rec(1500*time.Millisecond, schema.OpRead, 1<<20, schema.TierNVMe, "k5", schema.PhaseDecode, 9))
		cfg := replay.DefaultConfig()
		cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
		cfg.Speed, cfg.Capacity, cfg.Workers = 1, 4<<20, 1
		b := slowWriter{newRAM(t, 64<<20), delay, recreated()}
		res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
		if err != nil {
			t.Fatal(err)
		}
		if res.Replay.Rematerialised != 1 {
			t.Fatalf("rematerialised %d, want 1", res.Replay.Rematerialised)
		}
		if l := res.Requests.Latency; res.Requests.Count != 7 || l.MaxUS < 500_000 || l.MaxUS >= 500_000+float64(delay.Microseconds()) {
			t.Errorf("%d requests, latency max %.0f us; want 7, the last 500 ms: its second row's due time, which the untimed write did not delay", res.Requests.Count, l.MaxUS)
		}
	})
}

// TestCutRequestPastTarget: the --duration window closes on an
// interactive request with a row left. When its released row took
// 300 ms, past the class's 50 ms target, it missed the target whatever
// its last row would have taken, and counts as a request that missed it;
// leaving it out, as the window's cut requests were, made the class look
// compliant. When its row was quick its outcome is not known, and it is
// left out.
func TestCutRequestPastTarget(t *testing.T) {
	for _, slowRow := range []bool{true, false} {
		t.Run(fmt.Sprint("slow=", slowRow), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { cutRequest(t, slowRow) })
		})
	}
}

func cutRequest(t *testing.T, slowRow bool) {
	row := func(at time.Duration, key string) schema.Record {
		r := rec(at, schema.OpWrite, 4096, schema.TierCPU, key, schema.PhasePrefill, 1)
		r.QoS = schema.QoSInteractive
		return r
	}
	recs := []schema.Record{row(0, "first"), row(5*time.Second, "last")}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.Duration = 1, time.Second
	var b backend.Backend = newRAM(t, 16<<20)
	if slowRow {
		b = slowWriter{b, 300 * time.Millisecond, named("1_first")}
	}
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.TotalRequests != 0 || res.Summary.RequestsPerSecond != 0 {
		t.Errorf("total requests %d, %g/s: a cut request did not complete", res.Summary.TotalRequests, res.Summary.RequestsPerSecond)
	}
	if !slowRow {
		if res.Replay.RequestsCut != 1 || res.Replay.RequestsCutLate != 0 || res.Requests.Count != 0 {
			t.Errorf("requests cut %d, of them late %d, counted %d; want 1, 0, 0", res.Replay.RequestsCut, res.Replay.RequestsCutLate, res.Requests.Count)
		}
		return
	}
	if res.Replay.RequestsCut != 1 || res.Replay.RequestsCutLate != 1 || len(res.Requests.ByQoS) != 1 {
		t.Fatalf("requests cut %d, of them late %d, classes %+v; want 1, 1 and interactive's", res.Replay.RequestsCut, res.Replay.RequestsCutLate, res.Requests.ByQoS)
	}
	q := res.Requests.ByQoS[0]
	if q.Count != 1 || q.WithinTarget != 0 || q.Met || q.Latency.MaxUS < 300_000 {
		t.Errorf("interactive: %d requests, %d within target, met %v, max %.0f us; want the slow one, missing", q.Count, q.WithinTarget, q.Met, q.Latency.MaxUS)
	}
}
