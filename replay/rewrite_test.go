package replay_test

import (
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// sectorLog is a backend that records the digest of every 512-byte sector
// written through it, as a deduplicating store would see them.
type sectorLog struct {
	backend.Backend
	mu   sync.Mutex
	seen map[[sha256.Size]byte]bool
	n    int // sectors written
	dups int // sectors equal to one written before
}

func (l *sectorLog) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := l.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return &sectorLogObject{Object: o, l: l}, nil
}

type sectorLogObject struct {
	backend.Object
	l *sectorLog
}

func (o *sectorLogObject) WriteAt(p []byte, off int64) (int, error) {
	o.l.mu.Lock()
	for i := 0; i+512 <= len(p); i += 512 {
		d := sha256.Sum256(p[i : i+512])
		if o.l.seen[d] {
			o.l.dups++
		}
		o.l.seen[d] = true
		o.l.n++
	}
	o.l.mu.Unlock()
	return o.Object.WriteAt(p, off)
}

// TestRewriteAfterDeleteIsNew: a key written, deleted and written again
// gets new contents, as the rewrite of a live key does: no sector of the
// second object repeats the first's (a deduplicating store would keep one
// copy), and stale bytes of the first would not pass --verify as the
// second's. The rows are far enough apart that the Delete has completed,
// and the key's state gone, before the second Write comes.
func TestRewriteAfterDeleteIsNew(t *testing.T) {
	for _, c := range []struct {
		name string
		recs []schema.Record
	}{
		{"write", []schema.Record{
			rec(0, schema.OpWrite, 64<<10, schema.TierNVMe, "k", schema.PhasePrefill, 0),
			rec(100*time.Millisecond, schema.OpDelete, 64<<10, schema.TierNVMe, "k", schema.PhaseEvict, 0),
			rec(200*time.Millisecond, schema.OpWrite, 64<<10, schema.TierNVMe, "k", schema.PhasePrefill, 0),
		}},
		{"cold read", []schema.Record{
			rec(0, schema.OpRead, 64<<10, schema.TierNVMe, "k", schema.PhaseDecode, 0),
			rec(100*time.Millisecond, schema.OpDelete, 64<<10, schema.TierNVMe, "k", schema.PhaseEvict, 0),
			rec(200*time.Millisecond, schema.OpRead, 64<<10, schema.TierNVMe, "k", schema.PhaseDecode, 0),
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &sectorLog{Backend: newRAM(t, 16<<20), seen: map[[sha256.Size]byte]bool{}}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "", "ram"}
			cfg.Verify, cfg.BlockSize = true, 16<<10
			res, err := runReplay(t, cfg, memTrace(t, c.recs), map[string]backend.Backend{"ram": l})
			if err != nil {
				t.Fatal(err)
			}
			if res.Replay.RowsDone != 3 || l.n != 2*(64<<10)/512 {
				t.Fatalf("rows done %d, %d sectors written; want 3 and %d", res.Replay.RowsDone, l.n, 2*(64<<10)/512)
			}
			if l.dups != 0 {
				t.Errorf("%d of %d sectors written repeat one written before", l.dups, l.n)
			}
		})
	}
}
