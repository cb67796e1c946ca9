package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestInterruptedRunIsNotPass stops a replay early, as a signal does (the
// context cli.Main cancels on SIGINT): the partial result is never a
// storage_health PASS, and it says what it replayed, the trace's name,
// digest and total rows, so the summary reads "N of 594 rows".
func TestInterruptedRunIsNotPass(t *testing.T) {
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	raw, err := os.ReadFile(tr)
	if err != nil {
		t.Skipf("reference trace: %v", err)
	}
	sum := sha256.Sum256(raw)
	out := filepath.Join(t.TempDir(), "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err = run(ctx, []string{"--speed", "1", "--size-scale", "1/4096", "--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=ram", "-o", out, tr},
		&stdout, &stderr)
	if err == nil {
		t.Fatal("the run was not stopped (the trace lasts 30 s at --speed 1)")
	}
	r := readResult(t, out)
	if r.Complete {
		t.Fatal("the result says complete")
	}
	if h := r.Summary.StorageHealth.OverallStatus; h != results.HealthIncomplete {
		t.Errorf("storage_health %q, want %s", h, results.HealthIncomplete)
	}
	if len(r.Traces) != 1 {
		t.Fatalf("traces %+v", r.Traces)
	}
	info := r.Traces[0]
	if info.File != tr || info.Rows != 594 || info.ReadInPart || info.SHA256 != hex.EncodeToString(sum[:]) || info.SizeBytes != int64(len(raw)) {
		t.Errorf("trace entry %+v: want %s, 594 rows, sha256 %x", info, tr, sum)
	}
	if r.Replay.RowsDone == 0 || r.Replay.RowsDone >= 594 {
		t.Errorf("%d rows done, want some of 594", r.Replay.RowsDone)
	}
	var b strings.Builder
	writeSummary(&b, r)
	for _, want := range []string{" of 594 rows", "storage_health: INCOMPLETE"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "PASS") {
		t.Errorf("summary of an incomplete run says PASS:\n%s", b.String())
	}
}

// TestEmptyTraceNothingToMeasure: a trace with a header and no rows is
// no vacuous PASS: storage_health is NO_DATA, and the result and summary
// say nothing was measured.
func TestEmptyTraceNothingToMeasure(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "empty.csv")
	if err := os.WriteFile(tr, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := replayDoc(t, "--tier-map", "Tier-1=ram,Tier-2=ram", "-o", "-", tr)
	if h := r.Summary.StorageHealth; h.OverallStatus != results.HealthNoData || h.TotalCount != 0 {
		t.Errorf("storage_health %+v, want %s", h, results.HealthNoData)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "NOTHING MEASURED") {
		t.Errorf("warnings %q say nothing of it", r.Warnings)
	}
	var b strings.Builder
	writeSummary(&b, r)
	if !strings.Contains(b.String(), "nothing to measure") || strings.Contains(b.String(), "PASS") {
		t.Errorf("summary:\n%s", b.String())
	}
}

// TestSummaryNotMeasured: the summary says what the run could not measure
// instead of printing a zero or a verdict: the KV tokens without bytes per
// token, the SLA under --speed max.
func TestSummaryNotMeasured(t *testing.T) {
	r := &schema.Result{Complete: true, WallS: 2, Traces: []schema.TraceInfo{{File: "-", Rows: 10}},
		Replay:   schema.ReplayStats{RowsDone: 10},
		Requests: schema.RequestStats{Count: 4, ByQoS: []schema.QoSStats{{QoS: "interactive", Count: 4, TargetP95MS: 50}}}}
	var err error
	if r.Summary, err = results.Summarize(r, nil); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeSummary(&b, r)
	for _, want := range []string{"10 of 10 rows", "SLA not measured", "SLA not measured: under --speed max", "kv_tokens_moved_per_s (kvbench's): not measured"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "NOT met") {
		t.Errorf("summary judges the SLA under --speed max:\n%s", b.String())
	}
	tokens := 1000.0
	r.Replay.Speed = 1
	if r.Summary, err = results.Summarize(r, &tokens); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	writeSummary(&b, r)
	for _, want := range []string{"SLA NOT met", "per second of the run): 500\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary at --speed 1 lacks %q:\n%s", want, b.String())
		}
	}
}
