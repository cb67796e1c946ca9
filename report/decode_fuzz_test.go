package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// plainNumbers reports whether every number in the JSON text raw lies in
// [0, 1e9] and the text is one JSON value: what kv-cache.py and kvreplay
// write. The properties below that hold only for such documents say what
// a damaged one may break today (see FuzzDecodeReference).
func plainNumbers(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			v, err := n.Float64()
			if err != nil || v < 0 || v > 1e9 {
				return false
			}
		}
	}
}

// renderFormats are the report formats a fuzzed document is rendered in
// (xlsx is left out: a workbook a run would slow the fuzzer tenfold).
var renderFormats = []string{"text", "md", "csv", "json", "bench", "html"}

// FuzzDecodeReference: a kv-cache.py --output document (or kvtrace's
// statistics, the same dialect) decodes to a reference or simulated Doc
// named for its file, or fails with one line naming the file; its
// latencies and storage tokens are taken only when the run measured
// storage time; a simulated one has no tiers and no figure but elapsed
// time and requests per second; the whitespace of the text changes
// nothing; and a document whose numbers are those a run writes (0 to
// 1e9) has finite, non-negative figures and renders in every format.
//
// Its input is a document changed by a patch, or the whole input
// (fuzzDoc), as FuzzDecodeStream's.
func FuzzDecodeReference(f *testing.F) {
	bases := fuzzBases(f, "testdata/kvcache_py/u50_d20_hand_measured.json", "testdata/kvcache_py/u50_d20_trace_mode.json", "testdata/kvtrace_stats.json")
	for i, b := range bases {
		f.Add(uint8(i), uint32(0), []byte(`{}`))
		f.Add(uint8(i), cutAt(len(b.raw)/2), []byte(nil))
	}
	f.Add(uint8(0), uint32(0), []byte(`{"summary": {"total_storage_io_time": 0, "cache_stats": {"tier_storage_read_bandwidth_gbps": 1e300}}}`))
	whole := uint8(len(bases))
	for _, s := range []string{
		`{"requests_completed": 10, "summary": {}}`,
		`{"requests_completed": 1, "summary": {"total_storage_io_time": 1, "storage_io_latency_ms": {"p50": 1, "p95": 2, "p99": 3}, "cache_stats": {"tier_storage_read_bandwidth_gbps": 1.5, "tier_storage_kv_bytes_read_gb": 2}}}`,
		`{"requests_completed": 1, "summary": {"cache_stats": {"tier_storage_read_bandwidth_gbps": "x"}}}`,
		`{"requests_completed": 1, "summary": {"elapsed_time": 0, "requests_per_second": 0}, "kvbench": {}}`,
		`{"requests_completed": 1, "summary": {"qos_metrics": {"interactive": {"latency_ms": {"p95": 1}}}}}`,
		`{"requests_completed": "1", "summary": []}`, `{"summary": null}`, `{"summary": {"cache_stats": null}}`,
		`{"requests_completed":1,"summary":{"total_storage_io_time":1,"cache_stats":{"tier_storage_read_bandwidth_gbps":1e300,"tier_storage_kv_bytes_read_gb":1e300}}}`,
		`{"requests_completed": -7, "summary": {"elapsed_time": -1}}`,
	} {
		f.Add(whole, uint32(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, base uint8, at uint32, patch []byte) {
		raw := fuzzDoc(bases, base, at, patch)
		d, err := Decode("f.json", raw)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "report: f.json") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		if d.Kind != KindReference && d.Kind != KindSimulated {
			return // a kvreplay result: FuzzDecodeStream's
		}
		if d.Path != "f.json" || d.Result == nil {
			t.Fatalf("Doc %q, result %v", d.Path, d.Result)
		}
		var probe struct {
			Summary struct {
				IOTime float64 `json:"total_storage_io_time"`
			} `json:"summary"`
			IOLatency float64 `json:"total_storage_io_latency"`
		}
		_ = json.Unmarshal(raw, &probe)
		if !(probe.Summary.IOTime > 0 || probe.IOLatency > 0) {
			for _, k := range []string{MetricRefTokens, MetricRequestP95} {
				if _, ok := d.Values[k]; ok {
					t.Fatalf("%s = %v from a run that timed no storage I/O", k, d.Values[k])
				}
			}
		}
		if d.Kind == KindSimulated {
			if len(d.Result.Tiers) > 0 {
				t.Fatalf("a simulated document has tiers %+v", d.Result.Tiers)
			}
			for k := range d.Values {
				if k != MetricElapsed && k != MetricRequestsPerS {
					t.Fatalf("a simulated document has %s = %v", k, d.Values[k])
				}
			}
		}
		var spaced bytes.Buffer
		if json.Indent(&spaced, raw, " ", "\t") == nil {
			d2, err := Decode("f.json", spaced.Bytes())
			if err != nil {
				t.Fatalf("decodes, but not indented: %v", err)
			}
			if a, b := fmt.Sprintf("%v %+v", d.Values, *d.Result), fmt.Sprintf("%v %+v", d2.Values, *d2.Result); a != b || d2.Kind != d.Kind {
				t.Fatalf("indented, it decodes otherwise:\n%s\n%s", a, b)
			}
		}
		// Every figure decoded is in range: a document out of it is refused.
		for k, v := range d.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("%s = %v", k, v)
			}
		}
		for _, tt := range d.Result.Tiers {
			if tt.ReadBytes < 0 || tt.WriteBytes < 0 || tt.ReadOfferedBps < 0 || tt.WriteOfferedBps < 0 {
				t.Fatalf("tier %+v", tt)
			}
		}
		r, err := Build([]*Doc{d}, BuildOptions{})
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		for _, format := range renderFormats {
			if err := Render(io.Discard, r, format); err != nil {
				t.Fatalf("Render %s: %v", format, err)
			}
		}
	})
}

// FuzzDecodeSearches: a stream of kvreplay --search documents decodes to
// one document a JSON value, each of a format version this kvreport
// reads, named for the file (f.json#N after the first), or fails with one
// line naming the file; the same stream twice decodes to the documents
// twice; and documents whose numbers are those a run writes render in
// every search format.
func FuzzDecodeSearches(f *testing.F) {
	raw, err := os.ReadFile("testdata/search_capacity_v1.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	users, err := json.Marshal(&schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: "s"},
		Kind: schema.SearchUsers, Users: 20, TotalUsers: 40, Confidence: 1, Resolution: 1, Done: true, WindowS: 20,
		Reason: "20 users passed", Warnings: []string{"SCALED RUN: test"},
		Probes: []schema.SearchProbe{
			{Users: 10, Pass: true, RequestsPerSecond: 50, P95MSByQoS: map[string]float64{"interactive": 20}},
			{Users: 30, Pass: false, Reason: "interactive: 80% within 50 ms", RequestsPerSecond: 60, P95MSByQoS: map[string]float64{"interactive": 90}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(users)
	f.Add(append(append(slices.Clone(users), '\n'), raw...))
	for _, s := range []string{"", "{}", `{"format":"kvbench-search","format_version":3}`, `{"format":"kvbench-search","format_version":0}`,
		`{"format":"kvbench-result","format_version":2}`, `{"format":"kvbench-search","format_version":2,"probes":{}}`, "[]", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		docs, names, err := decodeSearches("f.json", raw)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "report: f.json") {
				t.Fatalf("error %q is not one line naming the file", msg)
			}
			return
		}
		if len(docs) == 0 || len(names) != len(docs) {
			t.Fatalf("%d documents, %d names", len(docs), len(names))
		}
		for i, d := range docs {
			want := "f.json"
			if i > 0 {
				want = fmt.Sprintf("f.json#%d", i+1)
			}
			if names[i] != want || d.Format != schema.SearchFormat || d.FormatVersion < 1 || d.FormatVersion > schema.SearchFormatVersion {
				t.Fatalf("document %d: %q, format %q version %d", i, names[i], d.Format, d.FormatVersion)
			}
		}
		twice, _, err := decodeSearches("f.json", append(append(slices.Clone(raw), '\n'), raw...))
		if err != nil || len(twice) != 2*len(docs) {
			t.Fatalf("the stream twice: %d documents, %v; want %d", len(twice), err, 2*len(docs))
		}
		for i, d := range docs {
			if a, b := fmt.Sprintf("%+v", *d), fmt.Sprintf("%+v", *twice[len(docs)+i]); a != b {
				t.Fatalf("document %d read again differs:\n%s\n%s", i, a, b)
			}
		}
		if !plainNumbers(raw) {
			return
		}
		for _, format := range SearchFormats {
			if err := RenderSearches(io.Discard, docs, names, format); err != nil {
				t.Fatalf("RenderSearches %s: %v", format, err)
			}
		}
	})
}
