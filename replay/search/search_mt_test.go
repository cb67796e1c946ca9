package search_test

import (
	"slices"
	"testing"

	"github.com/kvbench/kvbench/replay/search"
	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found: each
// fails on a small change to the code under it (named in its comment)
// that the rest of the package's tests let through.

// TestProbeIgnoresClassWithoutTarget: a QoS class of a document that
// carries no target is not an SLA the probe missed: a probe whose other
// class met its SLA and whose storage_health passed, passes.
func TestProbeIgnoresClassWithoutTarget(t *testing.T) {
	res := result("PASS", map[string]float64{"batch": 1})
	res.Requests.ByQoS = append(res.Requests.ByQoS, schema.QoSStats{QoS: "interactive", Count: 7, TargetP95MS: 0})
	if p := search.Summarize(search.KindUsers, res, nil); !p.Pass {
		t.Errorf("probe failed: %s", p.Reason)
	}
}

// TestProbeOfferedLoadOfStorage: a probe's offered load is its storage
// tiers' only, where they are named, and every tier's where none is.
func TestProbeOfferedLoadOfStorage(t *testing.T) {
	res := result("PASS", map[string]float64{"batch": 1})
	res.Tiers = []schema.TierTotals{
		{Tier: "Tier-1", Backend: "ram", ReadOfferedBps: 5e9, WriteOfferedBps: 1e9},
		{Tier: "Tier-2", Backend: "nvme", ReadOfferedBps: 2e9, WriteOfferedBps: 3e8},
	}
	if p := search.Summarize(search.KindCapacity, res, []string{"Tier-2"}); p.OfferedBps != 2.3e9 {
		t.Errorf("offered %g B/s, want Tier-2's 2.3e9", p.OfferedBps)
	}
	if p := search.Summarize(search.KindCapacity, res, nil); p.OfferedBps != 8.3e9 {
		t.Errorf("offered %g B/s, want every tier's 8.3e9", p.OfferedBps)
	}
}

// TestStorageOfUnusedTier2: a Tier-2 that moved no bytes is not where
// the probes' load is: StorageOf names no tier (every tier counts), not a
// Tier-2 that offered nothing.
func TestStorageOfUnusedTier2(t *testing.T) {
	res := &schema.Result{Tiers: []schema.TierTotals{
		{Tier: "Tier-1", Backend: "ram", ReadBytes: 100},
		{Tier: "Tier-2", Backend: "nvme"},
	}}
	if got := search.StorageOf(res); got != nil {
		t.Errorf("StorageOf = %q, want none", got)
	}
	res.Tiers[1].WriteBytes = 10
	res.Tiers = append(res.Tiers, schema.TierTotals{Tier: "Tier-3", Backend: "nvme"})
	if got := search.StorageOf(res); !slices.Equal(got, []string{"Tier-2", "Tier-3"}) {
		t.Errorf("StorageOf = %q, want the tiers on Tier-2's backend", got)
	}
}
