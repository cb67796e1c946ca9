package report

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestMergeWindowBounded: ranks merged with the others' start decades
// apart (a forged "started", or a document without one, year 1) are
// refused, naming them, even when forced: the merged window, as long as
// that, was past the wall_s any document holds (kvreport refused to read
// the merge back) and, past 292 years, saturated time.Duration (a window
// of year 1 to 2026 read as 292 years). Ranks ten years apart, merged
// with --force, still give a document kvreport reads; their timeline is a
// map of the seconds they have, not of the window's, so neither merge
// takes memory or time for the years between.
func TestMergeWindowBounded(t *testing.T) {
	pair := func(apart time.Duration, first time.Time) []*schema.Result {
		a := mlperfDoc(t, rankSpec{option: 1, trial: 0, rank: 0, readGB: 1, writeGB: 1, readMS: 1, writeMS: 1, tokens: 10, ioS: 1})
		b := mlperfDoc(t, rankSpec{option: 1, trial: 0, rank: 1, readGB: 1, writeGB: 1, readMS: 1, writeMS: 1, tokens: 10, ioS: 1})
		a.Timeline = []schema.Second{{T: 0}, {T: 1}}
		b.Timeline = []schema.Second{{T: 0}, {T: 1}}
		if !first.IsZero() {
			a.Started = first
		}
		b.Started = a.Started.Add(apart)
		return []*schema.Result{a, b}
	}
	year := 365 * 24 * time.Hour
	m, err := MergeRanks(pair(10*year, time.Time{}))
	if err != nil {
		t.Fatalf("ranks 10 years apart: %v", err)
	}
	if err := checkResult(m); err != nil || len(m.Timeline) != 4 {
		t.Errorf("ranks 10 years apart: a merge kvreport does not read back (%v), or a timeline of %d seconds", err, len(m.Timeline))
	}
	for _, tc := range []struct {
		name  string
		docs  []*schema.Result
		names string
	}{
		{"40 years apart", pair(40*year, time.Time{}), "document 1 and document 2"},
		{"the second before the first", pair(-40*year, time.Time{}), "document 2 and document 1"},
		{"one without a start", pair(time.Since(time.Time{}), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)), "document 1 and document 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := MergeRanks(tc.docs)
			if err == nil {
				t.Fatalf("merged, wall_s %g, timeline %+v (reads back: %v)", m.WallS, m.Timeline, checkResult(m))
			}
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %v: want ErrIncompatible naming %s", err, tc.names)
			}
		})
	}
	// Built with --force, the report says why, not a merge of decades.
	dir := t.TempDir()
	var paths []string
	for i, d := range pair(40*year, time.Time{}) {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "r"+itoa(i)+".json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	docs, err := Load(paths, nil, LoadOptions{Label: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(docs, BuildOptions{Force: true}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("built with --force: %v, want an error wrapping ErrIncompatible", err)
	}
}

// TestMLPerfPoolRanksTogether: the pooled view merges a trial's ranks
// when they ran together, as an MLPerf trial's do (one launch); a rank
// whose run started years after the others' ended (a copied result, a
// forged start) leaves the Option without a pooled view, saying why,
// where the pooled bandwidth was the ranks' bytes over the years between
// (0.0000001 GB/s for ranks of GB/s). The rule's figures, sums of each
// rank's own, are unchanged.
func TestMLPerfPoolRanksTogether(t *testing.T) {
	dir, _ := writeMLPerfRun(t)
	p := filepath.Join(dir, "option_1", "trial_1", "rank_1", "kvbench_result.json")
	var d map[string]any
	if err := json.Unmarshal(mustReadFile(t, p), &d); err != nil {
		t.Fatal(err)
	}
	d["started"] = mlperfStart.Add(10 * 365 * 24 * time.Hour).Format(time.RFC3339Nano)
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s := aggregateDir(t, dir)
	o := s.KVBench.Options["1"]
	if o.Pooled != nil || !strings.Contains(o.NotPooled, "trial 1") || !strings.Contains(o.NotPooled, "different runs") {
		t.Errorf("pooled %+v, not pooled %q: want no pooled view, saying trial 1's ranks are of different runs", o.Pooled, o.NotPooled)
	}
	if s.Options["1"].AggregatedReadBandwidthGBps < 1 {
		t.Errorf("the rule's read bandwidth %g: want the ranks' sums, unchanged", s.Options["1"].AggregatedReadBandwidthGBps)
	}
}
