package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// smallTrace writes the rows body emits, each a 4 KiB object on Tier-2
// 1 us after the one before, as a kvbench trace in memory.
func smallTrace(tb testing.TB, body func(emit func(op schema.Op, k int, ph schema.Phase, req uint64))) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	var r schema.Record
	body(func(op schema.Op, k int, ph schema.Phase, req uint64) {
		r = schema.Record{Time: r.Time + 1000, Op: op, Size: 4096, Tier: schema.TierNVMe, Key: fmt.Appendf(r.Key[:0], "k%d", k),
			Phase: ph, Request: req, QoS: schema.QoSInteractive}
		if err := w.Write(&r); err != nil {
			tb.Fatal(err)
		}
	})
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// smallObjectTrace is n keys of 4 KiB: each written, read twice (once
// within its request) and deleted, interleaved so that many keys are live
// at once, in requests of four rows: 4n rows in all.
func smallObjectTrace(tb testing.TB, n int) []byte {
	const live = 1000
	return smallTrace(tb, func(emit func(schema.Op, int, schema.Phase, uint64)) {
		for i := range n + live {
			req := uint64(i + 1)
			if i < n {
				emit(schema.OpWrite, i, schema.PhasePrefill, req)
				emit(schema.OpRead, i, schema.PhaseDecode, req)
			}
			if j := i - live; j >= 0 {
				emit(schema.OpRead, j, schema.PhaseDecode, req)
				emit(schema.OpDelete, j, schema.PhaseEvict, req)
			}
		}
	})
}

// BenchmarkEngineNull replays a large trace of small objects on the null
// backend, which does no data work: what it measures is the engine (the
// reader, ordering, space, execution and metrics). Run it on one core:
//
//	go test -run '^$' -bench EngineNull -cpu 1 ./replay
//
// rows/s is the figure; the design asks for at least 1 M.
func BenchmarkEngineNull(b *testing.B) {
	const keys = 250_000
	data := smallObjectTrace(b, keys)
	src := replay.Source{Name: "small", Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "null"}
	cfg.Speed, cfg.Prescan = 0, false
	var rows int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := replay.Run(context.Background(), &cfg, &replay.Plan{}, []replay.Source{src},
			map[string]backend.Backend{"null": null.New()}, replay.Hooks{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Replay.RowsDone != 4*keys {
			b.Fatalf("%d rows done, want %d", res.Replay.RowsDone, 4*keys)
		}
		rows += res.Replay.RowsDone
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkEngineNullLive is BenchmarkEngineNull with many objects live at
// once: bench/vs-fio.sh's small-object trace (500 k keys of 4 KiB written,
// then read shuffled) on the null backend, so that what it measures is the
// engine's per-object state (its tables outgrow the CPU's caches), not a
// device.
func BenchmarkEngineNullLive(b *testing.B) {
	const keys = 500_000
	data := writeThenReadTrace(b, keys)
	src := replay.Source{Name: "small", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "null"}
	cfg.Speed = 0
	// The plan kvreplay makes of a trace file, which sizes the engine's
	// tables; made once, outside the timing.
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
			map[string]backend.Backend{"null": null.New()}, replay.Hooks{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Replay.RowsDone != 2*keys {
			b.Fatalf("%d rows done, want %d", res.Replay.RowsDone, 2*keys)
		}
		rows += res.Replay.RowsDone
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// writeThenReadTrace is n keys of 4 KiB written in key order, then read in
// a shuffled order: bench/vs-fio.sh's small-object case.
func writeThenReadTrace(tb testing.TB, n int) []byte {
	return smallTrace(tb, func(emit func(schema.Op, int, schema.Phase, uint64)) {
		for i := range n {
			emit(schema.OpWrite, i, schema.PhasePrefill, uint64(i+1))
		}
		for _, i := range rand.New(rand.NewPCG(42, 0)).Perm(n) {
			emit(schema.OpRead, i, schema.PhaseDecode, uint64(i+1))
		}
	})
}

// BenchmarkEngineExtentSmall replays n 4 KiB writes then n shuffled reads
// on the extent layout with O_DIRECT and io_uring, queue depth 32, in a
// file under $TMPDIR (on a disk: a tmpfs is skipped) written once beforehand: the whole path of a small
// object, end to end. IOPS is the figure; bench/vs-fio.sh sets it beside
// fio's on the same disk.
//
//	go test -run '^$' -bench EngineExtentSmall -benchtime 3x ./replay
func BenchmarkEngineExtentSmall(b *testing.B) {
	const n = 100_000
	data := writeThenReadTrace(b, n)
	src := replay.Source{Name: "small", Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	path := filepath.Join(b.TempDir(), "small.extent")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(make([]byte, n*4096)); err != nil {
		b.Fatal(err)
	}
	// Written and out of the page cache, as fio lays out its files: an
	// O_DIRECT write over cached pages is punted to io_uring's workers.
	if err := errors.Join(f.Sync(), unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED), f.Close()); err != nil {
		b.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	cfg.Speed, cfg.Prescan, cfg.BlockSize = 0, false, 4096
	var ops int64
	b.ReportAllocs()
	for b.Loop() {
		be, err := extent.New(path, extent.Options{Direct: true, Keep: true})
		if err != nil {
			b.Fatal(err)
		}
		if c := be.Caps(); !c.Direct {
			// A tmpfs $TMPDIR: the page cache, not a device, would be measured.
			be.Close()
			b.Skipf("no O_DIRECT under $TMPDIR (%s): set TMPDIR to a directory on a disk", strings.Join(c.Warnings, "; "))
		}
		res, err := replay.Run(context.Background(), &cfg, &replay.Plan{}, []replay.Source{src},
			map[string]backend.Backend{"nvme": be}, replay.Hooks{})
		if err := errors.Join(err, be.Close()); err != nil {
			b.Fatal(err)
		}
		if res.Replay.RowsDone != 2*n || res.Replay.CapacityEvictions != 0 {
			b.Fatalf("%d rows done, want %d; %d capacity evictions", res.Replay.RowsDone, 2*n, res.Replay.CapacityEvictions)
		}
		ops += res.Replay.RowsDone
	}
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "IOPS")
}

// coldHeap replays a trace of keys keys (k0, k1, ...), each read once, so
// that all are cold objects the run writes before its clock starts, on
// the null backend, and returns the heap the run holds per object once it
// wrote them (at Hooks.Ready), the null backend's map of objects (about
// 100 bytes each) included.
func coldHeap(tb testing.TB, keys int) float64 {
	tb.Helper()
	data := smallTrace(tb, func(emit func(schema.Op, int, schema.Phase, uint64)) {
		for i := range keys {
			emit(schema.OpRead, i, schema.PhaseDecode, uint64(i+1))
		}
	})
	src := replay.Source{Name: "cold", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "null"}
	cfg.Speed = 0
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		tb.Fatal(err)
	}
	if len(plan.Cold) != keys {
		tb.Fatalf("%d cold objects, want %d", len(plan.Cold), keys)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, live := ms.HeapAlloc, 0.0
	ready := func() error {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		live = (float64(ms.HeapAlloc) - float64(base)) / float64(keys)
		return nil
	}
	if _, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
		map[string]backend.Backend{"null": null.New()}, replay.Hooks{Ready: ready}); err != nil {
		tb.Fatal(err)
	}
	return live
}

// BenchmarkRunMemory reports the heap a run holds per live object
// (live-B/object, coldHeap's) with 500 k objects:
//
//	go test -run '^$' -bench RunMemory -benchtime 3x ./replay
func BenchmarkRunMemory(b *testing.B) {
	var live float64
	for b.Loop() {
		live = coldHeap(b, 500_000)
	}
	b.ReportMetric(live, "live-B/object")
}

// BenchmarkClosedLoopNull replays a closed loop of --users 50 of a trace
// of 100 users (replaytest.UserRecords: 2,000 requests each, a write and
// a read of an object of its own) on the null backend, so that what it
// measures is the closed loop's engine; allocs/row is the heap
// allocations per row the trace holds (the rows of users left out are
// read too):
//
//	go test -run '^$' -bench ClosedLoopNull -cpu 1 ./replay
func BenchmarkClosedLoopNull(b *testing.B) {
	const users, requests = 100, 2000
	data := traceBytes(b, replaytest.UserRecords(users, requests, time.Millisecond, 4096, schema.TierCPU, schema.QoSInteractive))
	src := replay.Source{Name: "users", Rescan: true, Open: func() (*trace.Reader, error) { return trace.NewReader(bytes.NewReader(data)), nil }}
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "null", ""}
	cfg.Speed, cfg.ClosedLoop, cfg.Users = 0, true, users/2
	plan, err := replay.Prepare(context.Background(), &cfg, []replay.Source{src})
	if err != nil {
		b.Fatal(err)
	}
	var rows int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		res, err := replay.Run(context.Background(), &cfg, plan, []replay.Source{src},
			map[string]backend.Backend{"null": null.New()}, replay.Hooks{})
		if err != nil {
			b.Fatal(err)
		}
		if want := int64(users / 2 * requests * 2); res.Replay.RowsDone != want {
			b.Fatalf("%d rows done, want %d", res.Replay.RowsDone, want)
		}
		rows += res.Replay.RowsDone
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(2*rows), "allocs/row")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(2*rows), "B/row")
}
