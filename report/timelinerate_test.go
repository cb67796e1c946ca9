package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestBandwidthLastPartialSecond: the offered-load timeline draws GB/s,
// and the run's last second is partial (its wall time ends in it), so
// its bytes are drawn over its real length: a run that read 1 GB/s
// steadily for 2.25 s draws a flat line, not a last point a quarter of
// the others. A timeline whose length the wall time does not give (wall
// time not past the last second's start) leaves its last second out, and
// its title says so.
func TestBandwidthLastPartialSecond(t *testing.T) {
	nvme := schema.TierNVMe
	sec := func(t int, gb float64) schema.Second {
		s := schema.Second{T: t}
		s.ReadBytes[nvme] = int64(gb * 1e9)
		return s
	}
	timeline := []schema.Second{sec(0, 1), sec(1, 1), sec(2, 0.25)}
	points := regexp.MustCompile(`<polyline points="([^"]*)"`)
	read := func(svg string) []string { // the read series' y pixels
		m := points.FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("no polyline in %s", svg)
		}
		var ys []string
		for _, p := range strings.Fields(m[1]) {
			ys = append(ys, p[strings.Index(p, ",")+1:])
		}
		return ys
	}
	charts := svgBandwidth(&schema.Result{WallS: 2.25, Timeline: timeline}, 1)
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	if ys := read(string(charts[0])); len(ys) != 3 || ys[2] != ys[0] || ys[1] != ys[0] {
		t.Errorf("read at y %q: want 3 points on one line (1 GB/s throughout)", ys)
	}
	charts = svgBandwidth(&schema.Result{WallS: 2, Timeline: timeline}, 1)
	if len(charts) != 1 {
		t.Fatalf("%d charts, want 1", len(charts))
	}
	if ys := read(string(charts[0])); len(ys) != 2 || !strings.Contains(string(charts[0]), "last second left out") {
		t.Errorf("read at y %q, chart %s: want 2 points and the last second said to be left out", ys, charts[0])
	}
}
