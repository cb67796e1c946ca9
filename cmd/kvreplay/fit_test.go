package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay/setup"
)

// hugeTrace writes a trace too big and too fast for any machine: 64 TiB
// on Tier-2 and 1 GiB on Tier-1, written and read back within 1 ms.
func hugeTrace(t *testing.T, dir string) string {
	return writeTrace(t, dir, "huge.csv",
		"0.000000,Write,70368744177664,Tier-2,a,Prefill",
		"0.000000,Write,1073741824,Tier-1,b,Prefill",
		"0.001000,Read,70368744177664,Tier-2,a,Decode",
		"0.001000,Read,1073741824,Tier-1,b,Decode")
}

// TestPlanPrints: --plan reads the trace and prints what the replay needs
// beside what the machine has and the options that make it fit, exit 0,
// making nothing.
func TestPlanPrints(t *testing.T) {
	dir := t.TempDir()
	nv := filepath.Join(dir, "nvme")
	if err := os.Mkdir(nv, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := hugeTrace(t, dir)
	code, stdout, stderr := kvreplay("--plan", "--dir", nv, tr)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"What the replay needs (--size-scale 1, exact)", "64.00 TiB", "What this machine has", nv + ": ",
		"assumed  RAM 4.00 GB/s, disk 1.00 GB/s", "It does not fit", "live on the NVMe tier at its peak", "bandwidth: the trace's pace asks",
		"Options that make it fit", "--size-scale 1/", "(--fit applies this)", "--speed "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, stdout)
		}
	}
	if entries, _ := os.ReadDir(nv); len(entries) != 0 {
		t.Errorf("--plan made %v in --dir", entries)
	}
	code, stdout, _ = kvreplay("--plan", "--format", "json", "--speed", "max", "--dir", nv, tr)
	var doc setup.PlanDoc
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatalf("--format json: exit %d, %v: %s", code, err, stdout)
	}
	a := doc.Advice
	if doc.Rows != 4 || a.Runs || a.Fits || a.Fit == nil || a.Fit.Scale >= 1 || len(a.Needs.Backends) != 2 || a.Needs.Backends[1].Peak != 64<<40 ||
		a.Machine.DiskFree <= 0 || a.Machine.MemAvailable <= 0 || a.Needs.Backends[1].Rate != 0 {
		t.Errorf("plan %+v", a)
	}
	// What the trace's pace asks: 2 GiB and 128 TiB in 1 ms.
	code, stdout, _ = kvreplay("--plan", "--format", "json", "--dir", nv, tr)
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatal(err)
	}
	if r := doc.Advice.Needs.Backends[1].Rate; r < 1.4e17 || r > 1.42e17 {
		t.Errorf("the nvme tier asks %g B/s, want 128 TiB in 1 ms", r)
	}
}

// TestPlanUsage: --plan's and --fit's usage errors, exit 2.
func TestPlanUsage(t *testing.T) {
	dir := t.TempDir()
	tr := hugeTrace(t, dir)
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--format", "json", tr}, "add --plan"},
		{[]string{"--plan", "--format", "xml", tr}, "--format xml: want text or json"},
		{[]string{"--plan", "--fit", tr}, "give one"},
		{[]string{"--plan", "-o", filepath.Join(dir, "r.json"), tr}, "writes no result"},
		{[]string{"--plan", "--no-prescan", tr}, "nothing says their sizes"},
		{[]string{"--fit", "--no-prescan", "-o", filepath.Join(dir, "r.json"), tr}, "nothing says their sizes"},
	} {
		code, _, stderr := kvreplay(tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, stderr, tt.stderr)
		}
	}
}

// TestFitReplays: --fit replays the trace at the size scale at which it
// fits this machine, at the trace's pace: 128 TiB in 1 ms asks too much
// of any disk, so it scales until the bandwidth is within half of the
// 1 GB/s assumed, and the result says what it applied and why.
func TestFitReplays(t *testing.T) {
	dir := t.TempDir()
	tr := hugeTrace(t, dir)
	out := filepath.Join(dir, "r.json")
	code, _, stderr := kvreplay("--fit", "--dir", dir, "-o", out, tr)
	// The terminal hears what --fit will do before the replay, in the
	// present; the result, written after it, says what it did.
	if code != 0 || !strings.HasPrefix(stderr, "kvreplay: --fit: replaying with --size-scale 1/") || strings.Contains(stderr, "replayed with") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	res := readResult(t, out)
	if res.Fit == nil || len(res.Fit.Applied) == 0 || !strings.HasPrefix(res.Fit.Applied[0], "--size-scale 1/") ||
		!strings.Contains(res.Fit.Why, "this machine has") || !strings.Contains(res.Fit.Why, "1.00 GB/s") {
		t.Fatalf("fit %+v", res.Fit)
	}
	// 128 TiB in 1 ms at most 0.5 GB/s: 1/2^29 (256 KiB).
	if res.SizeScale != 1.0/(1<<29) || !res.Complete || res.Replay.RowsDone != 4 {
		t.Errorf("size scale %g, complete %v, %d rows", res.SizeScale, res.Complete, res.Replay.RowsDone)
	}
	var cfg struct {
		SizeScale float64 `json:"size_scale"`
	}
	if err := json.Unmarshal(res.Config, &cfg); err != nil || cfg.SizeScale != res.SizeScale {
		t.Errorf("config's size scale %g (%v), want %g", cfg.SizeScale, err, res.SizeScale)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.HasPrefix(w, "--fit: replayed with --size-scale")
	}
	if !found {
		t.Errorf("warnings %q do not say what --fit applied", res.Warnings)
	}

	// A trace that fits is replayed as it is, and the result says so.
	small := nvmeTrace(t, dir)
	code, _, stderr = kvreplay("--fit", "--speed", "max", "--dir", dir, "-o", out, small)
	res = readResult(t, out)
	if code != 0 || res.Fit == nil || len(res.Fit.Applied) != 0 || res.SizeScale != 1 || !strings.Contains(res.Fit.Why, "fits this machine as it is") {
		t.Errorf("exit %d, %q, fit %+v, scale %g", code, stderr, res.Fit, res.SizeScale)
	}
}

// TestFitErrorNamesOptions: a replay that cannot start here stops before
// any I/O (exit 2) with the figures and the options that make it fit, the
// plan's.
func TestFitErrorNamesOptions(t *testing.T) {
	dir := t.TempDir()
	nv := filepath.Join(dir, "nvme")
	if err := os.Mkdir(nv, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := hugeTrace(t, dir)
	code, _, stderr := kvreplay("--speed", "max", "--dir", nv, "-o", filepath.Join(dir, "r.json"), tr)
	for _, want := range []string{"does not fit this machine", "live on the NVMe tier at its peak", "64.00 TiB", nv + " has ", " free",
		"use --size-scale 1/", "--fit applies the first"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, %d lines; want 2 and one", code, strings.Count(stderr, "\n"))
	}
	if entries, _ := os.ReadDir(nv); len(entries) != 0 {
		t.Errorf("a refused replay made %v", entries)
	}
	// A RAM tier beyond the machine's memory says so, with the options.
	mem := writeTrace(t, dir, "mem.csv", "0.0,Write,70368744177664,Tier-1,a,Prefill")
	code, _, stderr = kvreplay("--speed", "max", "-o", filepath.Join(dir, "r.json"), mem)
	for _, want := range []string{"memory: the replay needs 64.", "the RAM tier's arena 64.00 TiB", "available of", "use --size-scale 1/"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr lacks %q: %s", code, want, stderr)
		}
	}
}

// TestPipeObjectAboveOneGiB replays through stdin a trace whose object is
// bigger than the 1 GiB arena a pipe used to get.
func TestPipeObjectAboveOneGiB(t *testing.T) {
	if avail, _ := host.Memory(); avail < 8<<30 {
		t.Skip("needs 8 GiB of memory available")
	}
	dir := t.TempDir()
	tr := writeTrace(t, dir, "big.csv",
		"0.000000,Write,1610612736,Tier-1,a,Prefill",
		"0.000000,Read,1610612736,Tier-1,a,Decode",
		"0.000000,Delete,1610612736,Tier-1,a,Evict")
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = stdin }()
	out := filepath.Join(dir, "r.json")
	code, _, stderr := kvreplay("--speed", "max", "-o", out, "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := readResult(t, out)
	if !res.Complete || res.Replay.RowsDone != 3 || res.Replay.CapacityEvictions != 0 {
		t.Errorf("complete %v, %d rows, %d evictions", res.Complete, res.Replay.RowsDone, res.Replay.CapacityEvictions)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "grows into it")
	}
	if !found {
		t.Errorf("warnings %q do not say the arena grows", res.Warnings)
	}
}
