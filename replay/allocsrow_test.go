package replay_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/schema"
)

// TestAllocsPerRow bounds the heap allocations of a replay per row, on a
// trace whose rows are mostly reads of a few objects (each of 4 users
// writes one, then reads it 8 times a request): what is allocated per
// object or per request is then little per row, and what is allocated
// per row shows. A closed loop of --users 2 allocated 5.3 per row: the
// row's key put in --users' set of objects (a string built for each row),
// its key copied, its entry in the rows due boxed twice (container/heap);
// 1.3 now, one of them the null backend's Open: each of those, back,
// would take it past 2. Two traces side by side (their objects known by
// trace and key) took one more each row, open loop or closed, and the
// closed loop two more: the name ("1:user1") built for each lookup. The
// open loop allocates 0.3 per row here (1.2 before with two traces). The
// race detector's instrumentation allocates: it is not checked under it.
func TestAllocsPerRow(t *testing.T) {
	const users, requests, reads = 4, 500, 8
	var recs []schema.Record
	at := time.Duration(0)
	for q := range requests + 1 {
		for u := 1; u <= users; u++ {
			key := fmt.Sprintf("user%d", u)
			id := uint64(q*users + u)
			r := func(op schema.Op) schema.Record {
				at += time.Microsecond
				return schema.Record{Time: at, Op: op, Size: 4096, Tier: schema.TierCPU, Key: []byte(key),
					Phase: schema.PhaseDecode, Request: id, User: uint64(u), QoS: schema.QoSBatch}
			}
			if q == 0 {
				recs = append(recs, r(schema.OpWrite))
				continue
			}
			for range reads {
				recs = append(recs, r(schema.OpRead))
			}
		}
	}
	for _, closed := range []bool{true, false} {
		for _, traces := range []int{1, 2} {
			cfg := closedConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "null", ""}
			cfg.ClosedLoop = closed
			rows, bound := len(recs)*traces, 0.7
			if closed {
				bound = 2
				cfg.Users = users / 2 * traces
				rows /= 2
			}
			t.Run(fmt.Sprintf("closed=%v/traces=%d", closed, traces), func(t *testing.T) {
				allocsPerRow(t, &cfg, recs, traces, rows, bound)
			})
		}
	}
}

// allocsPerRow bounds the allocations per row of a replay of traces
// copies of recs side by side, by cfg, on the null backend, which replays
// rows of them: at most bound.
func allocsPerRow(t *testing.T, cfg *replay.Config, recs []schema.Record, traces, rows int, bound float64) {
	srcs := []replay.Source{memTrace(t, recs), memTrace(t, recs)}[:traces]
	plan, err := replay.Prepare(context.Background(), cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := replay.Run(context.Background(), cfg, plan, srcs, map[string]backend.Backend{"null": null.New()}, replay.Hooks{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res.Replay.RowsDone != int64(rows) {
		t.Fatalf("%d rows done, want %d", res.Replay.RowsDone, rows)
	}
	per := float64(after.Mallocs-before.Mallocs) / float64(rows)
	t.Logf("%.2f allocations per row replayed (%d rows)", per, rows)
	if per > bound && !raceEnabled {
		t.Errorf("%.2f allocations per row replayed, want at most %.1f", per, bound)
	}
}
