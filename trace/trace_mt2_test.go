package trace

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// Tests written from mutation testing: each pins a rule that a one-token
// change of the code broke without another test failing.

// TestCountsSkipRequestZero: rows without a request (Request 0) between
// rows of requests add no request to the sidecar's count, as Summarize
// reads the trace back.
func TestCountsSkipRequestZero(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range []uint64{1, 0, 1, 0, 2} {
		rec := schema.Record{Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte{'k', byte('0' + i)}, Request: req, User: 7}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Summarize(NewReader(&buf))
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Counts(); got.Requests != 2 || s.Requests != 2 || got.Users != 1 {
		t.Errorf("counts %+v (Summarize: %d requests), want 2 requests, 1 user", got, s.Requests)
	}
}

// TestCloseAfterAFailedWriteKeepsNothing: a Writer of Create whose output
// failed removes its temporary file at Close and puts nothing at the path:
// a trace file is never seen half-written.
func TestCloseAfterAFailedWriteKeepsNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.csv")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := schema.Record{Op: schema.OpWrite, Size: 4096, Tier: schema.TierCPU, Key: []byte("k")}
	if err := w.Write(&rec); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("device full")
	w.err = failed // as a failed write of the output goroutine leaves it
	if err := w.Close(); !errors.Is(err, failed) {
		t.Errorf("Close = %v, want %v", err, failed)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("after a failed Close %s holds %v, want nothing", dir, entries)
	}
}

// TestMetaCapacityAndPeakBounds: a sidecar's tier capacity may be -1
// (unlimited) but no less, and a peak may not be negative.
func TestMetaCapacityAndPeakBounds(t *testing.T) {
	for _, c := range []struct {
		json, errText string
	}{
		{`{"tier_capacity_bytes":{"Tier-2":-1,"Tier-1":0}}`, ""},
		{`{"tier_capacity_bytes":{"Tier-2":-2}}`, "tier_capacity_bytes"},
		{`{"peak_live_bytes":{"Tier-1":-1}}`, "peak_live_bytes"},
	} {
		tracePath := filepath.Join(t.TempDir(), "t.csv")
		if err := os.WriteFile(MetaPath(tracePath), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadMeta(tracePath)
		if c.errText == "" && err != nil || c.errText != "" && (err == nil || !strings.Contains(err.Error(), c.errText)) {
			t.Errorf("%s: %v, want error %q", c.json, err, c.errText)
		}
	}
}
