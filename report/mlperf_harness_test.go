package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMLPerfAsMlpstorage: kvreport's figures for mlpstorage's fields are
// the ones mlpstorage's own aggregation wrote for the same runs
// (testdata/mlperf_harness, see its README): every field of the summary
// and of each Option, the numbers to the last bit, the paths in
// missing_files and cpu_tier_ranks as it names them. A trial that left no
// directory is, as mlpstorage's loop over the trials it ran makes it, a
// trial of missing ranks whose sums are 0 in the mean: kvreport averaged
// the trials it found (Option 1 of "gap" read 3.01 GiB/s, mlpstorage 2.01).
// A document whose summary or cache_stats is null is a missing rank, and
// so is one not named kvcache_results_*.json.
func TestMLPerfAsMlpstorage(t *testing.T) {
	base := filepath.Join("testdata", "mlperf_harness")
	for _, tt := range []struct{ name, run, want string }{
		{"a trial missing between the run's", "gap/20261127_120000", "gap/mlpstorage_summary.json"},
		{"the last trial missing, the run's summary says 3", "last/20261127_130000",
			"last/20261127_130000/kvcache_run_summary_20261127_130000.json"},
		// mlpstorage numbers its trials from 0 (range(trials)): with
		// trials 1 and 2 found and the run's summary saying 3, trial 0 is
		// the one missing, where kvreport took the run for one numbered
		// from 1 and named a trial_3 missing.
		{"the first trial missing, the run's summary says 3", "first/20261127_160000",
			"first/20261127_160000/kvcache_run_summary_20261127_160000.json"},
		// A null summary or cache_stats fails mlpstorage's .get(): the
		// rank is missing, where kvreport added it as zeros.
		{"a null summary, a null cache_stats", "null/20261127_140000", "null/mlpstorage_summary.json"},
		// mlpstorage reads kvcache_results_*.json in a rank's directory:
		// a kv-cache.py document by another name is passed over (a rank
		// missing), where kvreport took it, or refused a rank directory
		// holding it beside its kvcache_results file (two results).
		{"kv-cache.py documents by another name", "name/20261127_150000", "name/mlpstorage_summary.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(base, tt.want))
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			s := aggregateDir(t, filepath.Join(base, tt.run))
			raw, err = json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			// Paths as mlpstorage's, relative to testdata/mlperf_harness.
			raw = []byte(strings.ReplaceAll(string(raw), filepath.ToSlash(base)+"/", ""))
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			delete(got, "kvbench")
			for _, o := range got["options"].(map[string]any) {
				delete(o.(map[string]any), "kvbench")
			}
			for k, w := range want {
				if k == "options" {
					continue
				}
				if !reflect.DeepEqual(got[k], w) {
					t.Errorf("%s: kvreport %v, mlpstorage %v", k, got[k], w)
				}
			}
			gotOpts, wantOpts := got["options"].(map[string]any), want["options"].(map[string]any)
			if len(gotOpts) != len(wantOpts) {
				t.Errorf("options %v, mlpstorage's %v", gotOpts, wantOpts)
			}
			for o, w := range wantOpts {
				g, _ := gotOpts[o].(map[string]any)
				for k, wv := range w.(map[string]any) {
					if !reflect.DeepEqual(g[k], wv) {
						t.Errorf("option %s %s: kvreport %v, mlpstorage %v", o, k, g[k], wv)
					}
				}
				if len(g) != len(w.(map[string]any)) {
					t.Errorf("option %s: kvreport's fields %v, mlpstorage's %v", o, g, w)
				}
			}
		})
	}
}

// TestMLPerfNoDeviceP95Warned: a kv-cache.py rank that moved bytes to
// storage but lacks a device p95 key is warned of, naming the key and the
// rank (the rule counts it 0, and the worst-rank p95 leaves the rank
// out); a CPU-tier rank, which moved none and lacks both, is not.
func TestMLPerfNoDeviceP95Warned(t *testing.T) {
	s := aggregateDir(t, filepath.Join("testdata", "mlperf_harness", "gap", "20261127_120000"))
	var got []string
	for _, w := range s.KVBench.Warnings {
		if strings.Contains(w, "device_p95_ms, though it moved bytes") {
			got = append(got, w)
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "option 1 trial 0 rank 1: no storage_read_device_p95_ms, though") ||
		!strings.HasSuffix(got[0], filepath.Join("option_1", "trial_0", "rank_1", "kvcache_results_20261127_121001.json")+")") {
		t.Errorf("warnings of a missing device p95: %q, want option 1 trial 0 rank 1's only", got)
	}
}

// TestMLPerfRankPastSummary: a rank_2 directory in a run whose
// kvcache_run_summary says 2 ranks is no rank of that run (mlpstorage,
// whose ranks are its configuration's, never reads it): kvreport refuses
// the run, naming the directory and the summary's count, where it counted
// 3 ranks and added the third's figures. Without the rank_2 the run
// aggregates as mlpstorage did.
func TestMLPerfRankPastSummary(t *testing.T) {
	run := filepath.Join(t.TempDir(), "20261127_130000")
	if err := os.CopyFS(run, os.DirFS(filepath.Join("testdata", "mlperf_harness", "last", "20261127_130000"))); err != nil {
		t.Fatal(err)
	}
	if s := aggregateDir(t, run); s.TotalRanks != 2 {
		t.Fatalf("test setup: %d ranks", s.TotalRanks)
	}
	from := filepath.Join(run, "option_1", "trial_0", "rank_0", "kvcache_results_20261127_121000.json")
	extra := filepath.Join(run, "option_1", "trial_0", "rank_2")
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "kvcache_results_20261127_121002.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadMLPerf(context.Background(), []string{run}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "rank_2") || !strings.Contains(err.Error(), "says 2 ranks") {
		t.Errorf("a rank past the run's summary: %v; want it refused, naming rank_2 and the summary's 2 ranks", err)
	}
}
