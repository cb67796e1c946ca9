package setup

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/ioengine/gds"
	"github.com/kvbench/kvbench/schema"
)

// cudaHome makes a CUDA toolkit's lib64 of the fake libraries and points
// CUDA_HOME at it, so that cuda.Load and cuda.LoadCuFile find them as
// they would a real toolkit's. It returns libcufile's path.
func cudaHome(t *testing.T) string {
	t.Helper()
	if _, err := cuda.Load(); err == nil {
		t.Skip("a CUDA runtime loads here: the test needs the fakes found")
	}
	home := t.TempDir()
	lib := filepath.Join(home, "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, name := range map[string]string{cudatest.FakeRuntime(t): "libcudart.so", cudatest.FakeCuFile(t): "libcufile.so.0"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lib, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CUDA_HOME", home)
	t.Setenv("CUDA_PATH", "")
	return filepath.Join(lib, "libcufile.so.0")
}

// TestParseGPUsBounds_mt3 pins --gpus's bounds: a negative index is
// refused, the last device is taken.
func TestParseGPUsBounds_mt3(t *testing.T) {
	if _, err := parseGPUs("-1", 2); err == nil || !strings.Contains(err.Error(), `"-1" is not one of the 2 GPUs here`) {
		t.Errorf("parseGPUs(-1) = %v", err)
	}
	if ids, err := parseGPUs("1", 2); err != nil || !slices.Equal(ids, []int{1}) {
		t.Errorf("parseGPUs(1) = %v, %v", ids, err)
	}
}

// TestGDSNeedsBothTiers_mt3 pins that --gds needs a gpu tier and an nvme
// tier: either alone is refused.
func TestGDSNeedsBothTiers_mt3(t *testing.T) {
	for _, m := range [][schema.NumTiers]string{{"gpu", "ram", ""}, {"", "ram", "nvme"}} {
		cfg := replay.DefaultConfig()
		cfg.TierMap = m
		if err := (&Env{}).OpenGDS(&cfg); err == nil || !strings.Contains(err.Error(), "map one tier to gpu and one to nvme") {
			t.Errorf("--gds with tiers %q: %v", m, err)
		}
	}
}

// TestCheckGPU_mt3 pins checkGPU over a toolkit's runtime: it keeps the
// runtime for the gpu tier, and a runtime that reports no device is
// refused, naming the tier's RAM mapping.
func TestCheckGPU_mt3(t *testing.T) {
	cudaHome(t)
	var e Env
	if err := checkGPU(&e, "Tier-0"); err != nil || e.cuda == nil {
		t.Fatalf("checkGPU = %v, runtime kept %v", err, e.cuda != nil)
	}
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "0")
	err := checkGPU(&Env{}, "Tier-0")
	if err == nil || !strings.Contains(err.Error(), "the CUDA runtime reports no GPU") || !strings.Contains(err.Error(), "--tier-map Tier-0=ram") {
		t.Errorf("checkGPU with no device: %v", err)
	}
}

// TestCheckGPUNoRuntime_mt3 pins the words of a machine without a CUDA
// runtime.
func TestCheckGPUNoRuntime_mt3(t *testing.T) {
	if _, err := cuda.Load(); err == nil {
		t.Skip("a CUDA runtime loads here")
	}
	t.Setenv("CUDA_HOME", t.TempDir())
	t.Setenv("CUDA_PATH", "")
	err := checkGPU(&Env{}, "Tier-0")
	if err == nil || !strings.Contains(err.Error(), "--tier-map Tier-0=gpu: no CUDA runtime here (libcudart)") {
		t.Errorf("checkGPU without a runtime: %v", err)
	}
}

// TestListDevicesToolkit_mt3 pins --list-devices over a toolkit's fake
// libraries: every device is listed, and libcufile with its version and
// an opening driver, which it closes again.
func TestListDevicesToolkit_mt3(t *testing.T) {
	cufile := cudaHome(t)
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	var out bytes.Buffer
	if err := ListDevices(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"GPU 0: Fake GPU", "GPU 1: Fake GPU", "cuFile (GPUDirect Storage): " + cufile + " 1.14, driver opens"} {
		if !strings.Contains(s, want) {
			t.Errorf("ListDevices does not say %q:\n%s", want, s)
		}
	}
	if _, err := os.Stat("/sys/bus/pci/devices/0000:17:00.0"); os.IsNotExist(err) && !strings.Contains(s, "PCI 00000000:17:00, link not in sysfs") {
		t.Errorf("ListDevices does not say the link is not in sysfs:\n%s", s)
	}
	// The driver ListDevices opened is closed: a file cannot be
	// registered until it opens again.
	f, err := cuda.LoadCuFile(cufile)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := f.RegisterFile(int(os.Stdin.Fd())); err == nil {
		f.DeregisterFile(h)
		t.Errorf("libcufile's driver still open after ListDevices")
	}
}

// TestOpenGDSAndPath_mt3 pins --gds's setup over a toolkit's fake
// libcufile: the driver opens and is kept; one that does not open stops
// the run; and the result's GDS path names the library with its version
// and gives each direction its own blocks, bytes and rate (GB/s, 0
// without time).
func TestOpenGDSAndPath_mt3(t *testing.T) {
	cufile := cudaHome(t)
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"gpu", "ram", "nvme"}
	var e Env
	if err := e.OpenGDS(&cfg); err != nil || e.cufile == nil {
		t.Fatalf("OpenGDS = %v, kept %v", err, e.cufile != nil)
	}
	defer e.Close()
	p := gdsPath(e.cufile, gds.Stats{
		ToFile:             gds.Direction{Blocks: 3, Bytes: 3e9, Seconds: 1.5},
		FromFile:           gds.Direction{Blocks: 1, Bytes: 4096},
		BufferRegistration: "registered",
	})
	if p.Library != cufile+" 1.14" || p.BufferRegistration != "registered" ||
		p.ToFile.Blocks != 3 || p.ToFile.Bytes != 3e9 || p.ToFile.CallS != 1.5 || p.ToFile.CallGBps != 2 ||
		p.FromFile.Blocks != 1 || p.FromFile.Bytes != 4096 || p.FromFile.CallGBps != 0 {
		t.Errorf("gdsPath = %+v", p)
	}
	if gdsPath(nil, gds.Stats{}) != nil {
		t.Errorf("gdsPath without --gds is not nil")
	}
	cudatest.Setenv(t, "FAKE_CUFILE_FAIL_OPEN", "1")
	if err := (&Env{}).OpenGDS(&cfg); err == nil || !strings.Contains(err.Error(), "loads, but its driver does not open") || !strings.Contains(err.Error(), "CU_FILE_DRIVER_NOT_INITIALIZED") {
		t.Errorf("OpenGDS with the driver failing: %v", err)
	}
}

// TestBuildGPU_mt3 pins the gpu tier Build makes: on the device of
// --gpus at the rank's local rank, an arena of the plan's peak (at least
// 1 MiB), and a staging slot per I/O in flight of a block each.
func TestBuildGPU_mt3(t *testing.T) {
	cudaHome(t)
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	for _, c := range []struct {
		name      string
		peak      int64
		gpus      string
		rank      int
		bus       string
		capacity  int64
		depth     int
		blockSize int64
	}{
		{"small peak, rank 1 of all", 4096, "", 1, "00000000:18:00", 1 << 20, 4, 64 << 10},
		{"rank 3 of one listed", 5 << 20, "1", 3, "00000000:18:00", 5 << 20, 2, 128 << 10},
		{"rank 3 of two listed", 3 << 20, "1,0", 3, "00000000:17:00", 3 << 20, 8, 256 << 10},
	} {
		var env Env
		cfg := replay.DefaultConfig()
		if err := env.MapTier(&cfg, schema.TierGPU, "Tier-0", "gpu"); err != nil {
			t.Fatal(err)
		}
		cfg.QueueDepth, cfg.BlockSize = c.depth, c.blockSize
		plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"gpu": c.peak}}
		plan.Used[schema.TierGPU] = true
		tiers, err := Build(context.Background(), &env, &cfg, plan, Options{GPUs: c.gpus, LocalRank: c.rank})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var res schema.Result
		tiers.Describe(&res)
		caps := tiers.Backends["gpu"].Caps()
		var g *schema.GPUPath
		for _, p := range res.Host.TierPaths {
			if p.GPU != nil {
				g = p.GPU
			}
		}
		want := fmt.Sprintf("up to %d pinned staging buffers of %d KiB", c.depth, c.blockSize>>10)
		if caps.Capacity != c.capacity || g == nil || g.PCIBusID != c.bus || !strings.Contains(g.Copies, want) {
			t.Errorf("%s: capacity %d, GPU %+v; want %d bytes on %s, %q", c.name, caps.Capacity, g, c.capacity, c.bus, want)
		}
		tiers.Close()
	}
}

// TestGPUArenaHoldsTheLoopsReach: a closed loop's gpu arena holds what the
// loop can keep live (Plan.Reach), within replay.FitShare of the device's
// free memory, as the RAM tier's arena does; an open loop's holds the
// trace's peak. The gpu arena took the peak alone, and a closed loop whose
// users ran ahead evicted objects it still read.
func TestGPUArenaHoldsTheLoopsReach(t *testing.T) {
	plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"gpu": 8 << 20}, Reach: map[string]int64{"gpu": 64 << 20}}
	for _, c := range []struct {
		closed bool
		free   int64
		want   int64
	}{
		{false, 1 << 30, 8 << 20},
		{true, 1 << 30, 64 << 20},
		{true, 32 << 20, 16 << 20}, // FitShare of 32 MiB
		{true, 8 << 20, 8 << 20},   // never below the peak
	} {
		cfg := replay.DefaultConfig()
		cfg.ClosedLoop = c.closed
		if got := gpuArena(&cfg, plan, c.free); got != c.want {
			t.Errorf("closed loop %v, %d bytes free: arena %d, want %d", c.closed, c.free, got, c.want)
		}
	}
}
