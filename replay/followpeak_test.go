package replay_test

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// liveBytes is a backend that counts the bytes of the objects made and
// not yet removed, and their most.
type liveBytes struct {
	backend.Backend
	mu         sync.Mutex
	sizes      map[string]int64
	live, most int64
}

func (l *liveBytes) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := l.Backend.Open(key, size, create)
	if err != nil {
		return o, err
	}
	if create {
		l.mu.Lock()
		l.live += size - l.sizes[key]
		l.sizes[key] = size
		l.most = max(l.most, l.live)
		l.mu.Unlock()
	}
	return &liveObject{Object: o, l: l, key: key}, nil
}

type liveObject struct {
	backend.Object
	l   *liveBytes
	key string
}

func (o *liveObject) Remove() error {
	err := o.Object.Remove()
	o.l.mu.Lock()
	defer o.l.mu.Unlock()
	o.l.live -= o.l.sizes[o.key]
	delete(o.l.sizes, o.key)
	return err
}

// TestUnplannedArenaFollowsPeak: a trace read once (a pipe) sizes the RAM
// arena without the trace's peak (half the memory available); held to
// that alone, writes did not wait for the frees before them, and at
// --speed max the replay kept many times the trace's live bytes (a write
// and a delete of each of 200 keys, one object live at a time in the
// trace's order, ran with dozens live). The arena now follows the model's
// running peak, as the same trace from a file, whose arena is its peak.
func TestUnplannedArenaFollowsPeak(t *testing.T) {
	const n, size = 200, 4096
	var recs []schema.Record
	for i := range n {
		k := fmt.Sprint("k", i)
		recs = append(recs, rec(0, schema.OpWrite, size, schema.TierCPU, k, schema.PhasePrefill, 0),
			rec(0, schema.OpDelete, size, schema.TierCPU, k, schema.PhaseEvict, 0))
	}
	data := traceBytes(t, recs)
	// Read once, the arena is much larger than the trace's peak (half the
	// memory); prescanned, setup sizes it at the peak.
	for _, tc := range []struct {
		prescan bool
		arena   int64
	}{{false, 64 << 20}, {true, size}} {
		prescan := tc.prescan
		t.Run(fmt.Sprint("prescan ", prescan), func(t *testing.T) {
			src := replay.Source{Name: "-", Rescan: prescan, Stored: func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(data)), nil
			}}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
			cfg.Speed, cfg.Prescan = 0, prescan
			ram := &liveBytes{Backend: newRAM(t, tc.arena), sizes: map[string]int64{}}
			res, err := runReplay(t, cfg, src, map[string]backend.Backend{"ram": ram})
			if err != nil || !res.Complete || res.Replay.RowsDone != 2*n {
				t.Fatalf("error %v, complete %v, rows done %d", err, res != nil && res.Complete, res.Replay.RowsDone)
			}
			if ram.most > size {
				t.Errorf("the arena held up to %d bytes of objects, want at most the trace's peak, %d", ram.most, size)
			}
		})
	}
}
