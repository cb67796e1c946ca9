package main

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
)

// TestModelMakesTokensMeasurable: a kv-cache.py trace has no sidecar, so
// its bytes per token, and the KV tokens the run moves, are unknown;
// --model gives them from the model table kvtrace uses.
func TestModelMakesTokensMeasurable(t *testing.T) {
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	args := []string{"--speed", "max", "--size-scale", "1/4096", "--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=ram", "-o", "-"}
	without, _ := replayDoc(t, append(args, tr)...)
	if without.Summary.StorageKVTokensPerSec != nil || without.Summary.NotMeasured[results.NotMeasuredKVTokens] == "" {
		t.Fatalf("without --model: kv tokens %v, not measured %q: the test proves nothing",
			without.Summary.StorageKVTokensPerSec, without.Summary.NotMeasured[results.NotMeasuredKVTokens])
	}
	with, _ := replayDoc(t, append(args, "--model", "llama3.1-8b", tr)...)
	m := sim.BuiltinModels()["llama3.1-8b"]
	tokens, ok := results.StorageTokens(with.Cells, m.BytesPerToken(), 1)
	got := with.Summary.StorageKVTokensPerSec
	if !ok || got == nil || *got <= 0 || math.Abs(*got-tokens/with.WallS) > 1e-6*tokens/with.WallS {
		t.Errorf("with --model llama3.1-8b: kv tokens per s %v, want %g (Tier-2 bytes over %d bytes per token over %g s)",
			got, tokens/with.WallS, m.BytesPerToken(), with.WallS)
	}
	if why := with.Summary.NotMeasured[results.NotMeasuredKVTokens]; why != "" {
		t.Errorf("with --model: still not measured: %s", why)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "llama9", tr}, "--model llama9: unknown model (want one of "},
		{[]string{"--tensor-parallel", "8", tr}, "--tensor-parallel 8: only with --model"},
		{[]string{"--model", "llama3.1-8b", "--tensor-parallel", "0", tr}, "--tensor-parallel 0: must be between 1 and 1024"},
	} {
		var out, errb bytes.Buffer
		if code := cli.Main("kvreplay", tt.args, &out, &errb, run); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// TestSummaryBandwidthAndTokens: the terminal summary leads each tier with
// its device rate in GB/s, shows the offered load apart, and names the two
// token rates apart.
func TestSummaryBandwidthAndTokens(t *testing.T) {
	tokens := 3e6
	r := &schema.Result{Complete: true, WallS: 2, Traces: []schema.TraceInfo{{File: "t.csv", Rows: 10}},
		Replay: schema.ReplayStats{RowsDone: 10, Speed: 1},
		Cells: []schema.Cell{{Tier: "Tier-1", Op: "Read", Phase: "Decode", Backend: "ram", Ops: 10, LogicalBytes: 4e9,
			BusyS: 0.5, DeviceBps: 8e9, OfferedBps: 2e9}},
		Tiers: []schema.TierTotals{{Tier: "Tier-1", Backend: "ram", ReadOps: 10, ReadBytes: 4e9, ReadOfferedBps: 2e9,
			BusyS: 0.5, ReadBusyS: 0.5, ReadDeviceBps: 8e9}},
		ClosedLoop: &schema.ClosedLoopStats{TokensGenerated: 100, TokensKnown: true, StorageIOS: 4}}
	var err error
	if r.Summary, err = results.Summarize(r, &tokens); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeSummary(&b, r)
	out := b.String()
	var tier string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(strings.TrimSpace(l), "Tier-1 ") && !strings.Contains(l, "Decode") {
			tier = l
		}
	}
	// Tier-1: 8.000 GB/s device rate (4 GB over 0.5 s busy), 2.000 offered
	// (4 GB over the 2 s run).
	if f := strings.Fields(tier); len(f) < 5 || f[1] != "8.000" || f[3] != "2.000" {
		t.Errorf("tier line %q: want the device rate 8.000 GB/s first, the offered load 2.000 apart", tier)
	}
	for _, want := range []string{"read GB/s", "read offered GB/s", "GB = 10^9 bytes",
		"kv_tokens_moved_per_s (kvbench's", "): 1500000\n",
		"storage_throughput_tokens_per_sec (the reference's", "): 25.0\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "MB/s") || strings.Contains(out, "GiB") {
		t.Errorf("summary mixes units:\n%s", out)
	}
}
