package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestComparisonWarnsOfOtherSyncs: a run with --fsync compared with one
// without (two systems, or two trials of one group) warns in every
// format: their write latencies, and the device write p95 MLPerf scores,
// include each write's fdatasync in one and not in the other. They were
// compared and averaged without a word.
func TestComparisonWarnsOfOtherSyncs(t *testing.T) {
	raw, err := os.ReadFile(closedResult)
	if err != nil {
		t.Fatal(err)
	}
	var r schema.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	r.Replay.Fsync = !r.Replay.Fsync
	r.Trial = r.Trial + 1
	b, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "synced.json")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, opt := range map[string]LoadOptions{"systems": {GroupBy: []string{"file"}}, "trials": {Label: "sysA"}} {
		rep := build(t, []string{closedResult, other}, opt, BuildOptions{})
		for f, out := range renderAll(t, rep) {
			if !strings.Contains(out, "DIFFERENT SYNCS") {
				t.Errorf("%s, %s: no DIFFERENT SYNCS warning", name, f)
			}
		}
	}
}

// TestHugeFiguresRefused: a document whose elapsed time or token rate no
// run gives (1.7e308) is refused when read, naming the figure: two
// trials of it overflowed the statistics' sum to NaN, the text view showed
// NaN, and --format json failed with "json: unsupported value: NaN".
func TestHugeFiguresRefused(t *testing.T) {
	raw, err := os.ReadFile(closedResult)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"storage_throughput_tokens_per_sec", "wall_s"} {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		if field == "wall_s" {
			doc["wall_s"] = 1.7e308
		} else {
			doc["summary"].(map[string]any)[field] = 1.7e308
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode("huge.json", b); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s 1.7e308: %v, want an error naming it", field, err)
		}
	}
}
