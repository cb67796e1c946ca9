package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUnusedTierIsAbsent: the offered load of a tier a run never used is
// not measured, so it is absent, never 0, in the metrics every format
// reads and in each format as that format shows a missing value: "-" with
// n = 0 in text and Markdown, an empty field in csv and xlsx, no key in
// json, no line in bench; and it is compared with nothing. The u10
// documents replayed a trace without Tier-0 rows (gpu0); the u50 ones
// used Tier-0. A kv-cache.py document's unused tier (its tier_gpu_*
// bandwidths 0 with no bytes) is absent too, its used tiers kept; so are
// the Tier-2 figures of a run whose working set never left RAM.
func TestUnusedTierIsAbsent(t *testing.T) {
	const gpu0, gpu2 = "llama8b_u10_d30_gpu0_cpu4_s42", "llama8b_u50_d20_gpu2_cpu4_gennone_s42"
	r := build(t, goldenInputs, LoadOptions{}, BuildOptions{Baseline: gpu2})
	var g0, g2 *Group
	for _, g := range r.Groups {
		switch g.Label {
		case gpu0:
			g0 = g
		case gpu2:
			g2 = g
		}
	}
	if g0 == nil || g2 == nil {
		t.Fatalf("groups %v: want %s and %s", r.Groups, gpu0, gpu2)
	}
	unused := []string{"tier0_read_offered", "tier0_write_offered"}
	for _, name := range unused {
		if _, ok := g0.Stats[name]; ok {
			t.Errorf("%s of %s has statistics %+v: the run never used Tier-0", name, gpu0, g0.Stats[name])
		}
		for i, tv := range g0.TrialValues {
			if v, ok := tv[name]; ok {
				t.Errorf("%s trial %d: %s = %v, want absent", gpu0, g0.TrialID(i), name, v)
			}
		}
		if _, ok := g2.Stats[name]; !ok {
			t.Errorf("%s of %s, which used Tier-0, is absent", name, gpu2)
		}
		for _, row := range r.Comparison.Rows {
			if row.Metric.Name != name {
				continue
			}
			_, med := row.Medians[gpu0]
			_, rat := row.Ratios[gpu0]
			_, win := row.WinRate[gpu0]
			if med || rat || win {
				t.Errorf("comparison of %s: %s has median %v ratio %v win rate %v, want none", name, gpu0, med, rat, win)
			}
		}
	}
	out := renderAll(t, r)
	for _, name := range unused {
		if !slices.ContainsFunc(strings.Split(out["text"], "\n"), func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 10 && slices.Equal(f[:10], []string{name, "GB/s", "0", "-", "-", "-", "-", "-", "-", "-"})
		}) {
			t.Errorf("text: no row %q of n = 0 shown as -", name)
		}
		if !strings.Contains(out["md"], "| "+name+" | GB/s | 0 | - | - |") {
			t.Errorf("md: no row of %s of n = 0 shown as -", name)
		}
		if !strings.Contains(out["csv"], gpu0+","+name+",GB/s,,higher,0,,,") {
			t.Errorf("csv: the %s row of %s is not empty", name, gpu0)
		}
	}
	var doc jsonReport
	if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil {
		t.Fatal(err)
	}
	for _, g := range doc.Groups {
		if g.Label != gpu0 {
			continue
		}
		for _, name := range unused {
			if _, ok := g.Stats[name]; ok {
				t.Errorf("json: %s stats has %s", gpu0, name)
			}
			for _, tr := range g.Trials {
				if v, ok := tr.Metrics[name]; ok {
					t.Errorf("json: %s trial %d has %s = %v", gpu0, tr.Trial, name, v)
				}
			}
		}
	}
	_, bench0, _ := strings.Cut(out["bench"], "group: "+gpu0+"\n")
	bench0, _, _ = strings.Cut(bench0, "group: ")
	if bench0 == "" || strings.Contains(bench0, "tier0_") {
		t.Errorf("bench: %s's lines hold a Tier-0 figure or none:\n%s", gpu0, bench0)
	}
	// xlsx: the Summary sheet's cells of the unused metrics are empty.
	var header, row []string
	for l := range strings.Lines(out["xlsx"]) {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(l, "Summary: "), "\n"), "\t")
		switch {
		case !strings.HasPrefix(l, "Summary: "):
		case cells[0] == "group":
			header = cells
		case cells[0] == gpu0:
			row = cells
		}
	}
	for _, name := range unused {
		i := slices.Index(header, name+" (GB/s)")
		if i < 0 || i >= len(row) || row[i] != "" {
			t.Errorf("xlsx: Summary column %q of %s: header %q row %q, want an empty cell", name, gpu0, header, row)
		}
	}

	// A run that never used Tier-2 measured none of Tier-2's figures.
	ram, err := Load([]string{"testdata/ramonly/ram1.json"}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv, err := MetricsOf(ram[0].Result)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tier0_read_offered", "tier2_read_offered", "tier2_write_offered", MetricDecodeBytesRead, MetricKVTokensMoved} {
		if v, ok := rv[name]; ok {
			t.Errorf("a run without Tier-2 rows: %s = %v, want absent", name, v)
		}
	}
	if rv["tier1_read_offered"] <= 0 {
		t.Errorf("a run without Tier-2 rows lost its Tier-1 offered load: %v", rv)
	}

	// A kv-cache.py document whose GPU tier moved nothing.
	raw, err := os.ReadFile(referenceJSON)
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]any
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	cs := ref["summary"].(map[string]any)["cache_stats"].(map[string]any)
	for _, k := range []string{"tier_gpu_read_bandwidth_gbps", "tier_gpu_write_bandwidth_gbps", "tier_gpu_kv_bytes_read_gb", "tier_gpu_kv_bytes_written_gb"} {
		if _, ok := cs[k]; !ok {
			t.Fatalf("%s has no cache_stats.%s", referenceJSON, k)
		}
		cs[k] = 0.0
	}
	raw, err = json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gpu0.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := Load([]string{path}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range unused {
		if v, ok := docs[0].Values[name]; ok {
			t.Errorf("kv-cache.py document without GPU traffic: %s = %v, want absent", name, v)
		}
	}
	if _, ok := docs[0].Values["tier2_read_offered"]; !ok {
		t.Error("kv-cache.py document lost its storage tier's offered load")
	}
}
