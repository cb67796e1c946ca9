package report

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestLoadVersion2Bandwidths: closed_t1.json, written in format version 2,
// had the offered load under the bandwidth keys and the device rate under
// read_device_bytes_per_s and busy_bandwidth_bytes_per_s; kvreport reads
// it with version 3's meaning (the bandwidth is the device rate), so its
// tier1_read_bw is the device rate, and the document it would write again
// (version 3) reads back the same.
func TestLoadVersion2Bandwidths(t *testing.T) {
	raw, err := os.ReadFile(closedResult)
	if err != nil {
		t.Fatal(err)
	}
	var keys struct {
		FormatVersion int              `json:"format_version"`
		Tiers         []map[string]any `json:"tiers"`
		Cells         []map[string]any `json:"cells"`
	}
	if err := json.Unmarshal(raw, &keys); err != nil {
		t.Fatal(err)
	}
	if keys.FormatVersion != 2 {
		t.Fatalf("%s is version %d: keep it a version-2 document, the fixture of the old keys", closedResult, keys.FormatVersion)
	}
	num := func(m map[string]any, k string) float64 { v, _ := m[k].(float64); return v }
	type rates struct{ ReadBW, WriteBW, ReadDev, WriteDev float64 }
	var old struct {
		Tiers []rates
		Cells []struct{ BW, Busy float64 }
	}
	for _, m := range keys.Tiers {
		old.Tiers = append(old.Tiers, rates{num(m, "read_bandwidth_bytes_per_s"), num(m, "write_bandwidth_bytes_per_s"),
			num(m, "read_device_bytes_per_s"), num(m, "write_device_bytes_per_s")})
	}
	for _, m := range keys.Cells {
		old.Cells = append(old.Cells, struct{ BW, Busy float64 }{num(m, "bandwidth_bytes_per_s"), num(m, "busy_bandwidth_bytes_per_s")})
	}

	check := func(what string, r *schema.Result) {
		t.Helper()
		if len(r.Tiers) != len(old.Tiers) || len(r.Cells) != len(old.Cells) {
			t.Fatalf("%s: %d tiers, %d cells, want %d, %d", what, len(r.Tiers), len(r.Cells), len(old.Tiers), len(old.Cells))
		}
		for i, o := range old.Tiers {
			tt := r.Tiers[i]
			if o.ReadDev <= 0 || o.ReadDev <= 2*o.ReadBW {
				t.Fatalf("%s: fixture's %s device rate %v against offered %v: want a tier held up by another", what, tt.Tier, o.ReadDev, o.ReadBW)
			}
			if tt.ReadDeviceBps != o.ReadDev || tt.WriteDeviceBps != o.WriteDev || tt.ReadOfferedBps != o.ReadBW || tt.WriteOfferedBps != o.WriteBW {
				t.Errorf("%s: %s bandwidth %v/%v offered %v/%v, want %v/%v and %v/%v", what, tt.Tier, tt.ReadDeviceBps, tt.WriteDeviceBps,
					tt.ReadOfferedBps, tt.WriteOfferedBps, o.ReadDev, o.WriteDev, o.ReadBW, o.WriteBW)
			}
		}
		for i, o := range old.Cells {
			if c := r.Cells[i]; c.DeviceBps != o.Busy || c.OfferedBps != o.BW {
				t.Errorf("%s: cell %s %s %s bandwidth %v offered %v, want %v and %v", what, c.Tier, c.Op, c.Phase, c.DeviceBps, c.OfferedBps, o.Busy, o.BW)
			}
		}
		v, err := MetricsOf(r)
		if err != nil {
			t.Fatal(err)
		}
		if want := old.Tiers[0].ReadDev / 1e9; v["tier1_read_bw"] != want {
			t.Errorf("%s: tier1_read_bw %v, want the device rate %v", what, v["tier1_read_bw"], want)
		}
		if want := old.Tiers[0].ReadBW / 1e9; v["tier1_read_offered"] != want {
			t.Errorf("%s: tier1_read_offered %v, want %v", what, v["tier1_read_offered"], want)
		}
	}

	docs, err := Load([]string{closedResult}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := docs[0].Result
	check("version 2", r)

	again := *r
	again.FormatVersion = schema.ResultFormatVersion
	b, err := json.Marshal(&again)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode("again.json", b)
	if err != nil {
		t.Fatal(err)
	}
	check("version 3", d.Result)
}
