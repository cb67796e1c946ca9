package report

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/kvbench/kvbench/results"
)

// TestReferenceCPUP95Pooled: the reference's CPU RAM P95 pools its CPU
// reads' and writes' samples, so a kv-cache.py document's cpu_p95_ms is
// that pooled figure (its storage_health's CPU RAM criterion), or a
// single operation's p95 only when the document has samples of that
// operation alone (its keys exist only with samples); with both and no
// pooled figure it is not measured (0), never the reads' p95 alone.
func TestReferenceCPUP95Pooled(t *testing.T) {
	const doc = "testdata/kvcache_py/u50_d20_hand_measured.json"
	tests := []struct {
		name        string
		read, write any     // nil: no key
		pooled      any     // the CPU RAM criterion's actual; nil: no storage_health
		want        float64 // Summary.CPUP95MS
	}{
		{name: "both, pooled", read: 10.0, write: 90.0, pooled: 60.0, want: 60},
		{name: "both, no pooled figure", read: 10.0, write: 90.0, want: 0},
		{name: "reads only", read: 10.0, want: 10},
		{name: "writes only", write: 90.0, want: 90},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			var ref map[string]any
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatal(err)
			}
			cs := ref["summary"].(map[string]any)["cache_stats"].(map[string]any)
			for _, p := range []string{"p50", "p95", "p99", "p999", "p9999"} {
				delete(cs, "cpu_read_"+p+"_ms")
				delete(cs, "cpu_write_"+p+"_ms")
			}
			if tt.read != nil {
				cs["cpu_read_p95_ms"] = tt.read
			}
			if tt.write != nil {
				cs["cpu_write_p95_ms"] = tt.write
			}
			h := cs["storage_health"].(map[string]any)
			if tt.pooled == nil {
				delete(cs, "storage_health")
			} else {
				found := false
				for _, c := range h["criteria"].([]any) {
					if c := c.(map[string]any); c["name"] == "CPU RAM P95 < 150ms" {
						c["actual"], found = tt.pooled, true
					}
				}
				if !found {
					t.Fatalf("%s has no CPU RAM criterion", doc)
				}
			}
			if raw, err = json.Marshal(ref); err != nil {
				t.Fatal(err)
			}
			d, err := Decode("cpu.json", raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := d.Result.Summary.CPUP95MS; got != tt.want {
				t.Errorf("CPUP95MS = %g, want %g", got, tt.want)
			}
		})
	}
}

// TestReferenceSummaryDecimal: a kv-cache.py document's tier bandwidths
// and Tier-2 bytes are in GiB/s and GiB under names that say GB; read
// into schema.Summary, whose figures are decimal for every source, they
// are converted (the MLPerf view reads the document's own figures, in
// its unit, not these).
func TestReferenceSummaryDecimal(t *testing.T) {
	const doc = "testdata/kvcache_py/u50_d20_hand_measured.json"
	raw, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Summary struct {
			CacheStats map[string]float64 `json:"cache_stats"`
		} `json:"summary"`
	}
	_ = json.Unmarshal(raw, &ref) // storage_health is no number; the figures are
	d, err := Decode(doc, raw)
	if err != nil {
		t.Fatal(err)
	}
	s := d.Result.Summary
	for _, f := range []struct {
		key string
		got float64
	}{
		{"tier_gpu_read_bandwidth_gbps", s.TierGPUReadBandwidthGBps},
		{"tier_gpu_write_bandwidth_gbps", s.TierGPUWriteBandwidthGBps},
		{"tier_cpu_read_bandwidth_gbps", s.TierCPUReadBandwidthGBps},
		{"tier_cpu_write_bandwidth_gbps", s.TierCPUWriteBandwidthGBps},
		{"tier_storage_read_bandwidth_gbps", s.TierStorageReadBandwidthGBps},
		{"tier_storage_write_bandwidth_gbps", s.TierStorageWriteBandwidthGBps},
		{"tier_storage_kv_bytes_read_gb", s.TierStorageKVBytesReadGB},
		{"tier_storage_kv_bytes_written_gb", s.TierStorageKVBytesWrittenGB},
	} {
		gib, ok := ref.Summary.CacheStats[f.key]
		if !ok || gib <= 0 {
			t.Fatalf("%s has no cache_stats.%s above 0", doc, f.key)
		}
		if want := gib * results.GiB / results.GB; math.Abs(f.got-want) > 1e-9*want {
			t.Errorf("%s %g GiB read as %g, want %g GB", f.key, gib, f.got, want)
		}
	}
}
