package report

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found in
// --aggregate mlperf and the documents it reads: each fails on a small
// change to the code under it (named in its comment) that the rest of the
// package's tests let through.

// layOption writes Option option of a run under dir: trials[t] ranks of
// trial t left a result (of 2 ranks), each edited by edit when not nil.
func layOption(t *testing.T, dir string, option int, trials map[int]int, edit func(trial, rank int, d *schema.Result)) {
	t.Helper()
	for tr, ranks := range trials {
		for r := range ranks {
			d := mlperfDoc(t, rankSpec{option: option, trial: tr, rank: r, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
			if edit != nil {
				edit(tr, r, d)
			}
			raw, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			rd := filepath.Join(dir, fmt.Sprintf("option_%d", option), fmt.Sprintf("trial_%d", tr), fmt.Sprintf("rank_%d", r))
			if err := os.MkdirAll(rd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestMLPerfOneFailedOperationFails: a rank with a single failed
// operation is not a measurement, and fails its Option (a rule of "more
// than one" would pass it).
func TestMLPerfOneFailedOperationFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layOption(t, dir, 1, map[int]int{0: 2, 1: 2}, func(trial, rank int, d *schema.Result) {
		if trial == 0 && rank == 1 {
			d.Errors = schema.ErrorStats{Count: 1, First: []string{"nvme: read 3_a: input/output error"}}
		}
	})
	s := aggregateDir(t, dir)
	v := s.Options["1"].KVBench
	if v == nil || v.Verdict != VerdictFail || !slices.Equal(v.FailedRanks, []string{"trial 0 rank 1"}) {
		t.Errorf("verdict %+v, want FAIL naming trial 0 rank 1", v)
	}
	if s.KVBench == nil || len(s.KVBench.FailedRanks) != 1 || s.KVBench.FailedRanks[0].FailedOperations != 1 {
		t.Errorf("kvbench failed_ranks %+v", s.KVBench)
	}
}

// TestMLPerfAllCPUTierFails: an Option whose every rank kept its working
// set in RAM measured no storage: its verdict is FAIL saying so, it is
// listed in cpu_tier_options, and it has no pooled view ("no rank reached
// storage", not figures pooled from nothing). An Option with no rank
// found at all is not a CPU-tier one.
func TestMLPerfAllCPUTierFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layOption(t, dir, 1, map[int]int{0: 2}, nil)
	layOption(t, dir, 2, map[int]int{0: 2}, func(trial, rank int, d *schema.Result) {
		*d = *mlperfDoc(t, rankSpec{option: 2, trial: trial, rank: rank, cpuOnly: true})
	})
	// Option 3: its trial's directory, and no rank result in it.
	if err := os.MkdirAll(filepath.Join(dir, "option_3", "trial_0"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := aggregateDir(t, dir)
	if s.KVBench == nil || !slices.Equal(s.KVBench.CPUTierOptions, []string{"2"}) {
		t.Fatalf("cpu_tier_options %v, want [2]", s.KVBench)
	}
	v := s.Options["2"].KVBench
	if v == nil || v.Verdict != VerdictFail || !slices.ContainsFunc(v.Why, func(w string) bool { return strings.Contains(w, "CPU tier") }) {
		t.Errorf("option 2 verdict %+v, want FAIL: every rank in the CPU tier", v)
	}
	p := s.KVBench.Options["2"]
	if p.Pooled != nil || p.NotPooled != "no rank reached storage" {
		t.Errorf("option 2 pooled %+v, not pooled %q", p.Pooled, p.NotPooled)
	}
	if v := s.Options["1"].KVBench; v == nil || v.Verdict != VerdictPass {
		t.Errorf("option 1 verdict %+v, want PASS", v)
	}
	if v := s.Options["3"]; v == nil || v.KVBench == nil ||
		slices.ContainsFunc(v.KVBench.Why, func(w string) bool { return strings.Contains(w, "CPU tier") }) {
		t.Errorf("option 3 (no rank found) reads as a CPU-tier Option: %+v", v)
	}
}

// TestMLPerfRunWideFigures: the run's partial_failure is any Option's
// (not the last one's), and trials_per_option the run's.
func TestMLPerfRunWideFigures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layOption(t, dir, 1, map[int]int{0: 2, 1: 1}, nil) // trial 1 rank 1 missing
	layOption(t, dir, 2, map[int]int{0: 2, 1: 2}, nil) // whole
	s := aggregateDir(t, dir)
	if !s.Options["1"].PartialFailure || s.Options["2"].PartialFailure {
		t.Fatalf("test setup: partial failures %v %v", s.Options["1"].PartialFailure, s.Options["2"].PartialFailure)
	}
	if !s.PartialFailure {
		t.Error("partial_failure false for a run whose Option 1 lacks a rank result")
	}
	if s.TrialsPerOption != 2 {
		t.Errorf("trials_per_option %d, want 2 (Option 1's)", s.TrialsPerOption)
	}
}

// TestMLPerfRunDatetimeEarliest: of two run directories given, the run's
// date is the earlier's.
func TestMLPerfRunDatetimeEarliest(t *testing.T) {
	root := t.TempDir()
	late, early := filepath.Join(root, "kvbench_mlperf_20260701_130000"), filepath.Join(root, "kvbench_mlperf_20260701_110000")
	layOption(t, late, 1, map[int]int{0: 2}, nil)
	layOption(t, early, 2, map[int]int{0: 2}, nil)
	for _, order := range [][]string{{late, early}, {early, late}} {
		run, err := LoadMLPerf(context.Background(), order, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := AggregateMLPerf(context.Background(), run, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if s.RunDatetime != "20260701_110000" {
			t.Errorf("given %q: run_datetime %s, want the earlier 20260701_110000", order, s.RunDatetime)
		}
	}
}

// TestMLPerfPooledFigures: the pooled view's device p95s are the 95th
// percentile of the device latency where a document has one (else of
// its cells), and its counts are of reads and writes each: every
// distribution here has a P95 apart from its P99, and reads and writes
// differ in number.
func TestMLPerfPooledFigures(t *testing.T) {
	ms := time.Millisecond
	mk := func(op string, n int, fast, mid, slow time.Duration) (schema.Cell, schema.Latency) {
		c := results.NewCell()
		l := results.NewLatency()
		ds := slices.Concat(slices.Repeat([]time.Duration{fast}, n-6), []time.Duration{mid, mid, mid, slow, slow, slow})
		for _, d := range ds {
			c.Add(d, d, 1000, 1000)
			l.Add(d / 2) // the device's share of it
		}
		return c.Finalize("Tier-2", op, "Decode", "nvme", time.Second), l.Finalize()
	}
	rc, rdev := mk("Read", 100, ms, 20*ms, 90*ms)
	wc, wdev := mk("Write", 60, 2*ms, 30*ms, 140*ms)
	cells := []schema.Cell{rc, wc}
	for _, l := range []schema.Latency{rc.Latency, wc.Latency, rdev} {
		if l.P95US == l.P99US {
			t.Fatalf("test setup: p95 %v = p99", l.P95US)
		}
	}

	f, err := figuresOf(cells, nil, []schema.Latency{rc.Latency})
	if err != nil {
		t.Fatal(err)
	}
	if f.DeviceReadP95MS != rc.Latency.P95US/1000 || f.DeviceWriteP95MS != wc.Latency.P95US/1000 {
		t.Errorf("device p95s %v %v, want the cells' %v %v", f.DeviceReadP95MS, f.DeviceWriteP95MS, rc.Latency.P95US/1000, wc.Latency.P95US/1000)
	}
	if f.DeviceReads != 100 || f.DeviceWrites != 60 {
		t.Errorf("counts %d reads %d writes, want 100 60", f.DeviceReads, f.DeviceWrites)
	}
	if f.RequestP95MS != rc.Latency.P95US/1000 {
		t.Errorf("request p95 %v, want %v", f.RequestP95MS, rc.Latency.P95US/1000)
	}

	device := []schema.DeviceLatency{{Tier: "Tier-2", Op: "Read", Latency: rdev}, {Tier: "Tier-2", Op: "Write", Latency: wdev}}
	if f, err = figuresOf(cells, device, nil); err != nil {
		t.Fatal(err)
	}
	if f.DeviceReadP95MS != rdev.P95US/1000 || f.DeviceWriteP95MS != wdev.P95US/1000 {
		t.Errorf("device p95s %v %v, want the device latency's %v %v", f.DeviceReadP95MS, f.DeviceWriteP95MS, rdev.P95US/1000, wdev.P95US/1000)
	}
}

// TestMLPerfRankDevicePartly: a document with one device p95 and not
// the other (0) has the missing one recomputed from its own cells (reads
// about 10 ms, writes about 20 ms), not left 0 for the rule's max nor
// taken from the other operation.
func TestMLPerfRankDevicePartly(t *testing.T) {
	for _, c := range []struct {
		name   string
		zero   func(*schema.Summary)
		lo, hi float64
		of     func(MLPerfRank) (got, kept float64)
	}{
		{"no write", func(s *schema.Summary) { s.StorageWriteDeviceP95MS = 0 }, 19, 21,
			func(rk MLPerfRank) (float64, float64) { return rk.DeviceWriteP95MS, rk.DeviceReadP95MS }},
		{"no read", func(s *schema.Summary) { s.StorageReadDeviceP95MS = 0 }, 9, 11,
			func(rk MLPerfRank) (float64, float64) { return rk.DeviceReadP95MS, rk.DeviceWriteP95MS }},
	} {
		d := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
		before := d.Summary
		c.zero(&d.Summary)
		var rk MLPerfRank
		if err := kvreplayFigures(&rk, d); err != nil {
			t.Fatal(err)
		}
		got, kept := c.of(rk)
		_, want := c.of(MLPerfRank{DeviceReadP95MS: before.StorageReadDeviceP95MS, DeviceWriteP95MS: before.StorageWriteDeviceP95MS})
		if got < c.lo || got > c.hi || kept != want {
			t.Errorf("%s: recomputed %v ms, want %v..%v; the other %v, want %v kept", c.name, got, c.lo, c.hi, kept, want)
		}
	}
}

// TestMLPerfSummaryBandwidthExact: a kvreplay summary whose Tier-2
// bandwidth differs from its own tiers' by 0.05 % (an edited document) is
// refused; the check is to rounding, not to a tenth of a percent.
func TestMLPerfSummaryBandwidthExact(t *testing.T) {
	d := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	if err := checkSummary(d); err != nil {
		t.Fatalf("test setup: %v", err)
	}
	d.Summary.TierStorageReadBandwidthGBps *= 1.0005
	if err := checkSummary(d); err == nil || !strings.Contains(err.Error(), "tier_storage_read_bandwidth_gbps") {
		t.Errorf("an edited bandwidth passed: %v", err)
	}
}

// TestMLPerfNullBackendIsMemory: a Tier-2 on the null backend reached no
// storage: the rank is a CPU-tier one, its storage figures zeros.
func TestMLPerfNullBackendIsMemory(t *testing.T) {
	d := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	for i := range d.Tiers {
		if d.Tiers[i].Tier == "Tier-2" {
			d.Tiers[i].Backend = "null"
		}
	}
	var rk MLPerfRank
	if err := kvreplayFigures(&rk, d); err != nil {
		t.Fatal(err)
	}
	if !rk.CPUTier || rk.ReadBandwidthGBps != 0 || rk.DeviceReadP95MS != 0 {
		t.Errorf("rank %+v, want a CPU-tier rank with zero storage figures", rk)
	}
}

// TestBandwidthScaleOfMLPerfSummary: an mlpstorage summary (no kvbench
// block) is of kv-cache.py's documents: its "GB/s" are GiB/s, converted.
func TestBandwidthScaleOfMLPerfSummary(t *testing.T) {
	if got := bandwidthScale(&MLPerfRunSummary{}); got != gibPerGB {
		t.Errorf("scale of an mlpstorage summary %v, want %v", got, gibPerGB)
	}
	if got := bandwidthScale(&MLPerfRunSummary{KVBench: &MLPerfKVBench{Source: KindKVReplay}}); got != 1 {
		t.Errorf("scale of kvreplay's %v, want 1", got)
	}
}

// TestReferenceTierBytesGiB: kv-cache.py's *_kv_bytes_*_gb are GiB
// (it divides by 1024**3): 2 of them are 2^31 bytes.
func TestReferenceTierBytesGiB(t *testing.T) {
	raw := `{"requests_completed":1,"summary":{"elapsed_time":2,"cache_stats":{"tier_storage_read_bandwidth_gbps":1.5,` +
		`"tier_storage_write_bandwidth_gbps":0.5,"tier_storage_kv_bytes_read_gb":2,"tier_storage_kv_bytes_written_gb":0.5}}}`
	d, err := Decode("ref.json", []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(d.Result.Tiers, func(t schema.TierTotals) bool { return t.Tier == "Tier-2" })
	if i < 0 {
		t.Fatalf("no Tier-2 in %+v", d.Result.Tiers)
	}
	tt := d.Result.Tiers[i]
	if tt.ReadBytes != 2<<30 || tt.WriteBytes != 1<<29 || tt.ReadOfferedBps != 1.5*(1<<30) || tt.WriteOfferedBps != 0.5*(1<<30) {
		t.Errorf("Tier-2 %+v, want 2 GiB read, 0.5 GiB written, 1.5 and 0.5 GiB/s", tt)
	}
}
