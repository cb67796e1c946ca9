package sim

import (
	"context"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/schema"
)

// heapHeld runs f and returns the bytes of heap what f returns holds (the
// heap's growth over f, after a collection), as replay's test of its
// prescan measures it.
func heapHeld(f func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// TestQueueMemoryPerRequest wants at most 250 bytes of heap per request
// still queued when a run ends. A request trace offered faster than the
// workers serve it piles its requests up in the queue, unbounded as
// kv-cache.py's is: each held about 480 bytes (its 160-byte request, a
// copy of its Mooncake hash ids, its user and object key built on arrival),
// 1.3 GB of RSS at --trace-speedup 100 for 10 minutes of Mooncake's
// conversation trace, and 7.7 GB when microseconds were taken for its
// milliseconds. It holds about 195 now.
func TestQueueMemoryPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("queues 100,000 requests")
	}
	cfg := DefaultConfig()
	cfg.RequestTrace = filepath.Join("reqtrace", "testdata", "mooncake_head200.jsonl")
	cfg.Duration, cfg.TraceSpeedup, cfg.NumUsers = 10*time.Minute, 100, 10
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var queued int
	held := heapHeld(func() any {
		e, err := newEngine(context.Background(), &cfg, func(*schema.Record) error { return nil }, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.run(); err != nil {
			t.Fatal(err)
		}
		queued = e.queue.Len()
		return e
	})
	if queued < 50_000 {
		t.Fatalf("%d requests queued at the end: the test wants a long queue", queued)
	}
	per := held / float64(queued)
	t.Logf("%d requests queued, %.0f bytes of heap each", queued, per)
	if per > 250 {
		t.Errorf("%.0f bytes of heap per queued request (%d queued, %.1f MB held), want at most 250", per, queued, held/1e6)
	}
	if n := unsafe.Sizeof(request{}); n > 128 {
		t.Errorf("a request is %d bytes, want at most 128 (a size class of Go's allocator)", n)
	}
}

// TestPackIDs: hash ids packed as steps come back as they were, extremes
// and steps down included, and are counted.
func TestPackIDs(t *testing.T) {
	for _, ids := range [][]int64{nil, {0}, {0, 1, 2, 3}, {5, 3, -7, math.MaxInt64, math.MinInt64, 0, 1 << 40}} {
		p := packIDs(nil, ids)
		if got := unpackIDs(nil, p); !slices.Equal(got, ids) {
			t.Errorf("ids %v came back %v", ids, got)
		}
		if n := countIDs(p); n != len(ids) {
			t.Errorf("ids %v counted %d", ids, n)
		}
	}
}
