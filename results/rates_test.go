package results

import (
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

func TestDeviceRateAndOfferedLoad(t *testing.T) {
	if got := DeviceRate(1e9, 2*time.Second); got != 5e8 {
		t.Errorf("DeviceRate = %g", got)
	}
	if got := OfferedLoad(1e9, 4*time.Second); got != 2.5e8 {
		t.Errorf("OfferedLoad = %g", got)
	}
	if DeviceRate(1, 0) != 0 || OfferedLoad(1, 0) != 0 {
		t.Error("a rate over no time is not 0")
	}
}

// TestApplyAndMergeTierBusy: a tier's busy times set its device rates; a
// merge keeps the longest of the ranks' and forgets what a rank lacked.
func TestApplyAndMergeTierBusy(t *testing.T) {
	tiers := []schema.TierTotals{
		{Tier: "Tier-1", ReadBytes: 4e9, WriteBytes: 1e9, BusyS: 0.5},
		{Tier: "Tier-2", ReadBytes: 2e9, BusyS: 3},
	}
	ApplyTierBusy(tiers, []TierBusy{{Tier: "Tier-1", All: 3 * time.Second, Read: 2 * time.Second, Write: time.Second}})
	if got := tiers[0]; got.BusyS != 3 || got.ReadBusyS != 2 || got.WriteBusyS != 1 || got.ReadDeviceBps != 2e9 || got.WriteDeviceBps != 1e9 {
		t.Errorf("Tier-1: %+v", got)
	}
	if got := tiers[1]; got.BusyS != 3 || got.ReadDeviceBps != 0 {
		t.Errorf("Tier-2 has no busy times, so no device rate: %+v", got)
	}

	rank0 := []schema.TierTotals{{Tier: "Tier-1", ReadBytes: 1, WriteBytes: 1, BusyS: 2, ReadBusyS: 1.5, WriteBusyS: 1}}
	rank1 := []schema.TierTotals{{Tier: "Tier-1", ReadBytes: 1, WriteBytes: 1, BusyS: 3, ReadBusyS: 1, WriteBusyS: 0}}
	got := MergeTierBusy(rank0, rank1)
	want := []TierBusy{{Tier: "Tier-1", All: 3 * time.Second, Read: 1500 * time.Millisecond}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("MergeTierBusy = %+v, want %+v (rank 1 wrote without a write busy time: unknown)", got, want)
	}
}
