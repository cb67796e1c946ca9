package report

import (
	"strings"
	"testing"
)

// refCriterionDoc is a kv-cache.py storage_health criterion that failed.
const refCriterionDoc = `{"name":"Storage Tier Read Total P95 < 200ms","target":200,"actual":250,"unit":"ms","passed":false}`

// TestDecodeReferenceRange: a kv-cache.py document whose figures are out
// of range (negative, or too large to be a run's), whose percentiles are
// out of order, or whose storage_health verdict is not its criteria's, is
// refused, naming the figure, instead of decoding to +Inf offered loads
// and negative bytes that `-f json` then failed to write ("unsupported
// value: +Inf"), or rendering a PASS its criteria failed; the reference's
// own figures decode.
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
		// Percentiles out of order, and a storage_health whose verdict is
		// not its criteria's (a PASS beside a failed criterion was shown
		// as a PASS), or whose figure no run gives.
		{`{"requests_completed":1,"summary":{"total_storage_io_time":1,"storage_io_latency_ms":{"p50":1,"p95":900,"p99":1}}}`,
			"summary.storage_io_latency_ms.p99 is 1: want at least p95, 900"},
		{`{"requests_completed":1,"summary":{"qos_metrics":{"batch":{"total_requests":3,"latency_ms":{"p50":5,"p95":9,"p99":8,"max":9}}}}}`,
			"summary.qos_metrics.batch.latency_ms.p99 is 8: want at least p95, 9"},
		{`{"requests_completed":1,"summary":{"qos_metrics":{"batch":{"total_requests":3,"latency_ms":{"mean":10,"p50":5,"p95":9,"p99":9,"max":9}}}}}`,
			"summary.qos_metrics.batch.latency_ms.mean is 10: want at most latency_ms.max, 9"},
		{`{"requests_completed":1,"summary":{"qos_metrics":{"batch":{"total_requests":3,"sla":{"target_p95_ms":1000,"compliance":0.5,"met":true}}}}}`,
			"summary.qos_metrics.batch.sla.met is true with compliance 0.5: the SLA is met at 0.95"},
		{`{"requests_completed":1,"summary":{"qos_metrics":{"batch":{"total_requests":3,"sla":{"target_p95_ms":1000,"compliance":50,"met":true}}}}}`,
			"summary.qos_metrics.batch.sla.compliance is 50: want a number from 0 to 1"},
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"PASS","criteria":[` + refCriterionDoc + `],"passed_count":0,"total_count":1}}}}`,
			`summary.cache_stats.storage_health.overall_status is "PASS", but 0 of its 1 criteria passed: want "FAIL"`},
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"FAIL","criteria":[` + refCriterionDoc + `],"passed_count":1,"total_count":1}}}}`,
			"summary.cache_stats.storage_health: passed_count 1 of total_count 1, but 0 of its 1 criteria passed"},
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"FAIL","criteria":[` +
			strings.Replace(refCriterionDoc, `"actual":250`, `"actual":1e300`, 1) + `],"passed_count":0,"total_count":1}}}}`,
			"summary.cache_stats.storage_health.criteria[0].actual is 1e+300: want a number from 0 to 1e+09"},
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"FAIL","criteria":[` + refCriterionDoc + `],"passed_count":0,"total_count":1}}}}`, ""},
		{`{"requests_completed":1,"summary":{"elapsed_time":20.5,"cache_stats":{"tier_storage_read_bandwidth_gbps":1.5}}}`, ""},
		// --performance-profile throughput writes its bandwidth criteria's
		// figures as text: a target of ">0", an actual of "283.70".
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"PASS","criteria":[` +
			`{"name":"Storage Read Bandwidth","target":">0","actual":"283.70","unit":"GiB/s","passed":true}],"passed_count":1,"total_count":1}}}}`, ""},
		{`{"requests_completed":1,"summary":{"cache_stats":{"storage_health":{"overall_status":"PASS","criteria":[` +
			`{"name":"Storage Read Bandwidth","target":">0","actual":"fast","unit":"GiB/s","passed":true}],"passed_count":1,"total_count":1}}}}`,
			`criteria[0].actual: "fast": want a number, or one after a comparison (">0")`},
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
