package report

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
)

// TestFirstByteMetrics: a document whose Tier-2 reads carry their time to
// first byte (the s3 tier's) gives kvreport tier2_read_ttfb_p50..p99,
// merged over the phases; one without gives none.
func TestFirstByteMetrics(t *testing.T) {
	r := loadTestResult(t, "a1.json")
	v, err := MetricsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v["tier2_read_ttfb_p95"]; ok {
		t.Fatalf("tier2_read_ttfb_p95 %v in a document without times to first byte", v["tier2_read_ttfb_p95"])
	}
	n := 0
	for i := range r.Cells {
		c := &r.Cells[i]
		if c.Tier != "Tier-2" || c.Op != "Read" {
			continue
		}
		cell := results.NewCell()
		for j := range 10 {
			cell.Add(time.Second, time.Second, 1, 1)
			cell.AddFirstByte(time.Duration(n*10+j+1) * time.Millisecond)
		}
		fb := cell.Finalize(c.Tier, c.Op, c.Phase, "s3", time.Second).FirstByte
		c.FirstByte = fb
		n++
	}
	if n == 0 {
		t.Fatal("the fixture has no Tier-2 read cell")
	}
	if v, err = MetricsOf(r); err != nil {
		t.Fatal(err)
	}
	// Values of 1 to N ms, N = 10n, one each: p50 about N/2, p99 about N.
	N := float64(n * 10)
	if p50, p99 := v["tier2_read_ttfb_p50"], v["tier2_read_ttfb_p99"]; p50 < N/2-1 || p50 > N/2+1 || p99 < 0.98*N-1 || p99 > N+0.1 ||
		v["tier2_read_ttfb_p95"] < p50 || v["tier2_read_ttfb_p95"] > p99 {
		t.Errorf("ttfb p50 %v, p95 %v, p99 %v ms over values of 1 to %v ms", p50, v["tier2_read_ttfb_p95"], p99, N)
	}
}
