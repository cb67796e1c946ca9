package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// smallObjectTrace is n keys of 4 KiB: each written, read twice (once
// within its request) and deleted, interleaved so that many keys are live
// at once, in requests of four rows: 4n rows in all.
func smallObjectTrace(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.WriterOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	const live = 1000
	var r schema.Record
	emit := func(op schema.Op, k int, ph schema.Phase, req uint64) {
		r = schema.Record{Time: r.Time + 1000, Op: op, Size: 4096, Tier: schema.TierNVMe, Key: fmt.Appendf(r.Key[:0], "k%d", k),
			Phase: ph, Request: req, QoS: schema.QoSInteractive}
		if err := w.Write(&r); err != nil {
			tb.Fatal(err)
		}
	}
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
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
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
