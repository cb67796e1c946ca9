package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzAggregateDocument: any document read as a rank of a run (kvreplay's,
// kv-cache.py's, a kvcache_run_summary, damaged) is refused with an error
// or aggregated and rendered in every --aggregate format, never a panic,
// and the json written reads back as a kvcache_run_summary. Its input is
// a base document changed by a patch, or the whole input (fuzzDoc).
func FuzzAggregateDocument(f *testing.F) {
	bases := fuzzBases(f, "testdata/u10_t1.json", "testdata/shard3/r0.json", "testdata/kvcache_py/u50_d20_hand_measured.json",
		"testdata/closed_t1.json", "testdata/mlperf.json.golden")
	whole := uint8(len(bases))
	for i := range bases {
		f.Add(uint8(i), uint32(0), []byte(`{}`))
	}
	for _, seed := range []struct {
		base  uint8
		at    uint32
		patch string
	}{
		{0, 0, `{"complete": false, "incomplete_reason": "interrupt signal received"}`},
		{0, 0, `{"errors": {"count": 2, "first": ["read /x: input/output error"]}}`},
		{1, 0, `{"rank": 5, "ranks": 8, "trial": 3}`},
		{1, 0, `{"size_scale": 0.5, "label": "option_2"}`},
		{1, 0, `{"summary": {"storage_throughput_tokens_per_sec": -1}}`},
		{3, 0, `{"tiers": null, "cells": []}`},
		{2, 0, `{"summary": {"cache_stats": {"storage_entries": 0}}}`},
		{4, 0, `{"total_ranks": 3, "options": {"2": {"option": 2, "rank_count": -1}}}`},
		{0, 400, `"x`},
		{1, cutAt(5000), ``},
		{whole, 0, `{"requests_completed": 5, "summary": {"total_requests": 5, "storage_throughput_tokens_per_sec": 100, ` +
			`"cache_stats": {"storage_entries": 9, "tier_storage_read_bandwidth_gbps": 2, "tier_storage_write_bandwidth_gbps": 1, ` +
			`"storage_read_device_p95_ms": 10, "storage_write_device_p95_ms": 5}}}`},
		{whole, 0, `{"schema_version": "1.0", "total_ranks": 2, "options": {"1": {"option": 1, "aggregated_read_bandwidth_gbps": 1}}}`},
	} {
		f.Add(seed.base, seed.at, []byte(seed.patch))
	}
	f.Fuzz(func(t *testing.T, base uint8, at uint32, patch []byte) {
		doc := fuzzDoc(bases, base, at, patch)
		run, err := LoadMLPerf(context.Background(), []string{"-"}, bytes.NewReader(doc), nil)
		if err != nil {
			return
		}
		for _, r := range run.ByKind() {
			s, err := AggregateMLPerf(context.Background(), r, time.Time{})
			if err != nil {
				continue
			}
			for _, format := range []string{"json", "text", "md"} {
				var b bytes.Buffer
				if err := RenderMLPerf(&b, s, run.Summaries, format); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				if format != "json" {
					continue
				}
				if _, ok, err := decodeRunSummary(b.Bytes()); !ok || err != nil {
					t.Fatalf("the json written does not read back as a kvcache_run_summary: %v\n%s", err, b.Bytes())
				}
			}
		}
	})
}

// TestMLPerfBoundsTrials: a trial number above maxMLPerfTrials (a
// document's kvreplay --trial, or a trial_<T> directory), a negative one,
// or more rank results to name than maxMLPerfSlots (ranks x trials) is
// refused at once, naming it: a document of trial 50000000 had
// missingTrials name 50 million trials, 22 GB and minutes before the
// kernel killed kvreport, and ranks x trials missing_files grew as
// their product.
func TestMLPerfBoundsTrials(t *testing.T) {
	raw, err := os.ReadFile("testdata/shard3/r0.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	with := func(k string, v any) []byte {
		doc[k] = v
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	start := time.Now()
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"trial 50000000", with("trial", 50000000), "trial 50000000: want 0 to 1023"},
		{"trial -2", with("trial", -2), "trial is -2: want 0 or more"},
	} {
		_, err := LoadMLPerf(context.Background(), []string{"-"}, bytes.NewReader(tc.raw), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	doc["trial"] = 0
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "option_1", "trial_5000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil); err == nil || !strings.Contains(err.Error(), "trial_5000: trial 5000: want 0 to 1023") {
		t.Errorf("trial_5000: err %v", err)
	}
	// 65536 ranks (a document's --ranks) x 32 trials: 2 million rank
	// results, each missing one named.
	dir = t.TempDir()
	for tr := range 32 {
		rd := filepath.Join(dir, "option_1", "trial_"+strconv.Itoa(tr), "rank_0")
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		doc["trial"], doc["ranks"], doc["started"] = tr, 65536, time.Date(2026, 7, 1, 0, tr, 0, 0, time.UTC)
		b, _ := json.Marshal(doc)
		if err := os.WriteFile(filepath.Join(rd, "r.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AggregateMLPerf(context.Background(), run, time.Time{}); !errors.Is(err, ErrIncompatible) ||
		!strings.Contains(fmt.Sprint(err), "65536 ranks x 32 trials: 2097152 rank results, at most 1048576") {
		t.Errorf("65536 ranks x 32 trials: err %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
}
