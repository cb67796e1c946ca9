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
// rank beyond its run's ranks, a size scale above 1, a latency, rate or
// time past any run's or out of order, counts that disagree, an SLA met
// that its share does not meet) is refused by every kvreport path that
// reads it, naming the file, the field and the value: kvreport showed
// "elapsed -5 s", a p95 of 10^300 ms as 301 digits, an SLA "met" at 0 %,
// and a tier of -10^12 bytes dropped its bandwidth from the report without
// a word. The document as written reads.
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
		// A run of 2^63 ranks had kvreport list every one missing, until
		// it ran out of memory.
		{"ranks", func(d map[string]any) { d["ranks"] = 1 << 21 }, "ranks is 2097152: want at most 1048576"},
		// The p95s storage_health judges: a reason showed 10^300 ms as
		// 301 digits.
		{"summary read p95", func(d map[string]any) { d["summary"].(map[string]any)["storage_read_p95_ms"] = 1e300 },
			"summary.storage_read_p95_ms is 1e+300: want a number from 0 to 1e+09"},
		{"summary cpu p95", func(d map[string]any) { d["summary"].(map[string]any)["cpu_p95_ms"] = -1 },
			"summary.cpu_p95_ms is -1: want a number from 0 to 1e+09"},
		{"lag p99", func(d map[string]any) { d["lag"].(map[string]any)["p99_us"] = 1e300 }, "lag.p99_us is 1e+300: want a number from 0 to 1e+12"},
		{"lag negative", func(d map[string]any) { d["lag"].(map[string]any)["p50_us"] = -1 }, "lag.p50_us is -1: want a number from 0 to 1e+12"},
		{"lag out of order", func(d map[string]any) { d["lag"].(map[string]any)["p99_us"] = 5000 }, "lag.p99_us is 5000: want at least p95_us, 5139"},
		{"lag mean", func(d map[string]any) { d["lag"].(map[string]any)["mean_us"] = 6000 }, "lag.mean_us is 6000: want from min_us, 10, to max_us, 5139"},
		{"cell latency", func(d map[string]any) { cell(d, 0)["latency"].(map[string]any)["max_us"] = 100 },
			"cells[0].latency.max_us is 100: want at least p99_99_us, 3149"},
		{"cell latency count", func(d map[string]any) { cell(d, 0)["latency_from_schedule"].(map[string]any)["count"] = 4 },
			"cells[0].ops is 5, its latency's count 5 and latency_from_schedule's 4: want the same"},
		{"cell first byte", func(d map[string]any) { cell(d, 0)["first_byte"] = map[string]any{"count": 6} },
			"cells[0].first_byte.count is 6: want at most ops, 5"},
		{"cell rate", func(d map[string]any) { cell(d, 1)["bandwidth_bytes_per_s"] = 1e300 },
			"cells[1].bandwidth_bytes_per_s is 1e+300: want a number from 0 to 1e+15"},
		{"cell busy", func(d map[string]any) { cell(d, 1)["busy_s"] = 1e300 }, "cells[1].busy_s is 1e+300: want a number from 0 to 1e+09"},
		{"device latency", func(d map[string]any) {
			d["device_latency"].([]any)[0].(map[string]any)["latency"].(map[string]any)["max_us"] = 1e300
		},
			"device_latency[0].latency.max_us is 1e+300: want a number from 0 to 1e+12"},
		{"tier rate", func(d map[string]any) { d["tiers"].([]any)[0].(map[string]any)["read_bandwidth_bytes_per_s"] = 1e300 },
			"tiers[0].read_bandwidth_bytes_per_s is 1e+300: want a number from 0 to 1e+15"},
		{"tier offered", func(d map[string]any) { d["tiers"].([]any)[0].(map[string]any)["write_offered_bytes_per_s"] = -1 },
			"tiers[0].write_offered_bytes_per_s is -1: want a number from 0 to 1e+15"},
		{"tier ops", func(d map[string]any) { d["tiers"].([]any)[0].(map[string]any)["read_ops"] = 60 },
			"tiers[0].read_ops is 60: want its cells' sum, 6"},
		{"timeline lag", func(d map[string]any) { d["timeline"].([]any)[0].(map[string]any)["lag_p99_us"] = 1e300 },
			"timeline[0].lag_p99_us is 1e+300: want a number from 0 to 1e+12"},
		{"timeline second", func(d map[string]any) { d["timeline"].([]any)[0].(map[string]any)["t"] = -1 }, "timeline[0].t is -1: want 0 or more"},
		{"imbalance", func(d map[string]any) { d["rank_imbalance"] = map[string]any{"slowest_wall_s": 1e300} },
			"rank_imbalance.slowest_wall_s is 1e+300: want a number from 0 to 1e+09"},
		{"trace digest", func(d map[string]any) { d["traces"].([]any)[0].(map[string]any)["sha256"] = "same" },
			`traces[0].sha256 is "same": want 64 hexadecimal digits`},
		{"trace rows", func(d map[string]any) { d["traces"].([]any)[0].(map[string]any)["rows"] = -5 }, "traces[0].rows is -5: want 0 or more"},
		{"closed loop window", func(d map[string]any) { d["closed_loop"] = map[string]any{"window_s": 1e300} },
			"closed_loop.window_s is 1e+300: want a number from 0 to 1e+09"},
		{"closed loop scheduled lag", func(d map[string]any) {
			d["closed_loop"] = map[string]any{"scheduled_lag": map[string]any{"count": 3, "p95_us": 1e300}}
		}, "closed_loop.scheduled_lag.p95_us is 1e+300: want a number from 0 to 1e+12"},
		{"speed", func(d map[string]any) { d["replay"].(map[string]any)["speed"] = -1 }, "replay.speed is -1: want a number from 0 to 1e+09"},
		{"cpu pressure", func(d map[string]any) { d["replay"].(map[string]any)["cpu_pressure"] = 1.5 }, "replay.cpu_pressure is 1.5: want a share from 0 to 1"},
		{"request latency", func(d map[string]any) { d["requests"].(map[string]any)["latency"].(map[string]any)["p95_us"] = 1e300 },
			"requests.latency.p95_us is 1e+300: want a number from 0 to 1e+12"},
		{"request count", func(d map[string]any) { d["requests"].(map[string]any)["count"] = 4 },
			"requests.latency.count is 3: want requests.count, 4"},
		{"class count", func(d map[string]any) { class(d, 0)["count"] = -1 }, "requests.by_qos[0].count is -1: want 0 to requests.count, 3"},
		{"class counts", func(d map[string]any) { class(d, 1)["count"] = 3 }, "requests.by_qos[1].count is 3: want 0 to requests.count, 3"},
		{"class latency", func(d map[string]any) { class(d, 0)["latency"].(map[string]any)["p95_us"] = 1e300 },
			"requests.by_qos[0].latency.p95_us is 1e+300"},
		{"class target", func(d map[string]any) { class(d, 0)["target_p95_ms"] = 1e300 },
			"requests.by_qos[0].target_p95_ms is 1e+300: want a number from 0 to 1e+09"},
		{"class within", func(d map[string]any) { class(d, 1)["within_target"] = 3 }, "requests.by_qos[1].within_target is 3: want 0 to its count, 2"},
		{"class compliance", func(d map[string]any) { class(d, 1)["compliance"] = 0.5 },
			"requests.by_qos[1].compliance is 0.5: want within_target over count, 2 of 2"},
		{"class compliance range", func(d map[string]any) { class(d, 1)["compliance"], class(d, 1)["within_target"] = 2.0, 0 },
			"requests.by_qos[1].compliance is 2: want a number from 0 to 1"},
		// An SLA "met" at 0 % within target rendered as met, and passed
		// storage_health.
		{"class met", func(d map[string]any) { class(d, 1)["compliance"], class(d, 1)["within_target"] = 0.0, 0 },
			"requests.by_qos[1].met is true with compliance 0: the SLA is met at 0.95"},
		{"slo", func(d map[string]any) {
			d["requests"].(map[string]any)["slo"] = map[string]any{"count": 3, "within": 4, "attainment": 1}
		},
			"requests.slo.within is 4 of count 3: want 0 to its count"},
		{"slo class", func(d map[string]any) {
			d["requests"].(map[string]any)["slo"] = map[string]any{"count": 3, "within": 3, "attainment": 1,
				"by_qos": []any{map[string]any{"qos": "batch", "count": 2, "within": 2, "attainment": 7}}}
		}, "requests.slo.by_qos[0].attainment is 7: want a number from 0 to 1"},
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

// cell is cells[i] of the document d.
func cell(d map[string]any, i int) map[string]any { return d["cells"].([]any)[i].(map[string]any) }

// class is requests.by_qos[i] of the document d.
func class(d map[string]any, i int) map[string]any {
	return d["requests"].(map[string]any)["by_qos"].([]any)[i].(map[string]any)
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
