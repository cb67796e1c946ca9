package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

func readResult(t *testing.T, path string) *schema.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r schema.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestSIGINTWritesPartialResult interrupts a real kvreplay process with a
// real SIGINT: it drains, writes its partial result marked incomplete,
// removes what it created and exits 1.
func TestSIGINTWritesPartialResult(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.csv.zst")
	if out, err := exec.Command(kvtrace, "--num-users", "20", "--duration", "60", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("kvtrace: %v\n%s", err, out)
	}
	res, nv := filepath.Join(dir, "result.json"), filepath.Join(dir, "nvme")
	cmd := exec.Command(kvreplay, "--speed", "1", "--size-scale", "1/1024", "--mkdir", "--dir", nv, "-o", res, tr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	waitFirstWrite(t, filepath.Join(nv, "kvreplay-*", "2_*"), exited, &stderr)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	r := readResult(t, res)
	if r.Complete || !strings.Contains(r.IncompleteReason, "interrupt") || r.Replay.RowsDone == 0 {
		t.Errorf("complete %v, reason %q, rows done %d", r.Complete, r.IncompleteReason, r.Replay.RowsDone)
	}
	if r.WallS > 10 {
		t.Errorf("the run went on for %.1f s after the signal", r.WallS)
	}
	if _, err := os.Stat(nv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the NVMe directory kvreplay created is still there: %v", err)
	}
	if !strings.Contains(stderr.String(), "interrupt") {
		t.Errorf("stderr does not say why it stopped: %q", stderr.String())
	}
}

// waitFirstWrite waits until a file matching glob (an object's, in a
// kvreplay's run directory) is there: the replay has begun writing. A
// kvreplay that ends first (exited) fails t with its stderr.
func waitFirstWrite(t *testing.T, glob string, exited <-chan error, stderr *strings.Builder) {
	t.Helper()
	for {
		if objs, _ := filepath.Glob(glob); len(objs) > 0 {
			return
		}
		select {
		case err := <-exited:
			t.Fatalf("kvreplay ended (%v) before its first write: %s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// pipeline runs gen | rep and fails t if either fails.
func pipeline(t *testing.T, gen, rep *exec.Cmd) {
	t.Helper()
	pipe, err := gen.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	rep.Stdin = pipe
	var stderr strings.Builder
	rep.Stderr = &stderr
	if err := gen.Start(); err != nil {
		t.Fatal(err)
	}
	if err := rep.Run(); err != nil {
		t.Fatalf("kvreplay: %v\n%s", err, stderr.String())
	}
	if err := gen.Wait(); err != nil {
		t.Fatalf("kvtrace: %v", err)
	}
}

// TestPipelineBoundedMemory streams the MLPerf 8B workload's 2.6 M-row
// trace from kvtrace through a pipe into kvreplay (null backends, so the
// test measures the engine, not the disk) and checks kvreplay's peak RSS
// stays bounded although the trace is ~200 MB of CSV.
func TestPipelineBoundedMemory(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	gen := exec.Command(kvtrace, "--model", "llama3.1-8b", "--num-users", "150", "--duration", "600",
		"--generation-mode", "none", "--gpu-mem-gb", "0", "--cpu-mem-gb", "4")
	rep := exec.Command(kvreplay, "--tier-map", "Tier-1=null,Tier-2=null", "--speed", "max", "--size-scale", "1/65536", "-", "-o", res)
	pipeline(t, gen, rep)
	r := readResult(t, res)
	// The process's own VmHWM: getrusage's maxrss would count the test
	// binary's memory, forked before the exec.
	maxRSS := r.Replay.PeakRSSBytes
	t.Logf("%d rows through a pipe; kvreplay peak RSS %.1f MiB", r.Replay.RowsDone, float64(maxRSS)/(1<<20))
	if r.Replay.RowsDone < 2_000_000 || !r.Complete {
		t.Errorf("%d rows done, complete %v", r.Replay.RowsDone, r.Complete)
	}
	if maxRSS > 256<<20 {
		t.Errorf("kvreplay peak RSS %.1f MiB for a streamed trace", float64(maxRSS)/(1<<20))
	}
}

// TestMemoryBoundLargeObjects replays two objects of llama3.1-70B's KV
// (327,680 bytes per token) at once on a real NVMe directory and checks
// kvreplay's peak RSS stays within 64 MiB + queue depth x block size
// (design section 8), whatever the object sizes: 1,600 tokens (500 MiB,
// 16 times the queue's bytes), and with KVBENCH_LONG=1 an 8K context
// (2.5 GiB, 10 GiB through the disk).
func TestMemoryBoundLargeObjects(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "big.csv")
	size := int64(327680 * 1600)
	if os.Getenv("KVBENCH_LONG") == "1" {
		size = 327680 * 8192
	}
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 2 {
		fmt.Fprintf(&b, "0.%06d,Write,%d,Tier-2,big%d,Prefill\n", i, size, i)
		fmt.Fprintf(&b, "0.%06d,Read,%d,Tier-2,big%d,Decode\n", i, size, i)
	}
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	const qd, bs = 32, 1 << 20
	res := filepath.Join(dir, "r.json")
	cmd := exec.Command(kvreplay, "--speed", "max", "--queue-depth", fmt.Sprint(qd), "--block-size", fmt.Sprint(bs),
		"--mkdir", "--dir", filepath.Join(dir, "nvme"), "-o", res, tr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kvreplay: %v\n%s", err, out)
	}
	r := readResult(t, res)
	maxRSS := r.Replay.PeakRSSBytes
	bound := int64(64<<20 + qd*bs)
	var moved int64
	for _, tt := range r.Tiers {
		moved += tt.ReadBytes + tt.WriteBytes
	}
	t.Logf("moved %.1f GiB in %.1f s through objects of %.2f GiB (%s engine): peak RSS %.1f MiB (bound %.0f MiB); warnings %v",
		float64(moved)/(1<<30), r.WallS, float64(size)/(1<<30), r.Replay.Engine, float64(maxRSS)/(1<<20), float64(bound)/(1<<20), r.Warnings)
	if moved != 4*size {
		t.Errorf("moved %d bytes, want %d", moved, 4*size)
	}
	if maxRSS > bound {
		t.Errorf("peak RSS %d > %d", maxRSS, bound)
	}
}

// TestPipeSmallRAM pipes a small kvtrace workload (10 users, 8 GB of RAM)
// into kvreplay
// with real RAM and NVMe tiers at 1/4096 (no sidecar, no prescan): the RAM
// arena is the bounded, unprefaulted default, so the run's peak RSS follows
// what the trace keeps live, not the arena's size. Then again with a
// --ram-budget below what the trace keeps live: the replay completes and
// counts the LRU objects it evicted.
func TestPipeSmallRAM(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		extra []string
		evict bool
	}{{"default", nil, false}, {"budget", []string{"--ram-budget", "1MiB"}, true}} {
		t.Run(c.name, func(t *testing.T) {
			res := filepath.Join(dir, c.name+".json")
			gen := exec.Command(kvtrace, "--num-users", "10", "--duration", "30", "--generation-mode", "none",
				"--gpu-mem-gb", "0", "--cpu-mem-gb", "8")
			// 1/4096: the arena's default bound is the same at any scale,
			// and 1/1024 moved 2.4 GB through the disk per run.
			args := append([]string{"--speed", "max", "--size-scale", "1/4096", "--mkdir", "--dir", filepath.Join(dir, "nvme-"+c.name), "-o", res}, c.extra...)
			rep := exec.Command(kvreplay, append(args, "-")...)
			pipeline(t, gen, rep)
			r := readResult(t, res)
			if !r.Complete || r.Errors.Count != 0 || r.Replay.RowsDone == 0 {
				t.Fatalf("complete %v (%s), %d rows, errors %+v", r.Complete, r.IncompleteReason, r.Replay.RowsDone, r.Errors)
			}
			t.Logf("%d rows, %d evictions, %d rematerialised, peak RSS %.1f MiB", r.Replay.RowsDone,
				r.Replay.CapacityEvictions, r.Replay.Rematerialised, float64(r.Replay.PeakRSSBytes)/(1<<20))
			if got := r.Replay.CapacityEvictions > 0; got != c.evict {
				t.Errorf("%d capacity evictions, want evictions %v", r.Replay.CapacityEvictions, c.evict)
			}
			if c.evict && !strings.Contains(strings.Join(r.Warnings, "\n"), "evicted") {
				t.Errorf("evictions not among the warnings: %q", r.Warnings)
			}
			if r.Replay.PeakRSSBytes > 512<<20 {
				t.Errorf("peak RSS %.1f MiB: the default arena was touched whole", float64(r.Replay.PeakRSSBytes)/(1<<20))
			}
		})
	}
}
