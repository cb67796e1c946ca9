package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestQoSStatsWithinTarget: within_target is written, read back, and reads
// as 0 from a document written before it existed.
func TestQoSStatsWithinTarget(t *testing.T) {
	q := QoSStats{QoS: "batch", Count: 20, TargetP95MS: 1000, WithinTarget: 19, Compliance: 0.95, Met: true}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"within_target":19`) {
		t.Errorf("encoded %s", b)
	}
	var back QoSStats
	if err := json.Unmarshal(b, &back); err != nil || back != q {
		t.Errorf("round trip %+v, %v", back, err)
	}
	var old QoSStats
	if err := json.Unmarshal([]byte(`{"qos":"batch","count":20,"target_p95_ms":1000,"compliance":0.95,"met":true}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.WithinTarget != 0 || old.Compliance != 0.95 {
		t.Errorf("older document %+v", old)
	}
}

// TestBandwidthKeys: a version-3 document names the device rate
// "bandwidth" and the offered load "offered", and UpgradeBandwidths reads a
// version-2 document, which had them the other way, with version 3's
// meaning (a version-1 document's tiers have no device rate: 0).
func TestBandwidthKeys(t *testing.T) {
	r := Result{
		Tiers: []TierTotals{{Tier: "Tier-1", ReadDeviceBps: 8e9, WriteDeviceBps: 4e9, ReadOfferedBps: 2e9, WriteOfferedBps: 1e9}},
		Cells: []Cell{{Tier: "Tier-1", Op: "Read", DeviceBps: 8e9, OfferedBps: 2e9}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"read_bandwidth_bytes_per_s":8000000000`, `"write_bandwidth_bytes_per_s":4000000000`,
		`"read_offered_bytes_per_s":2000000000`, `"write_offered_bytes_per_s":1000000000`,
		`"bandwidth_bytes_per_s":8000000000`, `"offered_bytes_per_s":2000000000`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in %s", want, b)
		}
	}
	for _, gone := range []string{"device_bytes_per_s", "busy_bandwidth"} {
		if strings.Contains(string(b), gone) {
			t.Errorf("%s in %s", gone, b)
		}
	}

	for _, tc := range []struct {
		name, doc string
		tier      TierTotals
		cell      Cell
	}{
		{"version 2", `{"format_version":2,"tiers":[{"tier":"Tier-1","read_bandwidth_bytes_per_s":2e9,"write_bandwidth_bytes_per_s":1e9,
			"read_device_bytes_per_s":8e9,"write_device_bytes_per_s":4e9}],
			"cells":[{"tier":"Tier-1","op":"Read","bandwidth_bytes_per_s":2e9,"busy_bandwidth_bytes_per_s":8e9}]}`,
			TierTotals{Tier: "Tier-1", ReadDeviceBps: 8e9, WriteDeviceBps: 4e9, ReadOfferedBps: 2e9, WriteOfferedBps: 1e9},
			Cell{Tier: "Tier-1", Op: "Read", DeviceBps: 8e9, OfferedBps: 2e9}},
		{"version 1", `{"format_version":1,"tiers":[{"tier":"Tier-1","read_bandwidth_bytes_per_s":2e9,"write_bandwidth_bytes_per_s":1e9}],
			"cells":[{"tier":"Tier-1","op":"Read","bandwidth_bytes_per_s":2e9,"busy_bandwidth_bytes_per_s":8e9}]}`,
			TierTotals{Tier: "Tier-1", ReadOfferedBps: 2e9, WriteOfferedBps: 1e9},
			Cell{Tier: "Tier-1", Op: "Read", DeviceBps: 8e9, OfferedBps: 2e9}},
	} {
		var old Result
		if err := json.Unmarshal([]byte(tc.doc), &old); err != nil {
			t.Fatal(err)
		}
		if err := UpgradeBandwidths(&old, []byte(tc.doc)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if old.Tiers[0] != tc.tier {
			t.Errorf("%s: tier %+v, want %+v", tc.name, old.Tiers[0], tc.tier)
		}
		if c := old.Cells[0]; c.Tier != tc.cell.Tier || c.DeviceBps != tc.cell.DeviceBps || c.OfferedBps != tc.cell.OfferedBps {
			t.Errorf("%s: cell %+v, want %+v", tc.name, c, tc.cell)
		}
	}
}
