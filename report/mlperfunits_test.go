package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refReadGiBps is cache_stats.tier_storage_read_bandwidth_gbps of
// testdata/kvcache_py/u50_d20_hand_measured.json: kv-cache.py's "GB/s",
// GiB/s.
const refReadGiBps = 178.89764260717024

// TestMLPerfRenderOneUnit: text and md show every bandwidth of an
// Option's table and of its per-rank table in GB/s, whatever the unit of
// the summary it comes from: kv-cache.py's GiB/s beside kvreplay's GB/s
// (and the other way round) are converted exactly, each row says its
// unit, and a converted column says it was; no row mixes the two.
func TestMLPerfRenderOneUnit(t *testing.T) {
	dir, _ := writeMLPerfRun(t)
	ref := filepath.Join(t.TempDir(), "ref")
	p := filepath.Join(ref, "option_1", "trial_0", "rank_0", "kvcache_results_1.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/kvcache_py/u50_d20_hand_measured.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadMLPerf(context.Background(), []string{dir, ref}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	runs := run.ByKind()
	kvr, err := AggregateMLPerf(context.Background(), runs[0], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	py, err := AggregateMLPerf(context.Background(), runs[1], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	gb := num(refReadGiBps * (1 << 30) / 1e9) // 192.1
	if gb == num(refReadGiBps) {
		t.Fatalf("fixture: %s GiB/s reads the same in GB/s", num(refReadGiBps))
	}
	render := func(s *MLPerfRunSummary, beside map[string]*MLPerfRunSummary) string {
		t.Helper()
		var b bytes.Buffer
		if err := RenderMLPerf(&b, s, beside, "md"); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name      string
		out       string
		want, not []string
	}{
		{"kv-cache.py beside kvreplay", render(kvr, map[string]*MLPerfRunSummary{"kv-cache.py documents": py}),
			[]string{"| figure | unit | MLPerf rule (6.3.4) | kvbench pooled | kv-cache.py documents (GiB/s converted to GB/s) |",
				"| aggregated_read_bandwidth_gbps | GB/s | 3.5 | 3.5 | " + gb + " |",
				"| aggregated_device_read_p95_ms | ms | 30.02 | 30.02 | 12.5 |"},
			[]string{"| " + num(refReadGiBps) + " |", "(GiB/s) |"}},
		{"kvreplay beside kv-cache.py", render(py, map[string]*MLPerfRunSummary{"kvreplay.json": kvr}),
			[]string{"| figure | unit | MLPerf rule (6.3.4) (GiB/s converted to GB/s) | kvreplay |",
				"| aggregated_read_bandwidth_gbps | GB/s | " + gb + " | 3.5 |",
				// kv-cache.py's ranks, in GB/s too.
				"| trial | rank | read GB/s | write GB/s |",
				"| 0 | 0 | " + gb + " | "},
			[]string{"| " + num(refReadGiBps) + " |", "read GiB/s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if !strings.Contains(tt.out, w) {
					t.Errorf("no %q in\n%s", w, tt.out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(tt.out, n) {
					t.Errorf("%q in\n%s", n, tt.out)
				}
			}
		})
	}
	// The json keeps mlpstorage's figures as they are, in their unit.
	if o := py.Options["1"]; !nearly(o.AggregatedReadBandwidthGBps, refReadGiBps) {
		t.Errorf("kv-cache.py run's aggregated_read_bandwidth_gbps %v, want its own %v", o.AggregatedReadBandwidthGBps, refReadGiBps)
	}
}
