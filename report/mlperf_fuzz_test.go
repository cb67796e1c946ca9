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
// kv-cache.py's, damaged) is refused with an error or aggregated and
// rendered in every --aggregate format, never a panic.
func FuzzAggregateDocument(f *testing.F) {
	for _, p := range []string{"testdata/u10_t1.json", "testdata/shard3/r0.json", "testdata/kvcache_py/u50_d20_hand_measured.json", "testdata/closed_t1.json"} {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		run, err := LoadMLPerf(context.Background(), []string{"-"}, bytes.NewReader(raw), nil)
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
