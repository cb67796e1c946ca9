package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRefRun lays out kv-cache.py per-rank documents as mlpstorage does
// (option_1/trial_<T>/rank_<N>/kvcache_results_*.json): rank r of trial t
// reads (t+1)*(r+1) GiB/s, its device read p95 10*(t+1)+r ms.
func writeRefRun(t *testing.T, trials, ranks int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	for tr := range trials {
		for r := range ranks {
			p := filepath.Join(dir, "option_1", fmt.Sprintf("trial_%d", tr), fmt.Sprintf("rank_%d", r), "kvcache_results_20260701_120000.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			doc := fmt.Sprintf(`{"requests_completed": 5, "summary": {"total_requests": 5, "storage_throughput_tokens_per_sec": %d,
"cache_stats": {"storage_entries": 9, "tier_storage_read_bandwidth_gbps": %d, "tier_storage_write_bandwidth_gbps": 1,
"storage_read_device_p95_ms": %d, "storage_write_device_p95_ms": 5}}}`, 100*(r+1), (tr+1)*(r+1), 10*(tr+1)+r)
			if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestAggregateMLPerf(t *testing.T) {
	dir := writeRefRun(t, 3, 2)
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var s struct {
		SchemaVersion string `json:"schema_version"`
		TotalRanks    int    `json:"total_ranks"`
		Trials        int    `json:"trials_per_option"`
		Options       map[string]struct {
			Read    float64  `json:"aggregated_read_bandwidth_gbps"`
			Write   float64  `json:"aggregated_write_bandwidth_gbps"`
			Tokens  float64  `json:"aggregated_storage_throughput_tokens_per_sec"`
			ReadP95 float64  `json:"aggregated_device_read_p95_ms"`
			Missing []string `json:"missing_files"`
			CPUTier []string `json:"cpu_tier_ranks"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	o := s.Options["1"]
	// Trial sums 1+2, 2+4, 3+6 GiB/s: mean 6; writes 2; tokens 300; the
	// worst device read p95 is trial 2's rank 1: 31 ms.
	if s.SchemaVersion != "1.0" || s.TotalRanks != 2 || s.Trials != 3 || o.Read != 6 || o.Write != 2 || o.Tokens != 300 ||
		o.ReadP95 != 31 || o.Missing == nil || len(o.Missing) != 0 || o.CPUTier == nil {
		t.Errorf("summary: %+v", s)
	}

	// Text: the rule's figures, kv-cache.py's unit, and a summary given
	// beside compared by Option.
	summary := filepath.Join(t.TempDir(), "kvcache_run_summary_20260701_120000.json")
	if err := os.WriteFile(summary, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = kvreport(t, "", "--aggregate", "mlperf", dir, summary)
	if code != 0 || !strings.Contains(out, "aggregated_read_bandwidth_gbps") || !strings.Contains(out, "GiB/s") ||
		!strings.Contains(out, "kvcache_run_summary_20260701_120000") {
		t.Errorf("text: exit %d %s\n%s", code, errs, out)
	}

	// A run summary alone is shown as --aggregate mlperf shows it.
	code, out, errs = kvreport(t, "", summary)
	if code != 0 || !strings.Contains(out, "MLPerf Storage KV cache run summary") || !strings.Contains(out, "aggregated_device_read_p95_ms") {
		t.Errorf("a run summary: exit %d %s\n%s", code, errs, out)
	}

	// So is one on stdin.
	raw, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = kvreport(t, string(raw), "-")
	if code != 0 || !strings.Contains(out, "MLPerf Storage KV cache run summary") || !strings.Contains(out, "aggregated_device_read_p95_ms") {
		t.Errorf("a run summary on stdin: exit %d %s\n%s", code, errs, out)
	}

	// In a format a run summary has not, it is refused as such, not as
	// an unknown document.
	for _, f := range []string{"csv", "html", "xlsx", "bench"} {
		code, _, errs = kvreport(t, "", "--format", f, "-o", filepath.Join(t.TempDir(), "out."+f), summary)
		if code != 2 || !strings.Contains(errs, "--format "+f+": an mlpstorage kvcache_run_summary renders as json, text, md") {
			t.Errorf("a run summary in %s: exit %d %s", f, code, errs)
		}
	}

	// A rank's result missing: written, and exit 1.
	if err := os.Remove(filepath.Join(dir, "option_1", "trial_1", "rank_1", "kvcache_results_20260701_120000.json")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	if code != 1 || !strings.Contains(errs, "partial_failure") || !strings.Contains(out, `"partial_failure": true`) ||
		!strings.Contains(out, filepath.Join("trial_1", "rank_1")) {
		t.Errorf("a rank missing: exit %d %s\n%s", code, errs, out)
	}
}

// TestAggregateMLPerfKeepsItsInputs: -o naming a document inside a run's
// directory given as RESULT is refused (exit 2) and the document is left
// as it was; a new file beside the ranks (mlperf-option.sh's summary) is
// written.
func TestAggregateMLPerfKeepsItsInputs(t *testing.T) {
	dir := writeRefRun(t, 1, 2)
	rank := filepath.Join(dir, "option_1", "trial_0", "rank_1", "kvcache_results_20260701_120000.json")
	before, err := os.ReadFile(rank)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "-o", rank, dir)
	if code != 2 || !strings.Contains(errs, "refusing to overwrite an input of the run") {
		t.Errorf("-o a rank's document: exit %d, stderr %q", code, errs)
	}
	if after, err := os.ReadFile(rank); err != nil || string(after) != string(before) {
		t.Errorf("the rank's document was changed (%v)", err)
	}
	summary := filepath.Join(dir, "kvcache_run_summary_20260701_120000.json")
	if code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", "-o", summary, dir); code != 0 {
		t.Errorf("-o a new summary beside the ranks: exit %d: %s", code, errs)
	}
	// A text report in the run's directory, written again: the
	// aggregation reads no .txt file, so it is no input (the second
	// write, and kvreport --aggregate mlperf RUN > RUN/summary.txt,
	// whose shell makes the file first, were refused as "the document").
	text := filepath.Join(dir, "summary.txt")
	for i := range 2 {
		if code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "-o", text, dir); code != 0 {
			t.Errorf("-o %s, time %d: exit %d: %s", text, i+1, code, errs)
		}
	}
}

func TestAggregateMLPerfUsage(t *testing.T) {
	dir := writeRefRun(t, 1, 1)
	// A second result in a rank's directory (an older run's, copied in):
	// which one counts would decide the figures.
	twice := writeRefRun(t, 1, 1)
	rank := filepath.Join(twice, "option_1", "trial_0", "rank_0")
	raw, err := os.ReadFile(filepath.Join(rank, "kvcache_results_20260701_120000.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rank, "kvcache_results_20260601_120000.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// A kvcache_run_summary given is shown as --aggregate mlperf shows it.
	summary := `{"schema_version": "1.0", "options": {"1": {"option": 1, "aggregated_read_bandwidth_gbps": 9}}}`
	if err := os.WriteFile(filepath.Join(dir, "..", "summary.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"--aggregate", "dlio", dir}, "--aggregate dlio: must be one of mlperf"},
		{[]string{"--aggregate", "mlperf", "--format", "csv", dir}, "--format csv: --aggregate writes json, text or md"},
		{[]string{"--aggregate", "mlperf", t.TempDir()}, "no .../trial_<T>/rank_<N>/*.json result"},
		{[]string{"--aggregate", "mlperf", "--baseline", "x", "--metrics", "elapsed", "--force", dir},
			"--baseline, --metrics, --force: options of a report on results: the MLPerf aggregation combines"},
		{[]string{"--label", "x", filepath.Join(dir, "..", "summary.json")}, "--label: options of a report on results"},
		{[]string{"--aggregate", "mlperf", twice}, rank + ": 2 result files, kvcache_results_20260601_120000.json and kvcache_results_20260701_120000.json: " +
			"a rank directory holds its rank's one result"},
	}
	for _, tt := range tests {
		code, _, errs := kvreport(t, "", tt.args...)
		if code != 2 || !strings.Contains(errs, tt.stderr) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errs, tt.stderr)
		}
	}
}

// A kvreplay result and kv-cache.py documents given together: each kind
// aggregated on its own, kv-cache.py's beside kvbench's.
func TestAggregateMLPerfBeside(t *testing.T) {
	dir := writeRefRun(t, 1, 1)
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", docA, dir)
	if code != 0 || !strings.Contains(out, "kv-cache.py documents (GiB/s converted to GB/s)") || !strings.Contains(out, "aggregated from kvreplay documents") {
		t.Errorf("exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = kvreport(t, "", "--aggregate", "mlperf", "--format", "json", docA, dir)
	if code != 0 || !strings.Contains(out, `"beside": {`) {
		t.Errorf("json: exit %d %s\n%s", code, errs, out)
	}
}

// TestAggregateMLPerfIncompleteRank: a rank whose run was cut short is
// summed as mlpstorage sums it (partial_failure stays false: no file is
// missing), listed in kvbench's incomplete_ranks, and the run fails (exit
// 1) naming the rank, its trial and why.
func TestAggregateMLPerfIncompleteRank(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kvbench_mlperf_20261126_210554")
	for r, src := range shard3 {
		rd := filepath.Join(dir, "option_1", "trial_0", fmt.Sprintf("rank_%d", r))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		edited(t, rd, src, "kvbench_result.json", func(d map[string]any) {
			if r == 2 {
				d["complete"], d["incomplete_reason"] = false, "interrupt signal received"
			}
		})
	}
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	var s struct {
		PartialFailure bool `json:"partial_failure"`
		Options        map[string]struct {
			RankCount int `json:"rank_count"`
		} `json:"options"`
		KVBench struct {
			Incomplete []map[string]any `json:"incomplete_ranks"`
		} `json:"kvbench"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d %s: %v: %s", code, errs, err, out)
	}
	want := "option 1 trial 0 rank 2 was cut short (interrupt signal received): " +
		filepath.Join(dir, "option_1", "trial_0", "rank_2", "kvbench_result.json")
	if code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "partial_failure") {
		t.Errorf("exit %d, stderr %q: want 1 and %q", code, errs, want)
	}
	if s.PartialFailure || s.Options["1"].RankCount != 3 || len(s.KVBench.Incomplete) != 1 ||
		s.KVBench.Incomplete[0]["rank"] != 2.0 || s.KVBench.Incomplete[0]["reason"] != "interrupt signal received" {
		t.Errorf("summary: %+v", s)
	}
}

// TestAggregateMLPerfEmptyTrial: a run whose trial_<T> directory holds no
// rank result, or whose trial numbers have a gap, is written, and fails
// (exit 1) naming the trial: it was summarised as total_ranks 0, exit 0.
func TestAggregateMLPerfEmptyTrial(t *testing.T) {
	run := filepath.Join(t.TempDir(), "kvbench_mlperf_20261126_210554")
	empty := filepath.Join(run, "option_1", "trial_0")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", run)
	if code != 1 || !strings.Contains(errs, "option 1 trial 0: no rank result in its directory: not a measurement ("+empty+")") ||
		!strings.Contains(out, `"missing_trials"`) || !strings.Contains(out, `"partial_failure": true`) {
		t.Errorf("an empty trial: exit %d, stderr %q\n%s", code, errs, out)
	}
	// Trials 0 and 2 of a laid-out run: trial 1 is missing.
	gap := writeRefRun(t, 3, 1)
	if err := os.RemoveAll(filepath.Join(gap, "option_1", "trial_1")); err != nil {
		t.Fatal(err)
	}
	code, out, errs = kvreport(t, "", "--aggregate", "mlperf", gap)
	want := "option 1 trial 1: no trial_1 directory or document: the run's trials are 0, 2"
	if code != 1 || !strings.Contains(errs, want) || !strings.Contains(out, "WARNING: "+want) {
		t.Errorf("a trial missing: exit %d, stderr %q\n%s", code, errs, out)
	}
}

// TestAggregateMLPerfAllCPUTier: an Option none of whose ranks reached
// storage (storage_entries 0 in every rank's document) measured no
// storage, and Rules.md 6.3.4.4 fails it: written, named in the kvbench
// block's cpu_tier_options, exit 1 (it was exit 0, the warning saying the
// rules fail it). One rank in the CPU tier beside others is a whole run.
func TestAggregateMLPerfAllCPUTier(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  func(trial, rank int) bool
		code int
	}{
		{"every rank", func(int, int) bool { return true }, 1},
		{"one rank", func(trial, rank int) bool { return trial == 0 && rank == 1 }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeRefRun(t, 2, 2)
			for tr := range 2 {
				for r := range 2 {
					if !tc.cpu(tr, r) {
						continue
					}
					p := filepath.Join(dir, "option_1", fmt.Sprintf("trial_%d", tr), fmt.Sprintf("rank_%d", r), "kvcache_results_20260701_120000.json")
					raw, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					raw = []byte(strings.Replace(string(raw), `"storage_entries": 9`, `"storage_entries": 0`, 1))
					if err := os.WriteFile(p, raw, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
			var s struct {
				PartialFailure bool `json:"partial_failure"`
				KVBench        struct {
					CPUTierOptions []string `json:"cpu_tier_options"`
				} `json:"kvbench"`
			}
			if err := json.Unmarshal([]byte(out), &s); err != nil {
				t.Fatalf("exit %d %s: %v: %s", code, errs, err, out)
			}
			if code != tc.code || s.PartialFailure {
				t.Errorf("exit %d (want %d), stderr %q, partial_failure %t", code, tc.code, errs, s.PartialFailure)
			}
			want := "option 1: every rank served its working set from the CPU tier (see kvbench.cpu_tier_options)"
			if tc.code == 1 && (!strings.Contains(errs, want) || len(s.KVBench.CPUTierOptions) != 1 || s.KVBench.CPUTierOptions[0] != "1") {
				t.Errorf("stderr %q (want %q), cpu_tier_options %q", errs, want, s.KVBench.CPUTierOptions)
			}
			if tc.code == 0 && len(s.KVBench.CPUTierOptions) != 0 {
				t.Errorf("cpu_tier_options %q of a run with ranks on storage", s.KVBench.CPUTierOptions)
			}
		})
	}
}

// TestAggregateMLPerfOwnSummary: the run's own kvcache_run_summary (at
// the top of its directory, as mlpstorage writes it from its
// configuration) says how many ranks and trials it had: a rank or a last
// trial none of whose results reached the directory (a remote host's, on
// a results directory that is not shared: Rules.md 6.3.3.4) is missing,
// exit 1; it was a smaller, whole run, exit 0. A summary given beside,
// not in the run's directory, is only compared.
func TestAggregateMLPerfOwnSummary(t *testing.T) {
	dir := writeRefRun(t, 3, 1) // rank 0 of trials 0-2
	if err := os.RemoveAll(filepath.Join(dir, "option_1", "trial_2")); err != nil {
		t.Fatal(err)
	}
	summary := `{"schema_version": "1.0", "run_datetime": "20260701_120000", "npernode": 1, "host_count": 2, "total_ranks": 2,
"trials_per_option": 3, "options": {"1": {"option": 1, "partial_failure": false}}, "partial_failure": false}`
	elsewhere := filepath.Join(t.TempDir(), "kvcache_run_summary_20260701_120000.json")
	if err := os.WriteFile(elsewhere, []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir, elsewhere); code != 0 {
		t.Errorf("a summary beside: exit %d %s", code, errs)
	}
	if err := os.WriteFile(filepath.Join(dir, "kvcache_run_summary_20260701_120000.json"), []byte(summary), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	var s struct {
		TotalRanks int `json:"total_ranks"`
		Options    map[string]struct {
			Missing []string `json:"missing_files"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d %s: %v: %s", code, errs, err, out)
	}
	// The last trial, which left no directory, is a trial of missing
	// ranks, as mlpstorage's loop over the trials it ran makes it.
	want := []string{filepath.Join(dir, "option_1", "trial_0", "rank_1"), filepath.Join(dir, "option_1", "trial_1", "rank_1"),
		filepath.Join(dir, "option_1", "trial_2", "rank_0"), filepath.Join(dir, "option_1", "trial_2", "rank_1")}
	trial := "option 1 trial 2: no trial_2 directory or document: the run's trials are 0, 1, and its kvcache_run_summary says it ran 3 per Option"
	if code != 1 || s.TotalRanks != 2 || fmt.Sprint(s.Options["1"].Missing) != fmt.Sprint(want) || !strings.Contains(errs, trial) {
		t.Errorf("exit %d, stderr %q, total_ranks %d, missing %q: want 1, %q, 2, %q", code, errs, s.TotalRanks, s.Options["1"].Missing, trial, want)
	}
}

// TestFailedOperationsNotAMeasurement: a rank whose document says it is
// complete but had failed operations is a failed run, as kvreplay (which
// stops at the first failed operation, exit 1) and a search (whose probe
// with one is no measurement) say: the aggregation lists it in kvbench's
// failed_ranks and fails (exit 1) naming it, where it warned and exited
// 0; the same document on stdin fails a report (exit 1) as an
// incomplete one does, after its verdict, FAIL, is rendered.
func TestFailedOperationsNotAMeasurement(t *testing.T) {
	const first = `Read Tier-2 Decode "k1": read /x: input/output error`
	failed := func(d map[string]any) {
		d["errors"] = map[string]any{"count": 2, "first": []string{first}}
	}
	dir := filepath.Join(t.TempDir(), "kvbench_mlperf_20261126_210554")
	for r, src := range shard3 {
		rd := filepath.Join(dir, "option_1", "trial_0", fmt.Sprintf("rank_%d", r))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		edited(t, rd, src, "kvbench_result.json", func(d map[string]any) {
			if r == 1 {
				failed(d)
			}
		})
	}
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	var s struct {
		KVBench struct {
			Failed []map[string]any `json:"failed_ranks"`
		} `json:"kvbench"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d %s: %v: %s", code, errs, err, out)
	}
	file := filepath.Join(dir, "option_1", "trial_0", "rank_1", "kvbench_result.json")
	want := "option 1 trial 0 rank 1: 2 operation(s) failed, the first: " + first + ": " + file
	if code != 1 || !strings.Contains(errs, want) {
		t.Errorf("aggregate: exit %d, stderr %q: want 1 and %q", code, errs, want)
	}
	if len(s.KVBench.Failed) != 1 || s.KVBench.Failed[0]["rank"] != 1.0 || s.KVBench.Failed[0]["failed_operations"] != 2.0 {
		t.Errorf("failed_ranks %+v", s.KVBench.Failed)
	}
	code, out, _ = kvreport(t, "", "--aggregate", "mlperf", dir)
	if code != 1 || !strings.Contains(out, "WARNING: option 1 trial 0 rank 1: 2 operations failed: not a measurement") {
		t.Errorf("aggregate, text: exit %d\n%s", code, out)
	}

	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = kvreport(t, string(raw), "-")
	if code != 1 || !strings.Contains(errs, "2 operation(s) failed") || !strings.Contains(out, "FAIL") {
		t.Errorf("stdin: exit %d, stderr %q\n%s", code, errs, out)
	}
	// The same rank's document as it was, on stdin: a measurement.
	clean, err := os.ReadFile(shard3[1])
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := kvreport(t, string(clean), "-"); code != 0 {
		t.Errorf("the rank's own document on stdin: exit %d %s", code, errs)
	}
}

// TestAggregateMLPerfOptionVerdict: the Option whose ranks failed or
// were cut short, which makes kvreport exit 1, says so on its own line
// in every format --aggregate writes (text, md, json), naming the ranks,
// its verdict NOT A MEASUREMENT (not storage_health's FAIL: PASS and FAIL
// mean one thing everywhere): only a WARNING line of the run named them, and the
// Option's line read "partial_failure false".
func TestAggregateMLPerfOptionVerdict(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kvbench_mlperf_20261126_210554")
	for r, src := range shard3 {
		rd := filepath.Join(dir, "option_1", "trial_0", fmt.Sprintf("rank_%d", r))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		edited(t, rd, src, "kvbench_result.json", func(d map[string]any) {
			switch r {
			case 1:
				d["errors"] = map[string]any{"count": 2, "first": []string{"read /x: input/output error"}}
			case 2:
				d["complete"], d["incomplete_reason"] = false, "interrupt signal received"
			}
		})
	}
	line := "verdict NOT A MEASUREMENT, partial_failure false, missing_files [], cpu_tier_ranks [], failed_ranks [trial 0 rank 1], incomplete_ranks [trial 0 rank 2]"
	for _, format := range []string{"text", "md"} {
		code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", format, dir)
		if code != 1 || !strings.Contains(errs, "not a whole run") {
			t.Errorf("%s: exit %d, stderr %q: want 1", format, code, errs)
		}
		for _, want := range []string{"option 1: 1 trial(s) x 3 rank(s): NOT A MEASUREMENT\n", line + "\n",
			"NOT A MEASUREMENT: 1 rank run(s) with failed operations in these figures: trial 0 rank 1: 2 operation(s) failed",
			"NOT A MEASUREMENT: 1 rank run(s) cut short, in these figures as if whole: trial 0 rank 2 cut short (interrupt signal received)"} {
			if format == "md" {
				want = strings.NewReplacer("[", `\[`, "]", `\]`).Replace(want) // Markdown's text
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", format, want, out)
			}
		}
	}
	code, out, errs := kvreport(t, "", "--aggregate", "mlperf", "--format", "json", dir)
	var s struct {
		Options map[string]struct {
			PartialFailure bool `json:"partial_failure"`
			KVBench        struct {
				Verdict    string   `json:"verdict"`
				Failed     []string `json:"failed_ranks"`
				Incomplete []string `json:"incomplete_ranks"`
				Why        []string `json:"why"`
			} `json:"kvbench"`
		} `json:"options"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("exit %d %s: %v: %s", code, errs, err, out)
	}
	o := s.Options["1"]
	if code != 1 || o.PartialFailure || o.KVBench.Verdict != "NOT A MEASUREMENT" || fmt.Sprint(o.KVBench.Failed) != "[trial 0 rank 1]" ||
		fmt.Sprint(o.KVBench.Incomplete) != "[trial 0 rank 2]" || len(o.KVBench.Why) != 2 {
		t.Errorf("json: exit %d, option 1 %+v", code, o)
	}

	// The same run whole: MEASURED, exit 0.
	for r, src := range shard3 {
		edited(t, filepath.Join(dir, "option_1", "trial_0", fmt.Sprintf("rank_%d", r)), src, "kvbench_result.json", func(map[string]any) {})
	}
	code, out, errs = kvreport(t, "", "--aggregate", "mlperf", dir)
	if code != 0 || !strings.Contains(out, "option 1: 1 trial(s) x 3 rank(s): MEASURED\n") ||
		!strings.Contains(out, "verdict MEASURED, partial_failure false, missing_files [], cpu_tier_ranks [], failed_ranks [], incomplete_ranks []\n") {
		t.Errorf("a whole run: exit %d %s\n%s", code, errs, out)
	}
}
