package main

import (
	"bytes"
	"errors"
	"fmt"
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
	t.Parallel()
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
	t.Parallel()
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
			"--speed", "max", "--verify", "--mkdir", "--dir", dir, "-q", "-o", filepath.Join(dir, out), tr)
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
	gp := gpuPath(g)
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
		gp.HostToDevice.Copies == 0 || gp.HostToDevice.BusyS <= 0 || gp.DeviceToHost.BusyGBps <= 0:
		t.Errorf("GPU path %+v; Tier-0 wrote %d and read %d bytes", gp, t0.PhysicalWriteBytes, t0.PhysicalReadBytes)
	}
	for i := range r.Tiers {
		if i >= len(g.Tiers) || g.Tiers[i].ReadBytes != r.Tiers[i].ReadBytes || g.Tiers[i].WriteBytes != r.Tiers[i].WriteBytes {
			t.Fatalf("tiers with Tier-0 on gpu %+v, on ram %+v", g.Tiers, r.Tiers)
		}
	}
}

// TestGDSFake replays demotions from the gpu tier to NVMe and promotions
// back with --gds over the fake CUDA runtime and fake libcufile: the moves
// go by cuFileWrite and cuFileRead between the (fake) device arena and the
// object files, every byte read after them verifies, and the result says
// what moved which way. Without libcufile, --gds stops the run before any
// I/O, naming what is missing.
func TestGDSFake(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	libs := filepath.Dir(cudatest.FakeRuntime(t)) + ":" + filepath.Dir(cudatest.FakeCuFile(t))
	dir := t.TempDir()
	const keys, size = 8, 1 << 20
	tr := movesTrace(t, dir, "Tier-2", keys, size)
	blocks := int64(keys * size / (256 << 10))
	for _, c := range []struct {
		layout string
		// promotions: blocks read from files into the GPU. The dir
		// layout's objects are not kept open between rows, and a
		// promotion's source must be open for the mover to take it: it
		// goes through host memory.
		promotions int64
	}{{"extent", blocks}, {"dir", 0}} {
		t.Run(c.layout, func(t *testing.T) {
			data := filepath.Join(dir, c.layout)
			if err := os.Mkdir(data, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, c.layout+".json")
			args := []string{"--tier-map", "Tier-0=gpu,Tier-2=nvme", "--gds", "--verify", "--speed", "max", "--block-size", "256KiB",
				"--layout", c.layout, "--mkdir", "--dir", data, "-q", "-o", out, tr}
			res := replayVerified(t, kvreplay, libs, out, keys*4*size, args...)
			var g *schema.GDSPath
			if gp := gpuPath(res); gp != nil {
				g = gp.GDS
			}
			switch {
			case g == nil:
				t.Fatalf("no GDS path in the result: %+v", res.Host.TierPaths)
			case g.ToFile.Blocks != blocks || g.ToFile.Bytes != keys*size || g.FromFile.Blocks != c.promotions:
				t.Errorf("GDS moved %+v to files and %+v from them; want %d and %d blocks of %d bytes", g.ToFile, g.FromFile, blocks, c.promotions, 256<<10)
			case g.BufferRegistration != "registered" || !strings.Contains(g.Library, "libcufile.so 1.14") || g.ToFile.CallGBps <= 0:
				t.Errorf("GDS path %+v", g)
			}

			// No libcufile: the run stops before any I/O, naming what is
			// missing.
			os.RemoveAll(data)
			os.Mkdir(data, 0o755)
			cmd := exec.Command(kvreplay, args...)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(cudatest.FakeRuntime(t)))
			b, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(b), "--gds") || !strings.Contains(string(b), "libcufile") {
				t.Errorf("kvreplay --gds without libcufile: %v\n%s", err, b)
			}
			if left, _ := os.ReadDir(data); len(left) != 0 {
				t.Errorf("the refused run left %d entries in --dir", len(left))
			}
		})
	}
}

// TestGDSProbeRefused: where cuFile refuses to register the files of the
// NVMe tier's file system (libcufile 1.15 on a machine without udev), the
// run stops before any I/O, exit 2, naming cuFile's refusal, cufile.log
// and how to go on, and leaves nothing in --dir.
func TestGDSProbeRefused(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	libs := filepath.Dir(cudatest.FakeRuntime(t)) + ":" + filepath.Dir(cudatest.FakeCuFile(t))
	dir := t.TempDir()
	tr := movesTrace(t, dir, "Tier-2", 2, 1<<20)
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kvreplay, "--tier-map", "Tier-0=gpu,Tier-2=nvme", "--gds", "--speed", "max", "--layout", "extent",
		"--dir", data, "-q", "-o", filepath.Join(dir, "r.json"), tr)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libs, "FAKE_CUFILE_FAIL_REGISTER=1")
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("kvreplay --gds with cuFile refusing files: %v, want exit 2\n%s", err, b)
	}
	for _, want := range []string{"cuFile refuses the files in", "CU_FILE_HANDLE_NOT_REGISTERED", "cufile.log", "drop --gds"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, b)
		}
	}
	if left, _ := os.ReadDir(data); len(left) != 0 {
		t.Errorf("the refused run left %d entries in --dir", len(left))
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); err == nil {
		t.Errorf("the refused run wrote a result")
	}
}

// TestGPURAMMovesFake: objects moved between the gpu tier and the RAM
// tier are copied straight between device memory and the RAM arena
// (pinned), over the fake runtime: a demotion to RAM is one more
// device-to-host copy (beside its Evict read's), a promotion one
// host-to-device copy, and every byte read after them verifies.
func TestGPURAMMovesFake(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	lib := filepath.Dir(cudatest.FakeRuntime(t))
	dir := t.TempDir()
	const keys, size = 8, 1 << 20
	tr := movesTrace(t, dir, "Tier-1", keys, size)
	out := filepath.Join(dir, "r.json")
	res := replayVerified(t, kvreplay, lib, out, keys*4*size, "--tier-map", "Tier-0=gpu,Tier-1=ram", "--verify", "--speed", "max",
		"--block-size", "256KiB", "-q", "-o", out, tr)
	g := gpuPath(res)
	// Host to device: the Prefill writes and the promotions; device to
	// host: the two reads on Tier-0 and the demotions.
	if g == nil || g.RAMArena != "pinned" || g.HostToDevice.Bytes != 2*keys*size || g.DeviceToHost.Bytes != 3*keys*size {
		t.Errorf("GPU path %+v; want the RAM arena pinned, %d bytes to the device and %d from it", g, 2*keys*size, 3*keys*size)
	}
}

// TestGPUNVMeMovesFake: without --gds, objects demoted from the gpu tier
// to NVMe and promoted back go through host memory, the gpu tier's blocks
// served by devcopy's pinned buffers; the moves are not devcopy's (it
// moves only between the gpu tier and RAM), and every byte verifies. The
// result names the engine of the files, not devcopy.
func TestGPUNVMeMovesFake(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	lib := filepath.Dir(cudatest.FakeRuntime(t))
	dir := t.TempDir()
	const keys, size = 8, 1 << 20
	tr := movesTrace(t, dir, "Tier-2", keys, size)
	out := filepath.Join(dir, "r.json")
	data := filepath.Join(dir, "data")
	res := replayVerified(t, kvreplay, lib, out, keys*4*size, "--tier-map", "Tier-0=gpu,Tier-2=nvme", "--verify", "--speed", "max",
		"--block-size", "256KiB", "--layout", "extent", "--mkdir", "--dir", data, "-q", "-o", out, tr)
	g := gpuPath(res)
	// Host to device: the Prefill writes and the promotions; device to
	// host: the two reads on Tier-0.
	if g == nil || g.HostToDevice.Bytes != 2*keys*size || g.DeviceToHost.Bytes != 2*keys*size {
		t.Errorf("GPU path %+v; want %d bytes each way", g, 2*keys*size)
	}
	if res.Replay.Engine == "devcopy" {
		t.Errorf("the result names devcopy as the engine of the files")
	}
}

// TestGPUOnlyEngineFake: a replay whose every tier is the gpu tier names
// devcopy, the engine that moved its blocks, as its engine, not the
// files' engine it never used.
func TestGPUOnlyEngineFake(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	lib := filepath.Dir(cudatest.FakeRuntime(t))
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 4 {
		fmt.Fprintf(&b, "0.0,Write,1048576,Tier-0,k%d,Prefill\n0.0,Read,1048576,Tier-0,k%d,Decode\n", i, i)
	}
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	res := replayVerified(t, kvreplay, lib, out, 4<<20, "--tier-map", "Tier-0=gpu", "--verify", "--speed", "max", "-q", "-o", out, tr)
	if res.Replay.Engine != "devcopy" {
		t.Errorf("engine %q; want devcopy", res.Replay.Engine)
	}
}

// movesTrace writes a trace of keys objects of size bytes, each written
// on Tier-0, demoted to tier, read there, promoted back and read again,
// and returns its path.
// replayVerified runs kvreplay with args, its libraries from libs, and
// fails t unless the result at out is complete, without errors, and
// verified exactly verified bytes.
func replayVerified(t *testing.T, kvreplay, libs, out string, verified int64, args ...string) *schema.Result {
	t.Helper()
	cmd := exec.Command(kvreplay, args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libs)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kvreplay %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	res := readResult(t, out)
	if !res.Complete || res.Errors.Count != 0 || res.Replay.VerifiedBytes != verified {
		t.Fatalf("complete %v, %d errors, verified %d bytes (want %d)", res.Complete, res.Errors.Count, res.Replay.VerifiedBytes, verified)
	}
	return res
}

func movesTrace(t *testing.T, dir, tier string, keys, size int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range keys {
		for _, r := range []string{"Write,Tier-0,Prefill", "Read,Tier-0,Evict", "Write,T,Evict", "Read,T,Decode",
			"Read,T,Evict", "Write,Tier-0,Evict", "Read,Tier-0,Decode"} {
			f := strings.Split(strings.Replace(r, ",T,", ","+tier+",", 1), ",")
			fmt.Fprintf(&b, "0.0,%s,%d,%s,k%d,%s\n", f[0], size, f[1], i, f[2])
		}
	}
	tr := filepath.Join(dir, "moves.csv")
	if err := os.WriteFile(tr, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

// gpuPath is the result's GPU tier path, nil when it has none.
func gpuPath(res *schema.Result) *schema.GPUPath {
	var g *schema.GPUPath
	for _, p := range res.Host.TierPaths {
		if p.GPU != nil {
			g = p.GPU
		}
	}
	return g
}
