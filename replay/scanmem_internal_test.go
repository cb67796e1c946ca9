package replay

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// manyKeysTrace is n objects of 64 KiB on Tier-2, keyed as kvtrace keys
// them (conv_user_0012_0003_turn_1, 26 bytes), each written, then read
// twice: 3n rows, every object live to the end, as in kvtrace's MLPerf 8B
// workload (no Delete rows on an unbounded Tier-2).
func manyKeysTrace(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	var r schema.Record
	for i := range n {
		key := fmt.Appendf(r.Key[:0], "conv_user_%04d_%04d_turn_%d", i%200, i/200%10000, 1+i/2000000)
		for j, op := range []schema.Op{schema.OpWrite, schema.OpRead, schema.OpRead} {
			r = schema.Record{Time: r.Time + 1000, Op: op, Size: 64 << 10, Tier: schema.TierNVMe, Key: key,
				Phase: schema.Phase(min(j, 1)), Request: uint64(i + 1), User: uint64(i%200 + 1), QoS: schema.QoSInteractive}
			if err := w.Write(&r); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// scanMemory reads data through the prescan's scans (newScans,
// scanMerged) and returns the bytes of heap they hold at the end, when
// every key has its state, and the bytes allocated in all, each per
// object, with the objects.
func scanMemory(tb testing.TB, data []byte) (live, alloc float64, objects int64) {
	tb.Helper()
	srcs := []Source{{Name: "keys", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}}
	cfg := DefaultConfig()
	held, total := heapHeld(func() any {
		_, _, scans := newScans(&cfg, srcs, nil)
		if err := scanMerged(context.Background(), srcs, scans, nil); err != nil {
			tb.Fatal(err)
		}
		objects = scans[0].objects
		return scans
	})
	runtime.KeepAlive(data) // held before, so not counted as freed
	return held / float64(objects), total / float64(objects), objects
}

// heapHeld runs f and returns the bytes of heap what f returns holds
// (the heap's growth over f, after a collection) and the bytes f
// allocated in all.
func heapHeld(f func() any) (held, total float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc), float64(after.TotalAlloc - before.TotalAlloc)
}

// TestPrescanMemoryPerObject wants the prescan to hold at most 200 bytes
// of heap per object, its key (26 bytes) included, at the end of a trace
// of 200,000 objects, all live. The prescan held about 400 (each key's
// state was the run's keyState, 288 bytes with the key, and the key was
// kept twice): 638 MiB of RSS to plan a trace of 1.31 M objects, on
// machines whose RAM is what is benchmarked. It holds about 120 now.
func TestPrescanMemoryPerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a trace of 600,000 rows")
	}
	const n = 200_000
	live, alloc, objects := scanMemory(t, manyKeysTrace(t, n))
	if objects != n {
		t.Fatalf("the prescan counted %d objects, want %d", objects, n)
	}
	t.Logf("%d objects: %.0f bytes of heap each at the end of the prescan, %.0f allocated", objects, live, alloc)
	if live > 200 {
		t.Errorf("the prescan holds %.0f bytes per object, want at most 200", live)
	}
}

// BenchmarkPrescanMemory reports the heap the prescan holds per object
// at the end of a trace of 1 M objects, all live (live-B/object), the
// bytes it allocated per object (alloc-B/object), and its rows/s:
//
//	go test -run '^$' -bench PrescanMemory -benchtime 3x ./replay
func BenchmarkPrescanMemory(b *testing.B) {
	const n = 1_000_000
	data := manyKeysTrace(b, n)
	var live, alloc float64
	for b.Loop() {
		live, alloc, _ = scanMemory(b, data)
	}
	b.ReportMetric(live, "live-B/object")
	b.ReportMetric(alloc, "alloc-B/object")
	b.ReportMetric(float64(3*n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestKeyStateSize wants the run's state of an object in the allocator's
// 192-byte size class: it was 248 bytes (the 256-byte class) while it
// kept each tier's object name and a pending count of 8 bytes. The
// prescan's (scanKey, kept in arrays) takes 48 bytes.
func TestKeyStateSize(t *testing.T) {
	if n := reflect.TypeFor[keyState]().Size(); n > 192 {
		t.Errorf("a keyState takes %d bytes, want at most 192", n)
	}
	if n := reflect.TypeFor[scanKey]().Size(); n > 48 {
		t.Errorf("a scanKey takes %d bytes, want at most 48", n)
	}
}

// shardMemory runs the rows of data through rank 0's sharder of ranks
// sharding by user, as the prescan and the run's reader do (each sees
// every row of every rank), and returns the bytes of heap it holds at the
// end and the bytes it allocated, per object of the trace, with the rows
// it kept.
func shardMemory(tb testing.TB, data []byte, ranks int, objects int) (live, alloc float64, kept int64) {
	tb.Helper()
	r := trace.NewReader(bytes.NewReader(data))
	var rec schema.Record
	held, total := heapHeld(func() any {
		s := newSharder(&Config{Rank: 0, Ranks: ranks, Shard: ShardUser, ClosedLoop: true}, 1)
		for r.Read(&rec) == nil {
			if s.mine(&rec, 0) {
				kept++
			}
		}
		return s
	})
	runtime.KeepAlive(data)
	return held / float64(objects), total / float64(objects), kept
}

// TestShardUserMemoryPerObject wants a rank's sharder by user to hold at
// most 60 bytes of heap per object of a trace of 200,000 (every rank's:
// it knows which rank touched each first), and to allocate nothing for a
// row of an object it knows. It held 67 per object here, 88 of a trace of
// 1 M (a map[string]bool), and built each row's key as a string; it holds
// about 52 here, 44 of 1 M (a keyTable).
func TestShardUserMemoryPerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a trace of 600,000 rows")
	}
	const n = 200_000
	live, alloc, kept := shardMemory(t, manyKeysTrace(t, n), 4, n)
	t.Logf("%d objects, %d rows kept: %.0f bytes of heap each at the end, %.0f allocated", n, kept, live, alloc)
	if kept == 0 || kept == 3*n {
		t.Fatalf("rank 0 of 4 kept %d of %d rows", kept, 3*n)
	}
	if live > 60 {
		t.Errorf("the sharder holds %.0f bytes per object, want at most 60", live)
	}
	for _, nsrc := range []int{1, 2} {
		s := newSharder(&Config{Rank: 0, Ranks: 4, Shard: ShardUser, ClosedLoop: true}, nsrc)
		rec := schema.Record{Op: schema.OpRead, Key: []byte("conv_user_0001_0002_turn_1"), Request: 1, User: 2}
		s.mine(&rec, nsrc-1)
		if a := testing.AllocsPerRun(100, func() { s.mine(&rec, nsrc-1) }); a != 0 {
			t.Errorf("%d traces: %v allocations per row of a known object, want 0", nsrc, a)
		}
	}
}

// BenchmarkShardUserMemory reports the heap a rank's sharder by user (rank
// 0 of 4) holds per object at the end of a trace of 1 M objects
// (live-B/object), the bytes it allocated per object, and its rows/s:
//
//	go test -run '^$' -bench ShardUserMemory -benchtime 3x ./replay
func BenchmarkShardUserMemory(b *testing.B) {
	const n = 1_000_000
	data := manyKeysTrace(b, n)
	var live, alloc float64
	for b.Loop() {
		live, alloc, _ = shardMemory(b, data, 4, n)
	}
	b.ReportMetric(live, "live-B/object")
	b.ReportMetric(alloc, "alloc-B/object")
	b.ReportMetric(float64(3*n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
