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

// slowRewrites is a backend whose writes to an object created once
// before (a rematerialised one) sleep d: only the untimed writes are slow.
type slowRewrites struct {
	backend.Backend
	d       time.Duration
	mu      sync.Mutex
	created map[string]int
}

func (b *slowRewrites) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil || !create {
		return o, err
	}
	b.mu.Lock()
	b.created[key]++
	again := b.created[key] > 1
	b.mu.Unlock()
	if !again {
		return o, nil
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
		b := &slowRewrites{Backend: newRAM(t, 64<<20), d: delay, created: map[string]int{}}
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
