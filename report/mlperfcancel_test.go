package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// stopAt is a context cancelled at its at-th check (Err), which counts
// every check: a run that stops at the check that first sees it done has
// made exactly at of them.
type stopAt struct {
	context.Context
	cancel context.CancelFunc
	at     int64
	n      atomic.Int64
}

func newStopAt(at int64) *stopAt {
	ctx, cancel := context.WithCancel(context.Background())
	return &stopAt{Context: ctx, cancel: cancel, at: at}
}

func (c *stopAt) Err() error {
	if c.n.Add(1) == c.at {
		c.cancel()
	}
	return c.Context.Err()
}

// writeManyRanks lays out one Option of 2 trials x ranks ranks, each rank
// a kvreplay document of its own, as the Option runner does.
func writeManyRanks(tb testing.TB, ranks int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	for tr := range 2 {
		for r := range ranks {
			d := mlperfDoc(tb, rankSpec{option: 1, trial: tr, rank: r, readGB: 1, writeGB: 0.5, readMS: 10 + r%7, writeMS: 20, tokens: 100, ioS: 0.5})
			d.Ranks = ranks
			rd := filepath.Join(dir, "option_1", fmt.Sprintf("trial_%d", tr), fmt.Sprintf("rank_%d", r))
			if err := os.MkdirAll(rd, 0o755); err != nil {
				tb.Fatal(err)
			}
			raw, err := json.Marshal(d)
			if err != nil {
				tb.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dir
}

// TestMLPerfStopsWhenCancelled: LoadMLPerf and AggregateMLPerf check
// their context as they go over files, Options, trials and ranks (and
// each trial's merge), and stop at the first check that finds it done,
// with context.Canceled: kvreport caught SIGTERM and SIGINT, but the
// reading and aggregating of a run of thousands of rank results ran to
// its end regardless.
func TestMLPerfStopsWhenCancelled(t *testing.T) {
	const ranks = 12
	dir := writeManyRanks(t, ranks)

	// Uncancelled: every check counted.
	full := newStopAt(-1)
	run, err := LoadMLPerf(full, []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	loadChecks := full.n.Load()
	if len(run.Ranks) != 2*ranks || loadChecks < 2*ranks {
		t.Fatalf("%d ranks read with %d checks of the context: want %d, a check per file at least", len(run.Ranks), loadChecks, 2*ranks)
	}
	full = newStopAt(-1)
	if _, err := AggregateMLPerf(full, run, time.Time{}); err != nil {
		t.Fatal(err)
	}
	aggChecks := full.n.Load()
	if aggChecks < 2*ranks {
		t.Fatalf("aggregated %d ranks with %d checks of the context: want a check per rank at least", 2*ranks, aggChecks)
	}

	// Cancelled at the first, a middle and the last check: each stops
	// there, making no further check (no more files read, ranks
	// combined or trials merged).
	for _, at := range []int64{1, loadChecks / 2, loadChecks} {
		ctx := newStopAt(at)
		_, err := LoadMLPerf(ctx, []string{dir}, nil, nil)
		if !errors.Is(err, context.Canceled) || ctx.n.Load() != at {
			t.Errorf("load cancelled at check %d of %d: err %v after %d checks; want context.Canceled at once", at, loadChecks, err, ctx.n.Load())
		}
	}
	for _, at := range []int64{1, aggChecks / 2, aggChecks - 1, aggChecks} {
		ctx := newStopAt(at)
		s, err := AggregateMLPerf(ctx, run, time.Time{})
		if !errors.Is(err, context.Canceled) || s != nil || ctx.n.Load() != at {
			t.Errorf("aggregate cancelled at check %d of %d: err %v, summary %v after %d checks; want context.Canceled at once", at, aggChecks,
				err, s != nil, ctx.n.Load())
		}
	}
}

// BenchmarkAggregateMLPerf: the rule and the pooled view of one Option, 2
// trials x 16 ranks of kvreplay documents, read once: about 2 ms a rank
// here. Half of it is the pooled view's merges (pool, MergeRanks per
// trial); a quarter is HdrHistograms re-encoded (zlib) by results'
// Finalize, though the pool keeps only percentiles of them, and a
// quarter decoding them.
func BenchmarkAggregateMLPerf(b *testing.B) {
	run, err := LoadMLPerf(context.Background(), []string{writeManyRanks(b, 16)}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := AggregateMLPerf(context.Background(), run, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(run.Ranks))/1e6, "ms/rank")
}
