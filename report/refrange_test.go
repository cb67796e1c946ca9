package report

import (
	"strings"
	"testing"
)

// TestDecodeReferenceRange: a kv-cache.py document whose figures are out
// of range (negative, or too large to be a run's) is refused, naming the
// figure, instead of decoding to +Inf offered loads and negative bytes
// that `-f json` then failed to write ("unsupported value: +Inf"); the
// reference's own figures decode.
func TestDecodeReferenceRange(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"requests_completed":1,"summary":{"total_storage_io_time":1,"cache_stats":{"tier_storage_read_bandwidth_gbps":1e300}}}`,
			"summary.cache_stats.tier_storage_read_bandwidth_gbps is 1e+300: want a number from 0 to 1e+09"},
		{`{"requests_completed":1,"summary":{"cache_stats":{"tier_storage_kv_bytes_read_gb":9e9}}}`,
			"summary.cache_stats.tier_storage_kv_bytes_read_gb is 9e+09"},
		{`{"requests_completed":1,"summary":{"elapsed_time":-1}}`, "summary.elapsed_time is -1"},
		{`{"requests_completed":-7,"summary":{}}`, "requests_completed is -7"},
		{`{"requests_completed":1,"summary":{"qos_metrics":{"batch":{"total_requests":3,"latency_ms":{"p95":-2}}}}}`,
			"summary.qos_metrics.batch.latency_ms.p95 is -2"},
		{`{"requests_completed":1,"summary":{"elapsed_time":20.5,"cache_stats":{"tier_storage_read_bandwidth_gbps":1.5}}}`, ""},
	} {
		_, err := Decode("ref.json", []byte(tc.doc))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.doc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "report: ref.json")):
			t.Errorf("%s: %v; want %q", tc.doc, err, tc.want)
		}
	}
}
