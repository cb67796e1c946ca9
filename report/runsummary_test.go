package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestDecodeRunSummaryRefuses: a kvcache_run_summary whose figures no run
// gives (an Option that is null, a negative or astronomic bandwidth, a
// negative count) is an error naming the field and the value; a null
// Option panicked kvreport's render, the others were shown as figures
// (-5.369 GB/s; a bandwidth of 308 digits).
func TestDecodeRunSummaryRefuses(t *testing.T) {
	for _, tc := range []struct {
		doc, want string
	}{
		{`{"schema_version":"1.0","options":{"1":null}}`, "options.1 is null: want an Option's figures"},
		{`{"schema_version":"1.0","options":{"1":{"aggregated_read_bandwidth_gbps":-5}}}`,
			"options.1.aggregated_read_bandwidth_gbps is -5: want a number from 0 to 1e+09"},
		{`{"schema_version":"1.0","options":{"2":{"aggregated_write_bandwidth_gbps":1e308}}}`,
			"options.2.aggregated_write_bandwidth_gbps is 1e+308: want a number from 0 to 1e+09"},
		{`{"schema_version":"1.0","options":{"1":{"aggregated_device_read_p95_ms":-1}}}`,
			"options.1.aggregated_device_read_p95_ms is -1: want a number from 0 to 1e+09"},
		{`{"schema_version":"1.0","options":{"1":{"trial_count":-2}}}`, "options.1.trial_count is -2: want 0 or more"},
		{`{"schema_version":"1.0","total_ranks":-3,"options":{}}`, "total_ranks is -3: want 0 or more"},
	} {
		_, ok, err := decodeRunSummary([]byte(tc.doc))
		if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ok %v, err %v, want %q", tc.doc, ok, err, tc.want)
		}
	}
	good := `{"schema_version":"1.0","total_ranks":2,"options":{"1":{"option":1,"aggregated_read_bandwidth_gbps":2.5,` +
		`"aggregated_device_read_p95_ms":null,"missing_files":[]}}}`
	if _, ok, err := decodeRunSummary([]byte(good)); !ok || err != nil {
		t.Errorf("a whole summary: ok %v, err %v", ok, err)
	}
}

// FuzzRenderRunSummary: any kvcache_run_summary kvreport reads renders as
// text and md without a panic or an error.
func FuzzRenderRunSummary(f *testing.F) {
	f.Add([]byte(`{"schema_version":"1.0","options":{"1":{"option":1,"aggregated_read_bandwidth_gbps":2.5}}}`))
	f.Add([]byte(`{"schema_version":"1.0","options":{"1":null}}`))
	f.Add([]byte(`{"schema_version":"1.0","options":{"x":{}},"kvbench":{"source":"kvreplay","options":{"x":{"ranks":[{"path":"a/rank_1/r.json"}],"pooled":{}}}}}`))
	f.Add([]byte(`{"schema_version":"1.0","options":{"1":{}},"kvbench":{"options":{"1":null}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, ok, err := decodeRunSummary(raw)
		if !ok || err != nil {
			return
		}
		for _, format := range []string{"text", "md"} {
			var b bytes.Buffer
			if err := RenderMLPerf(&b, s, map[string]*MLPerfRunSummary{"beside.json": s}, format); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
	})
}
