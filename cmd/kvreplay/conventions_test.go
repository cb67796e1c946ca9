package main

import (
	"path/filepath"
	"testing"
)

// TestPartialTierMap: --tier-map Tier-0=ram maps Tier-0 and keeps the
// defaults of the other tiers (Tier-1 in RAM, Tier-2 on NVMe).
func TestPartialTierMap(t *testing.T) {
	f := filepath.Join("..", "..", "testdata", "reference", "llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst")
	read, write, rows := implied(t, f)
	if read[0]+write[0] == 0 || read[2]+write[2] == 0 {
		t.Fatalf("the trace should use Tier-0 and Tier-2: read %v write %v", read, write)
	}
	res, _ := replayDoc(t, "--tier-map", "Tier-0=ram", "--dir", filepath.Join(t.TempDir(), "nvme"),
		"--size-scale", "1/4096", "--speed", "max", "-o", "-", f)
	if !res.Complete || res.Replay.RowsDone != rows {
		t.Fatalf("complete %v (%s), %d of %d rows", res.Complete, res.IncompleteReason, res.Replay.RowsDone, rows)
	}
	want := map[string]string{"Tier-0": "ram", "Tier-1": "ram", "Tier-2": "nvme"}
	for _, tt := range res.Tiers {
		if w, ok := want[tt.Tier]; ok && tt.Backend != w {
			t.Errorf("%s on %s, want %s", tt.Tier, tt.Backend, w)
		}
	}
	checkTierBytes(t, res, read, write)
}
