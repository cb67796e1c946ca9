package report

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadExactKeys: a document whose key names a field of its schema in
// another case, or repeats a key in one object, is refused with the file,
// line, column and the key: encoding/json decoded "Wall_S" as wall_s and
// kept the last of two, where kv-cache.py's and MLPerf's Python readers
// read neither so. Keys the schema does not know are still ignored, and
// kv-cache.py's own keys (its QoS classes' latency_ms.mean ...) are read.
func TestLoadExactKeys(t *testing.T) {
	result, err := os.ReadFile(goldenInputs[0])
	if err != nil {
		t.Fatal(err)
	}
	ref, err := os.ReadFile("testdata/kvcache_py/u50_d20_hand_measured.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		doc       []byte
		old, new  string
		want      string // "" when it loads
		wantValue func(*Doc) bool
	}{
		{"a result's key in another case", result, `"wall_s": 0.033345921`, `"Wall_S": 0.033345921`,
			`a.json:29:3: field "Wall_S": want "wall_s": keys are matched exactly`, nil},
		{"a result's key given twice", result, `"wall_s": 0.033345921,`, `"wall_s": 0.033345921, "wall_s": 99,`,
			`a.json:29:26: field "wall_s": given twice in one object`, nil},
		{"a nested key in another case", result, `"cpus": 2,`, `"CPUs": 2,`, `a.json:37:5: field "host.CPUs": want "cpus"`, nil},
		{"a key given twice in config", result, `"label": "llama8b_u10_d30_gpu0_cpu4_s42",`, `"label": "llama8b_u10_d30_gpu0_cpu4_s42", "config": {"a": 1, "a": 2},`,
			`field "config.a": given twice in one object`, nil},
		{"a key the schema does not know", result, `"wall_s": 0.033345921,`, `"wall_s": 0.033345921, "Future_Field": {"x": 1},`,
			"", func(d *Doc) bool { return d.Result.WallS == 0.033345921 }},
		{"a kv-cache.py key in another case", ref, `"requests_completed"`, `"Requests_Completed"`,
			`field "Requests_Completed": want "requests_completed"`, nil},
		{"a kv-cache.py QoS latency in another case", ref, `"mean": 1.9265412428577682`, `"Mean": 1.9265412428577682`,
			`field "summary.qos_metrics.interactive.latency_ms.Mean": want "mean"`, nil},
		{"a kv-cache.py storage_health key in another case", ref, `"overall_status"`, `"Overall_Status"`,
			`field "summary.cache_stats.storage_health.Overall_Status": want "overall_status"`, nil},
		{"a kv-cache.py key given twice", ref, `"total_requests": 2416,`, `"total_requests": 2416, "total_requests": 1,`,
			`field "summary.total_requests": given twice in one object`, nil},
		{"kv-cache.py's QoS latencies", ref, "", "", "", func(d *Doc) bool {
			return len(d.Result.Requests.ByQoS) > 0 && d.Result.Requests.ByQoS[0].Latency.MeanUS == 1.9265412428577682*1000
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(tc.doc), tc.old, tc.new, 1)
			if tc.old != "" && doc == string(tc.doc) {
				t.Fatalf("%q is not in the document", tc.old)
			}
			path := filepath.Join(t.TempDir(), "a.json")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			docs, err := Load([]string{path}, nil, LoadOptions{})
			if tc.want == "" {
				if err != nil || len(docs) != 1 || !tc.wantValue(docs[0]) {
					t.Fatalf("Load = %v, %v: want the document, read", docs, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded, want an error %q", tc.want)
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			if !strings.HasPrefix(msg, "report: a.json:") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line with %q", msg, tc.want)
			}
			if pe := (*ParseError)(nil); !errors.As(err, &pe) {
				t.Errorf("error %v is not a *ParseError", err)
			}
		})
	}
}

// TestLoadSearchesAndSummariesExactKeys: search documents and
// kvcache_run_summary documents are read as strictly.
func TestLoadSearchesAndSummariesExactKeys(t *testing.T) {
	search, err := os.ReadFile("testdata/search_capacity_v1.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"format_version"`, `"Format_Version"`, `field "Format_Version": want "format_version"`},
		{`"format_version": 1,`, `"format_version": 1, "format_version": 1,`, `field "format_version": given twice`},
	} {
		doc := strings.Replace(string(search), tc.old, tc.new, 1)
		if doc == string(search) {
			t.Fatalf("%q is not in the search document", tc.old)
		}
		path := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadSearches(context.Background(), []string{path}, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s.json:") {
			t.Errorf("search with %s: %v, want an error naming the file and %q", tc.new, err, tc.want)
		}
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"schema_version":"1.0","Total_Ranks":2,"options":{}}`, `key "Total_Ranks": want "total_ranks"`},
		{`{"schema_version":"1.0","options":{"1":{"aggregated_read_bandwidth_gbps":2.5,"aggregated_read_bandwidth_gbps":25}}}`,
			`key "options.1.aggregated_read_bandwidth_gbps": given twice`},
	} {
		_, ok, err := decodeRunSummary([]byte(tc.doc))
		if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ok %v, err %v, want %q", tc.doc, ok, err, tc.want)
		}
	}
}
