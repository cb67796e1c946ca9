package report

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestSearchV1OfferedLoad reads a capacity search of format version 1
// (kvreplay's before the offered load had its name: bandwidth_bps,
// peak_bandwidth_bps) with today's names, and renders its offered load
// in GB/s, decimal, as every kvbench bandwidth, never MB/s (issue 23):
// the probe table's column, the answer, the chart's axis and the
// comparison with another search. The document's own reason, written by
// the kvreplay of its day, is quoted as it is.
func TestSearchV1OfferedLoad(t *testing.T) {
	v1 := filepath.Join("testdata", "search_capacity_v1.json")
	docs, names, err := LoadSearches(context.Background(), []string{v1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := docs[0]
	if d.FormatVersion != schema.SearchFormatVersion || d.PeakOfferedBps != 50766387.51160669 || len(d.Probes) != 3 ||
		d.Probes[0].OfferedBps != 45767617.8230922 || d.Probes[2].OfferedBps != d.PeakOfferedBps {
		t.Fatalf("version 1 read as: version %d, peak %v, probes %+v", d.FormatVersion, d.PeakOfferedBps, d.Probes)
	}
	b := &schema.SearchResult{Header: schema.Header{Format: schema.SearchFormat, FormatVersion: schema.SearchFormatVersion, System: "B"},
		Kind: schema.SearchCapacity, PeakOfferedBps: 1e8, PeakSpeed: 2, Plateau: true, Done: true, WindowS: 1, Reason: "plateau",
		Probes: []schema.SearchProbe{{Speed: 2, Pass: true, OfferedBps: 1e8}}}
	for _, f := range []string{"text", "md", "html", "json", "csv"} {
		var out strings.Builder
		if err := RenderSearches(&out, []*schema.SearchResult{d, b}, []string{names[0], "b.json"}, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if f != "html" {
			golden(t, "search_capacity_v1."+f, []byte(s))
		}
		want := []string{"peak offered load 0.0508 GB/s at --speed 1",
			"B delivers 1.97x the peak offered load of v1-fixture (0.100 GB/s vs 0.0508 GB/s)"}
		switch f {
		case "html":
			want = append(want, "offered GB/s", "0.0458", "offered load (GB/s)", "Offered load delivered by --speed")
		case "json":
			want = append(want, `"offered_bytes_per_s": 45767617.8230922`)
		case "csv":
			want = append(want, "offered_GB_per_s", ",0.0457676178230922,")
		default:
			want = append(want, "offered GB/s", "0.0458")
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: no %q in\n%s", f, w, s)
			}
		}
		rest := strings.ReplaceAll(s, d.Reason, "")
		for _, bad := range []string{"MB/s", "iB/s", "bandwidth"} {
			if strings.Contains(rest, bad) {
				t.Errorf("%s: %q beside the document's reason in\n%s", f, bad, s)
			}
		}
	}
}
