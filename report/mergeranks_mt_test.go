package report

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found in
// MergeRanks: each fails on a small change to the code under it (named in
// its comment) that the rest of the package's tests let through.

// rankPair is two ranks of one trial that met their SLA (requests of
// exactly 50 ms), rank 1 started early before rank 0; each ran 2 s.
func rankPair(t *testing.T, early time.Duration) (r0, r1 *schema.Result) {
	t.Helper()
	r0 = mlperfDoc(t, rankSpec{option: 1, trial: 0, rank: 0, readGB: 2, writeGB: 1, tokens: 100, ioS: 1})
	r1 = mlperfDoc(t, rankSpec{option: 1, trial: 0, rank: 1, readGB: 2, writeGB: 1, tokens: 100, ioS: 1})
	r1.Started = r0.Started.Add(-early)
	for _, d := range []*schema.Result{r0, r1} {
		if d.Summary.StorageHealth.OverallStatus != results.HealthPass {
			t.Fatalf("test setup: rank %d %s: %q", d.Rank, d.Summary.StorageHealth.OverallStatus, d.Summary.StorageHealth.Reasons)
		}
	}
	return r0, r1
}

// TestMergeRanksWindowAndCounts: the merged run starts at the earliest
// rank's start and ends at the latest's end; failed operations add up;
// the KV tokens moved are each rank's rate times its own time, over the
// merged window, and unknown when a rank does not know its own.
func TestMergeRanksWindowAndCounts(t *testing.T) {
	r0, r1 := rankPair(t, 10*time.Second)
	r0.Errors, r1.Errors = schema.ErrorStats{Count: 2}, schema.ErrorStats{Count: 3}
	a, b := 100.0, 50.0
	r0.Summary.StorageKVTokensPerSec, r1.Summary.StorageKVTokensPerSec = &a, &b
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Started.Equal(r1.Started) || m.WallS != 12 {
		t.Errorf("merged window from %v for %v s, want from rank 1's start %v for 12 s", m.Started, m.WallS, r1.Started)
	}
	if m.Errors.Count != 5 {
		t.Errorf("failed operations %d, want 2 + 3", m.Errors.Count)
	}
	// 100 tokens/s for 2 s and 50 for 2 s: 300 tokens over 12 s.
	if got := m.Summary.StorageKVTokensPerSec; got == nil || math.Abs(*got-25) > 1e-9 {
		t.Errorf("storage_kv_tokens_per_sec %v, want 300 tokens over 12 s = 25", got)
	}
	r1.Summary.StorageKVTokensPerSec = nil
	if m, err = MergeRanks([]*schema.Result{r0, r1}); err != nil {
		t.Fatal(err)
	}
	if got := m.Summary.StorageKVTokensPerSec; got != nil {
		t.Errorf("storage_kv_tokens_per_sec %v with a rank that does not know its tokens, want not measured", *got)
	}
}

// TestMergeRanksTimeline: ranks' seconds are placed by their start and
// summed (bytes, operations), a second's lag p99 being the highest of
// the ranks'.
func TestMergeRanksTimeline(t *testing.T) {
	sec := func(tt int, read, write, ops int64, lag float64) schema.Second {
		s := schema.Second{T: tt, LagP99US: lag}
		s.ReadBytes[schema.TierNVMe], s.WriteBytes[schema.TierNVMe], s.Ops[schema.TierNVMe] = read, write, ops
		return s
	}
	r0, r1 := rankPair(t, 0)
	r0.Timeline = []schema.Second{sec(0, 100, 10, 1, 5)}
	r1.Timeline = []schema.Second{sec(0, 200, 20, 2, 7)}
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Timeline) != 1 || m.Timeline[0] != sec(0, 300, 30, 3, 7) {
		t.Errorf("merged timeline %+v, want one second of 300 read, 30 written, 3 ops, lag p99 7", m.Timeline)
	}

	r0, r1 = rankPair(t, 3*time.Second)
	r0.Timeline = []schema.Second{sec(0, 100, 10, 1, 5)}
	r1.Timeline = []schema.Second{sec(0, 200, 20, 2, 7)}
	if m, err = MergeRanks([]*schema.Result{r0, r1}); err != nil {
		t.Fatal(err)
	}
	want := []schema.Second{sec(0, 200, 20, 2, 7), sec(3, 100, 10, 1, 5)}
	if !slices.Equal(m.Timeline, want) {
		t.Errorf("merged timeline %+v, want rank 0's second 0 at second 3: %+v", m.Timeline, want)
	}
}

// TestMergeRanksWarnsOfIncompleteRank: a rank whose own storage_health
// is not PASS (here INCOMPLETE: cut short, no criterion failed) is named
// in the merged document's warnings, not only a FAIL.
func TestMergeRanksWarnsOfIncompleteRank(t *testing.T) {
	r0, r1 := rankPair(t, 0)
	r1.Complete, r1.IncompleteReason = false, "interrupt signal received"
	own := results.Health(r1, &r1.Summary)
	if own.OverallStatus != results.HealthIncomplete {
		t.Fatalf("test setup: rank 1 %s", own.OverallStatus)
	}
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	w := results.RankHealthWarning(own)
	if !slices.ContainsFunc(m.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
		t.Errorf("warnings %q, want one naming rank 1's %q", m.Warnings, w)
	}
}

// TestMergeRanksScheduledLag: the lags of the rows the ranks' closed
// loops released at their trace times merge exactly (not their p95s
// averaged), and the merge's schedule criterion judges them: rank 0's 10
// rows on time and rank 1's 10 rows 3 s late give a p95 of 3 s, which
// fails it. A rank without such rows adds none; ranks that had none
// leave the merge without the block, and without the criterion.
func TestMergeRanksScheduledLag(t *testing.T) {
	lag := func(d time.Duration) *schema.Latency {
		l := results.NewLatency()
		for range 10 {
			l.Add(d)
		}
		f := l.Finalize()
		return &f
	}
	r0, r1 := rankPair(t, 0)
	r0.Replay.Speed, r1.Replay.Speed = 1, 1
	r0.ClosedLoop.ScheduledLag, r1.ClosedLoop.ScheduledLag = lag(time.Millisecond), lag(3*time.Second)
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	sl := m.ClosedLoop.ScheduledLag
	if sl == nil || sl.Count != 20 || sl.P95US < 2.9e6 || sl.Histogram == "" {
		t.Fatalf("merged scheduled_lag %+v: want the 20 rows, p95 3 s", sl)
	}
	if c, behind := results.BehindSchedule(m.Summary.StorageHealth); !behind || !strings.HasPrefix(c.Name, results.ScheduledCriterion) {
		t.Errorf("merged storage_health %+v: want the rows at trace times behind schedule", m.Summary.StorageHealth)
	}
	r1.ClosedLoop.ScheduledLag = nil
	if m, err = MergeRanks([]*schema.Result{r0, r1}); err != nil {
		t.Fatal(err)
	}
	if sl := m.ClosedLoop.ScheduledLag; sl == nil || sl.Count != 10 || m.Summary.StorageHealth.OverallStatus != results.HealthPass {
		t.Errorf("scheduled_lag %+v, storage_health %s: want rank 0's 10 rows on time, PASS", sl, m.Summary.StorageHealth.OverallStatus)
	}
	r0.ClosedLoop.ScheduledLag = nil
	if m, err = MergeRanks([]*schema.Result{r0, r1}); err != nil {
		t.Fatal(err)
	}
	if sl := m.ClosedLoop.ScheduledLag; sl != nil {
		t.Errorf("scheduled_lag %+v of ranks with none: want none", sl)
	}
	for _, c := range m.Summary.StorageHealth.Criteria {
		if strings.HasPrefix(c.Name, results.ScheduleCriterion) {
			t.Errorf("criterion %q of ranks without rows at trace times", c.Name)
		}
	}
}
