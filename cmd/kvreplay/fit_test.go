package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/replay"
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
	var doc planDoc
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
	if code != 0 || !strings.Contains(stderr, "--fit: replayed with --size-scale 1/") {
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

// TestPipeRAMArena: the RAM arena of a trace nothing sized (a pipe with no
// sidecar) grows into half the memory available, not a fixed 1 GiB that an
// object of a few GiB does not fit.
func TestPipeRAMArena(t *testing.T) {
	avail, _ := host.Memory()
	if avail < 4<<30 {
		t.Skipf("%d bytes of memory available: too little to tell", avail)
	}
	o := &options{cfg: replay.DefaultConfig()}
	size, populate := ramSize(o, &replay.Plan{})
	if populate || size < avail/2-1<<30 || size > avail/2 {
		t.Errorf("arena %d bytes, populated %v; want about half of %d, not populated", size, populate, avail)
	}
	o.ramBudget = 64 << 20
	if size, populate := ramSize(o, &replay.Plan{}); size != 64<<20 || !populate {
		t.Errorf("--ram-budget: %d, %v", size, populate)
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

// TestPipeMemoryLimit: the soft memory limit never stays below the live
// heap: after a collection it rises to twice the live heap (a pipe's
// replay, whose objects nobody counted, had it at 344 MiB under a live
// heap of more, and the collector ran without end).
func TestPipeMemoryLimit(t *testing.T) {
	for _, tt := range []struct{ base, live, want int64 }{
		{344 << 20, 10 << 20, 344 << 20},
		{344 << 20, 200 << 20, 400 << 20},
		{344 << 20, 2 << 30, 4 << 30},
	} {
		if got := limitFor(tt.base, tt.live); got != tt.want {
			t.Errorf("limitFor(%d, %d) = %d, want %d", tt.base, tt.live, got, tt.want)
		}
	}
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	g := &memGovernor{base: 1 << 20}
	debug.SetMemoryLimit(g.base)
	g.arm()
	defer g.stop()
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) < 2*64<<20 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if lim := debug.SetMemoryLimit(-1); lim < 2*64<<20 {
		t.Errorf("limit %d under a live heap of 64 MiB and more", lim)
	}
	runtime.KeepAlive(live)
}

// TestFitBoundsTime: a trace that takes longer than --fit-time at its pace
// is replayed at its pace for its first part (--duration), and a tier it
// uses that nothing serves here goes to RAM; the result's fit says both.
func TestFitBoundsTime(t *testing.T) {
	dir := t.TempDir()
	// 20 s of trace, one small object a second on Tier-0 and Tier-2.
	var rows []string
	for i := range 20 {
		rows = append(rows,
			fmt.Sprintf("%d.000000,Write,65536,Tier-0,g%d,Prefill", i, i),
			fmt.Sprintf("%d.000000,Write,65536,Tier-2,n%d,Prefill", i, i))
	}
	tr := writeTrace(t, dir, "long.csv", rows...)
	out := filepath.Join(dir, "r.json")

	code, stdout, stderr := kvreplay("--plan", "--fit-time", "1s", "--dir", dir, tr)
	for _, want := range []string{"Tier-0: 20 rows and --tier-map maps it to nothing", "--fit maps them to ram",
		"--fit replays with --duration 1s: the trace's 19.0 s at --speed 1 take 19.0 s, longer than --fit-time 1s"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("--plan: exit %d, stdout lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}

	began := time.Now()
	code, _, stderr = kvreplay("--fit", "--fit-time", "1s", "--dir", dir, "-o", out, tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := time.Since(began); d > 15*time.Second {
		t.Errorf("the bounded replay took %v", d)
	}
	res := readResult(t, out)
	if res.Fit == nil || !slices.Equal(res.Fit.Applied, []string{"--tier-map Tier-0=ram", "--duration 1s"}) ||
		!strings.Contains(res.Fit.Why, "longer than --fit-time 1s") || !strings.Contains(res.Fit.Why, "their figures are RAM's") {
		t.Fatalf("fit %+v", res.Fit)
	}
	// The window reaches the rows of its first second of trace, not 40.
	if res.Replay.RowsDone >= 40 || res.Replay.RowsDone < 2 {
		t.Errorf("%d rows replayed in a 1 s window of a 20 s trace", res.Replay.RowsDone)
	}

	// Within --fit-time, nothing is bounded; --fit-time alone is refused.
	code, _, stderr = kvreplay("--fit", "--fit-time", "1m", "--speed", "20", "--tier-map", "Tier-0=ram", "--dir", dir, "-o", out, tr)
	if res := readResult(t, out); code != 0 || res.Fit == nil || len(res.Fit.Applied) != 0 || res.Replay.RowsDone != 40 {
		t.Errorf("exit %d (%s): fit %+v, %d rows", code, stderr, res.Fit, res.Replay.RowsDone)
	}
	if code, _, stderr := kvreplay("--fit-time", "1m", "--dir", dir, "-o", out, tr); code != 2 || !strings.Contains(stderr, "add --fit") {
		t.Errorf("--fit-time without --fit: exit %d, %q", code, stderr)
	}
}
