package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/schema"
)

// TestListDevicesAnywhere: --list-devices succeeds on a machine without
// GPUs; a Tier-0 mapped to gpu stops before any I/O naming the way out.
func TestListDevicesAnywhere(t *testing.T) {
	var out, errb bytes.Buffer
	if code := cli.Main("kvreplay", []string{"--list-devices"}, &out, &errb, run); code != 0 || !strings.Contains(out.String(), "CUDA runtime:") {
		t.Errorf("--list-devices: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	tr := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(tr, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0,Write,4096,Tier-0,k,Prefill\n"), 0o644)
	if code := cli.Main("kvreplay", []string{"--tier-map", "Tier-0=gpu", tr}, &out, &errb, run); code != 2 || !strings.Contains(errb.String(), "--tier-map Tier-0=ram") {
		t.Errorf("Tier-0=gpu: exit %d: %s", code, errb.String())
	}
}

// TestListDevicesFakeRuntime runs the static kvreplay binary (no cgo)
// with a fake CUDA runtime on its library path: it loads it at run time
// and lists its devices.
func TestListDevicesFakeRuntime(t *testing.T) {
	_, kvreplay := buildTools(t)
	dir := filepath.Dir(cudatest.FakeRuntime(t))
	cmd := exec.Command(kvreplay, "--list-devices")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "FAKE_CUDA_DEVICES=2")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GPU 1: Fake GPU, 1.00 GiB") || !strings.Contains(string(out), "runtime 12.2, driver 12.4") {
		t.Errorf("kvreplay --list-devices with the fake runtime: %v\n%s", err, out)
	}
}

// TestGPUTierFakeRuntime replays a three-tier kvtrace trace with Tier-0 on
// the gpu tier of the static binary, over the fake CUDA runtime, with
// --verify: it completes, every byte read back checks, and each tier
// moves the bytes the same replay with Tier-0 in RAM moves.
func TestGPUTierFakeRuntime(t *testing.T) {
	kvtrace, kvreplay := buildTools(t)
	lib := filepath.Dir(cudatest.FakeRuntime(t))
	dir := t.TempDir()
	tr := filepath.Join(dir, "three.csv.zst")
	if out, err := exec.Command(kvtrace, "--num-users", "8", "--duration", "20", "--generation-mode", "none",
		"--gpu-mem-gb", "2", "--cpu-mem-gb", "2", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("kvtrace: %v\n%s", err, out)
	}
	replayWith := func(tier0, out string) *schema.Result {
		cmd := exec.Command(kvreplay, "--tier-map", "Tier-0="+tier0+",Tier-1=ram,Tier-2=nvme", "--size-scale", "1/1024",
			"--speed", "max", "--verify", "--dir", dir, "-q", "-o", filepath.Join(dir, out), tr)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "FAKE_CUDA_MEM=4294967296")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kvreplay Tier-0=%s: %v\n%s", tier0, err, b)
		}
		return readResult(t, filepath.Join(dir, out))
	}
	g, r := replayWith("gpu", "gpu.json"), replayWith("ram", "ram.json")
	if !g.Complete || g.Replay.VerifiedBytes == 0 || g.Errors.Count != 0 {
		t.Fatalf("gpu run: complete %v, verified %d bytes, %d errors", g.Complete, g.Replay.VerifiedBytes, g.Errors.Count)
	}
	usedGPU := false
	for _, c := range g.Cells {
		usedGPU = usedGPU || c.Tier == "Tier-0" && c.Backend == "gpu"
	}
	if !usedGPU {
		t.Errorf("no Tier-0 cell on the gpu backend: %+v", g.Cells)
	}
	// The GPU path says what it measured: the copies of each direction
	// as CUDA's events timed them, at least the bytes Tier-0 moved (a
	// demotion's read is a device-to-host copy too).
	var gp *schema.GPUPath
	for _, p := range g.Host.TierPaths {
		if p.GPU != nil {
			gp = p.GPU
		}
	}
	var t0 schema.TierTotals
	for _, ts := range g.Tiers {
		if ts.Tier == "Tier-0" {
			t0 = ts
		}
	}
	switch {
	case gp == nil:
		t.Errorf("no GPU path in the result: %+v", g.Host.TierPaths)
	case gp.Name != "Fake GPU" || gp.HostToDevice.Bytes < t0.PhysicalWriteBytes || gp.DeviceToHost.Bytes < t0.PhysicalReadBytes ||
		gp.HostToDevice.Copies == 0 || gp.HostToDevice.DeviceS <= 0 || gp.DeviceToHost.CopyGBps <= 0:
		t.Errorf("GPU path %+v; Tier-0 wrote %d and read %d bytes", gp, t0.PhysicalWriteBytes, t0.PhysicalReadBytes)
	}
	for i := range r.Tiers {
		if i >= len(g.Tiers) || g.Tiers[i].ReadBytes != r.Tiers[i].ReadBytes || g.Tiers[i].WriteBytes != r.Tiers[i].WriteBytes {
			t.Fatalf("tiers with Tier-0 on gpu %+v, on ram %+v", g.Tiers, r.Tiers)
		}
	}
}
