package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// TestPartialTierMap: --tier-map Tier-0=ram maps Tier-0 and keeps the
// defaults of the other tiers (Tier-1 in RAM, Tier-2 on NVMe).
func TestPartialTierMap(t *testing.T) {
	t.Parallel()
	f := filepath.Join("..", "..", "testdata", "reference", "llama8b_u50_d20_gpu2_cpu4_gennone_s42.csv.zst")
	read, write, rows := implied(t, f)
	if read[0]+write[0] == 0 || read[2]+write[2] == 0 {
		t.Fatalf("the trace should use Tier-0 and Tier-2: read %v write %v", read, write)
	}
	res, _ := replayDoc(t, "--tier-map", "Tier-0=ram", "--mkdir", "--dir", filepath.Join(t.TempDir(), "nvme"),
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

// TestResultKeys: kvreplay's document is of the current format version and
// every key is lower_snake_case, its config (replay.Config's fields) and
// the trace's sidecar config (Go field names, as kvtrace wrote them before
// version 2) included.
func TestResultKeys(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	tr := filepath.Join(dir, "run.csv")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tr, data, 0o644); err != nil {
		t.Fatal(err)
	}
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Model: "llama3.1-8b",
		TierCapacityBytes: map[string]int64{"Tier-0": 0, "Tier-1": 1 << 30},
		Config:            json.RawMessage(`{"NumUsers":10,"GPUMemGB":0,"Models":{"llama3.1-8b":{"KVHeads":8}},"QoS":{"Interactive":{"TargetP95":50}}}`)}
	if err := trace.WriteMeta(tr, meta); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", []string{"--mkdir", "--dir", filepath.Join(dir, "nvme"), "--size-scale", "1/4096", "--speed", "max", "-o", "-", tr},
		&out, &errb, run); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if bad := clitest.NonSnakeKeys(t, out.Bytes()); len(bad) > 0 {
		t.Errorf("keys not in lower_snake_case: %v", bad)
	}
	var res schema.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.FormatVersion != schema.ResultFormatVersion || schema.ResultFormatVersion < 2 {
		t.Errorf("format_version %d", res.FormatVersion)
	}
	for _, want := range []string{`"tier_map"`, `"block_size"`, `"num_users"`, `"target_p95"`} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("result lacks %s", want)
		}
	}
}
