package replay_test

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// slowFailOnce keeps its inner backend's Caps (FastMeta: kept handles),
// slows every read, and fails the first read of key with EIO.
type slowFailOnce struct {
	backend.Backend
	key    string
	failed atomic.Bool
}

func (b *slowFailOnce) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := b.Backend.Open(key, size, create)
	if err != nil {
		return nil, err
	}
	return &slowObj{Object: o, b: b, key: key}, nil
}

type slowObj struct {
	backend.Object
	b   *slowFailOnce
	key string
}

func (o *slowObj) ReadAt(p []byte, off int64) (int, error) {
	time.Sleep(2 * time.Millisecond)
	if o.key == o.b.key && o.b.failed.CompareAndSwap(false, true) {
		return 0, fmt.Errorf("injected read of %q at %d: %w", o.key, off, syscall.EIO)
	}
	return o.Object.ReadAt(p, off)
}

// TestSharedReadFailureCountedOnce: one EIO on a read of a key that another
// read shares (a kept handle, FastMeta backend) is one failed operation.
func TestSharedReadFailureCountedOnce(t *testing.T) {
	const size = 256 << 10
	recs := []schema.Record{
		rec(0, schema.OpWrite, size, schema.TierCPU, "k", schema.PhasePrefill, 1),
		rec(time.Millisecond, schema.OpRead, size, schema.TierCPU, "k", schema.PhaseDecode, 2),
		rec(time.Millisecond, schema.OpRead, size, schema.TierCPU, "k", schema.PhaseDecode, 3),
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "ram", ""}
	cfg.Speed, cfg.BlockSize, cfg.QueueDepth = 0, 16<<10, 1
	b := &slowFailOnce{Backend: newRAM(t, 4<<20), key: "1_k"}
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"ram": b})
	if err == nil || res == nil {
		t.Fatalf("err %v, res %v", err, res)
	}
	t.Logf("errors %d: %q", res.Errors.Count, res.Errors.First)
	if res.Errors.Count != 1 {
		t.Errorf("one EIO counted as %d failed operations: %q", res.Errors.Count, res.Errors.First)
	}
}
