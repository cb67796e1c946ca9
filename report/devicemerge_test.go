package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestMergeRanksDeviceApart: ranks of which one's document has no device
// latency (a kvreplay older than it) merge without device latency, with
// a warning naming that rank, and their summary's device figures are
// every rank's latency from submission: the merge gave the others'
// device latency as the run's (Tier-1 reads of 43 of its 49 operations,
// Tier-2 writes of 6 of 7), shown in every format beside the run's ops.
// Ranks that all have it merge it whole.
func TestMergeRanksDeviceApart(t *testing.T) {
	docs, err := Load(shard3, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]*schema.Result, len(docs))
	for i, d := range docs {
		rs[i] = d.Result
	}
	whole, err := MergeRanks(rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Device) == 0 || slices.ContainsFunc(whole.Warnings, func(w string) bool { return strings.Contains(w, "NO DEVICE LATENCY") }) {
		t.Fatalf("every rank's device latency: merged %d entries, warnings %q", len(whole.Device), whole.Warnings)
	}
	older := *rs[1]
	older.Device = nil
	rs[1] = &older
	m, err := MergeRanks(rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Device) != 0 {
		t.Errorf("merged device latency %+v, of ranks 0 and 2 alone", m.Device)
	}
	if !slices.ContainsFunc(m.Warnings, func(w string) bool { return strings.HasPrefix(w, "rank 1: NO DEVICE LATENCY") }) {
		t.Errorf("warnings %q, want one naming rank 1", m.Warnings)
	}
	// The summary takes every rank's Tier-2 write latency from submission.
	if got, want := m.Summary.StorageWriteDeviceP95MS, m.Summary.StorageWriteP95MS; got != want || got == 0 {
		t.Errorf("storage_write_device_p95_ms %g, want the latency from submission's %g", got, want)
	}
}
