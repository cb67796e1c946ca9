package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// writeRAMTrace writes a trace of n objects of size bytes on Tier-1, all
// written and then all read (n live at once), and returns its path.
func writeRAMTrace(t *testing.T, dir, name string, n int, size int64) string {
	return writeTierTrace(t, dir, name, "Tier-1", n, size)
}

// writeTierTrace is writeRAMTrace on tier.
func writeTierTrace(t *testing.T, dir, name, tier string, n int, size int64) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range n {
		fmt.Fprintf(&b, "%d.000000,Write,%d,%s,%s%d,Prefill\n", i, size, tier, name, i)
	}
	for i := range n {
		fmt.Fprintf(&b, "%d.000000,Read,%d,%s,%s%d,Decode\n", n+i, size, tier, name, i)
	}
	tr := filepath.Join(dir, name+".csv")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

// noPrescanDoc replays traces with --no-prescan and returns the result.
func noPrescanDoc(t *testing.T, dir string, traces ...string) (*schema.Result, int, string) {
	t.Helper()
	out := filepath.Join(dir, "out.json")
	args := append([]string{"--no-prescan", "--dir", dir, "--speed", "max", "-o", out}, traces...)
	code, _, errs := kvreplay(args...)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no result: %v: %s", code, err, errs)
	}
	var res schema.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return &res, code, errs
}

// TestNoPrescanSidecarArenaHoldsPeak: without a prescan, the RAM arena
// sized from a sidecar holds the trace's peak as the replay allocates it,
// each object in whole pages: 300 objects of 4097 bytes live at once
// take 2.34 MiB, and an arena of the sidecar's 1.17 MiB, scaled as one
// sum, evicted objects that nothing bounded (the MLPerf 8B trace at 1/256:
// 1570 evictions).
func TestNoPrescanSidecarArenaHoldsPeak(t *testing.T) {
	dir := t.TempDir()
	const n, size = 300, 4097
	tr := writeRAMTrace(t, dir, "k", n, size)
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace",
		PeakLiveBytes: map[string]int64{"Tier-1": n * size}, Counts: trace.MetaCounts{Rows: 2 * n, Objects: n, ReadBytes: n * size, WriteBytes: n * size}}
	if err := trace.WriteMeta(tr, meta); err != nil {
		t.Fatal(err)
	}
	res, code, errs := noPrescanDoc(t, dir, tr)
	if code != 0 || !res.Complete || res.Replay.CapacityEvictions != 0 || res.Replay.Rematerialised != 0 {
		t.Errorf("exit %d, complete %v, %d evictions, %d rewritten: want 0, true, none: %s; warnings %q",
			code, res.Complete, res.Replay.CapacityEvictions, res.Replay.Rematerialised, errs, res.Warnings)
	}
}

// TestNoPrescanSidecarOfOneTrace: without a prescan, a trace with a
// sidecar beside one without (kv-cache.py's) is planned as traces nothing
// sized: the RAM arena of the sidecar's peak alone stopped the run at the
// other trace's first larger object (exit 1, "object larger than the
// tier's capacity").
func TestNoPrescanSidecarOfOneTrace(t *testing.T) {
	dir := t.TempDir()
	small := writeRAMTrace(t, dir, "small", 4, 64<<10)
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace",
		PeakLiveBytes: map[string]int64{"Tier-1": 4 * 64 << 10}, Counts: trace.MetaCounts{Rows: 8, Objects: 4, ReadBytes: 4 * 64 << 10, WriteBytes: 4 * 64 << 10}}
	if err := trace.WriteMeta(small, meta); err != nil {
		t.Fatal(err)
	}
	big := writeRAMTrace(t, dir, "big", 2, 4<<20)
	res, code, errs := noPrescanDoc(t, dir, small, big)
	if code != 0 || !res.Complete || res.Replay.CapacityEvictions != 0 {
		t.Errorf("exit %d, complete %v, %d evictions: want 0, true, none: %s", code, res.Complete, res.Replay.CapacityEvictions, errs)
	}
}

// TestRAMBudgetHelpDefault: --ram-budget's help states the arena that a
// trace nothing sized gets (setup.RAMSize: half the memory available,
// replay.FitShare), not the 1 GiB or 1/8 of memory it once was.
func TestRAMBudgetHelpDefault(t *testing.T) {
	code, out, errs := kvreplay("--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--ram-budget") {
			line = l
		}
	}
	if want := "half the memory available"; replay.FitShare != 0.5 || !strings.Contains(line, want) || strings.Contains(line, "1/8") {
		t.Errorf("--ram-budget's help %q: want the default for a pipe, %q", line, want)
	}
}

// TestNoPrescanExtentSize: the extent file of traces nothing sized (a
// pipe, --no-prescan without a sidecar) holds --capacity, and without it
// the replay is refused before any I/O (exit 2): it was a file of 1 MiB,
// the plan of nothing, and the replay stopped at its first object of 2
// MiB (exit 1, "object larger than the tier's capacity").
func TestNoPrescanExtentSize(t *testing.T) {
	dir := t.TempDir()
	tr := writeTierTrace(t, dir, "k", "Tier-2", 4, 2<<20)
	nvme := filepath.Join(dir, "nvme")
	if err := os.Mkdir(nvme, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--no-prescan", "--layout", "extent", "--dir", nvme, "--speed", "max", "-o", filepath.Join(dir, "out.json")}
	code, _, errs := kvreplay(append(args, tr)...)
	if entries, _ := os.ReadDir(nvme); code != 2 || !strings.Contains(errs, "nothing sizes the extent file: give --capacity") || len(entries) != 0 {
		t.Errorf("without --capacity: exit %d, %d entries left in --dir, stderr %q; want 2, none, the extent file's size asked for", code, len(entries), errs)
	}
	code, _, errs = kvreplay(append(args, "--capacity", "16MiB", tr)...)
	if entries, _ := os.ReadDir(nvme); code != 0 || len(entries) != 0 {
		t.Errorf("--capacity 16MiB: exit %d, %d entries left in --dir: %s", code, len(entries), errs)
	}
}
