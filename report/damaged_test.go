package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestDecodeDamagedResult: a kvreplay result whose counts, sizes or times
// no run gives (a negative elapsed time, size scale, byte count or rank, a
// rank beyond its run's ranks, a size scale above 1) is refused by every
// kvreport path that reads it, naming the file, the field and the value:
// kvreport showed "elapsed -5 s", and a tier of -10^12 bytes dropped its
// bandwidth from the report without a word. The document as written
// reads.
func TestDecodeDamagedResult(t *testing.T) {
	raw, err := os.ReadFile("testdata/shard3/r1.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(d map[string]any)
		want string
	}{
		{"as written", func(map[string]any) {}, ""},
		{"wall", func(d map[string]any) { d["wall_s"] = -5 }, "wall_s is -5: want 0 or more"},
		{"scale", func(d map[string]any) { d["size_scale"] = -1 }, "size_scale is -1: want more than 0 and at most 1"},
		{"scale above 1", func(d map[string]any) { d["size_scale"] = 4 }, "size_scale is 4: want more than 0 and at most 1"},
		{"rank", func(d map[string]any) { d["rank"] = -1 }, "rank is -1: want 0 or more"},
		{"rank of ranks", func(d map[string]any) { d["rank"] = 3 }, "rank is 3 of ranks 3: want 0 to 2"},
		{"trial", func(d map[string]any) { d["trial"] = -1 }, "trial is -1: want 0 or more"},
		{"errors", func(d map[string]any) { d["errors"] = map[string]any{"count": -2} }, "errors.count is -2: want 0 or more"},
		{"tier bytes", func(d map[string]any) { d["tiers"].([]any)[0].(map[string]any)["read_bytes"] = -1e12 },
			"tiers[0].read_bytes is -1000000000000: want 0 or more"},
		{"cell ops", func(d map[string]any) { d["cells"].([]any)[1].(map[string]any)["ops"] = -3 }, "cells[1].ops is -3: want 0 or more"},
		{"tier failed ops", func(d map[string]any) { d["tiers"].([]any)[0].(map[string]any)["failed_ops"] = -1 },
			"tiers[0].failed_ops is -1: want 0 or more"},
		{"cell failed ops", func(d map[string]any) { d["cells"].([]any)[1].(map[string]any)["failed_ops"] = -2 },
			"cells[1].failed_ops is -2: want 0 or more"},
		{"requests", func(d map[string]any) { d["requests"].(map[string]any)["count"] = -1 }, "requests.count is -1: want 0 or more"},
		// A request cut late is one of requests.count: more of them made
		// the completed requests, and their rate, negative.
		{"requests cut late", func(d map[string]any) {
			d["requests"].(map[string]any)["count"] = 2
			d["replay"].(map[string]any)["requests_cut_late"] = 3
		}, "replay.requests_cut_late is 3: want at most requests.count, 2"},
		{"setup rows", func(d map[string]any) { d["replay"].(map[string]any)["setup_rows"] = -4 }, "replay.setup_rows is -4: want 0 or more"},
		{"setup evictions", func(d map[string]any) { d["replay"].(map[string]any)["setup_capacity_evictions"] = -2 },
			"replay.setup_capacity_evictions is -2: want 0 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			tc.edit(d)
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode("r1.json", b)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "r1.json: "+tc.want)):
				t.Errorf("err %v, want %q", err, "r1.json: "+tc.want)
			}
		})
	}
}

// TestMLPerfRanksPointToAggregate: the ranks of an MLPerf Option's trial,
// each with its own trace (seed 42+rank), are refused by a report on
// results, as ranks of one run that replayed different traces, and the
// error says what combines them: kvreport --aggregate mlperf.
func TestMLPerfRanksPointToAggregate(t *testing.T) {
	docs, err := Load(shard3[:2], nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		d.Path = "run/option_1/trial_0/rank_" + string(rune('0'+i)) + "/kvbench_result.json"
		d.Label, d.Trial = "option_1", 0
		d.Result.Traces = append([]schema.TraceInfo(nil), d.Result.Traces...)
		d.Result.Traces[0].SHA256 = strings.Repeat(string(rune('a'+i)), 64)
	}
	_, err = Build(docs, BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "replayed different traces") || !strings.Contains(err.Error(), "kvreport --aggregate mlperf") {
		t.Errorf("err %v, want one naming kvreport --aggregate mlperf", err)
	}
}
