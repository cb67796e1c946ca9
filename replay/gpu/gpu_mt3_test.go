package gpu

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/schema"
)

// liveRuntime loads the fake CUDA runtime with mem bytes per device, and
// returns what its fake_cuda_live counts: 0 device allocations, 1 pinned
// host allocations, 2 streams, 3 events, handed out and not yet back.
func liveRuntime(t *testing.T, mem string) (*cuda.Runtime, func(what int) int) {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", mem)
	rt, lib := fakeLib(t)
	var live func(int32) int64
	purego.RegisterLibFunc(&live, lib, "fake_cuda_live")
	return rt, func(what int) int { return int(live(int32(what))) }
}

// fakeLib builds and loads the fake CUDA runtime, as the environment set
// before it says, and returns it with the library's handle, for the
// fake's own calls (its counts).
func fakeLib(t *testing.T) (*cuda.Runtime, uintptr) {
	t.Helper()
	path := cudatest.FakeRuntime(t)
	rt, err := cuda.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	return rt, lib
}

// TestOptionsRefused_mt3 pins New's refusals: no capacity, staging of no
// bytes; and an arena that needs exactly the device's free bytes fits.
func TestOptionsRefused_mt3(t *testing.T) {
	rt := fakeRuntime(t, "1048576")
	for _, c := range []struct {
		name string
		opt  Options
		want string // "" for success
	}{
		{"zero capacity", Options{Capacity: 0, Slots: 1, StageBytes: 4096}, "capacity 0: must be positive"},
		{"no staging bytes", Options{Capacity: 4096, Slots: 1, StageBytes: 0}, "1 staging slots of 0 bytes"},
		{"one byte past the device", Options{Capacity: 1<<20 + 1, Slots: 1, StageBytes: 4096}, "has 1048576 bytes free and the tier needs 1052672: use --size-scale"},
		{"exactly the device", Options{Capacity: 1 << 20, Slots: 1, StageBytes: 4096}, ""},
	} {
		b, _, err := New(rt, c.opt)
		if err == nil {
			b.Close()
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: New = %v; want %q", c.name, err, c.want)
		}
	}
}

// TestArenaRounded_mt3 pins the arena's size: the capacity rounded up to
// arena.Align, all of it usable by objects and reported by ArenaOf, and
// taken from the device's memory.
func TestArenaRounded_mt3(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 3*arena.Align - 100, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a, ok := ArenaOf(b.mem); !ok || a.Size != 3*arena.Align {
		t.Errorf("ArenaOf = %+v, %v; want %d bytes", a, ok, 3*arena.Align)
	}
	if d, err := rt.Device(0); err != nil || d.FreeBytes != 268435456-3*arena.Align {
		t.Errorf("device after New: %+v, %v; want %d bytes taken", d, err, 3*arena.Align)
	}
	o, err := b.Open("all", 3*arena.Align, true)
	if err != nil {
		t.Fatalf("an object of the whole rounded arena: %v", err)
	}
	o.Close()
}

// TestReleaseFreesAll_mt3 pins Close's cleanup: after copies through
// every slot, the arena, the staging buffers, the events and the streams
// are all given back to CUDA; and a slot keeps its staging buffer for
// its next copy.
func TestReleaseFreesAll_mt3(t *testing.T) {
	rt, live := liveRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 2, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	// An untimed event a slot, and two pairs of timed ones a stream.
	if live(0) != 1 || live(2) != 2 || live(3) != 2+2*4 {
		t.Errorf("after New: %d device allocations, %d streams, %d events; want 1, 2, 10", live(0), live(2), live(3))
	}
	o, err := b.Open("k", 16384, true)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := o.WriteAt(make([]byte, 16384), 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := live(1); n < 1 || n > 2 {
		t.Errorf("%d staging buffers after three writes through two slots; want one a slot at most, reused", n)
	}
	o.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for what, name := range []string{"device allocations", "pinned host allocations", "streams", "events"} {
		if n := live(what); n != 0 {
			t.Errorf("%d %s live after Close", n, name)
		}
	}
}

// TestCount_mt3 pins what count adds: a stretch's copies and bytes to
// its own direction, and its time to the direction's.
func TestCount_mt3(t *testing.T) {
	m := &deviceMemory{}
	m.count(true, 1, 100, 0.25)
	m.count(true, 2, 50, 0.5)
	m.count(false, 1, 7, 1)
	c := m.copies()
	if c.H2D != (Direction{Copies: 3, Bytes: 150, BusyS: 0.75}) || c.D2H != (Direction{Copies: 1, Bytes: 7, BusyS: 1}) {
		t.Errorf("copies = %+v", c)
	}
	if m.copied.Load() != 4 {
		t.Errorf("copied = %d, want 4", m.copied.Load())
	}
}

// TestGBps_mt3 pins a direction's rate: bytes over busy seconds in
// 10^9 bytes a second, and 0 (not NaN or Inf) before any busy time.
func TestGBps_mt3(t *testing.T) {
	for _, c := range []struct {
		d    Direction
		want float64
	}{
		{Direction{Bytes: 3e9, BusyS: 1.5}, 2},
		{Direction{}, 0},
		{Direction{Bytes: 10}, 0},
	} {
		if got := c.d.GBps(); got != c.want || math.IsNaN(got) {
			t.Errorf("%+v.GBps() = %v, want %v", c.d, got, c.want)
		}
	}
}

// TestDescribeDirections_mt3 pins that Describe puts each direction's
// copies where the result names it.
func TestDescribeDirections_mt3(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	want := bytes.Repeat([]byte{3}, 8192)
	if _, err := o.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	if _, err := o.ReadAt(got, 4096); err != nil || !bytes.Equal(got, want[4096:]) {
		t.Fatalf("read back: %v", err)
	}
	var pi schema.PathInfo
	b.Describe(&pi)
	if h, d := pi.GPU.HostToDevice, pi.GPU.DeviceToHost; h.Copies != 2 || h.Bytes != 8192 || d.Copies != 1 || d.Bytes != 4096 || h.BusyGBps <= 0 || d.BusyGBps <= 0 {
		t.Errorf("Describe: host-to-device %+v, device-to-host %+v; want 2 copies of 8192 bytes and 1 of 4096, with rates", h, d)
	}
}

// TestPCIeLinkHalf_mt3 pins that a link is told only where sysfs gives
// both its speed and its width.
func TestPCIeLinkHalf_mt3(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "0000:17:00.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "current_link_speed"), []byte("16.0 GT/s PCIe\n"), 0o644)
	if got := pcieLink(root, "00000000:17:00"); got != "" {
		t.Errorf("pcieLink without a width = %q, want \"\"", got)
	}
}

// TestReleaseFreesAllWhenSetDeviceFails: a Close whose cudaSetDevice
// fails still gives back the arena, the staging buffers, the streams and
// the events, and says why it failed: it gave up at the first failure,
// and left them all to the process's end.
func TestReleaseFreesAllWhenSetDeviceFails(t *testing.T) {
	rt, live := liveRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 2, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	o.Close()
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "0") // cudaSetDevice fails from here on
	if err := b.Close(); err == nil || !strings.Contains(err.Error(), "cudaSetDevice") {
		t.Errorf("Close with cudaSetDevice failing: %v; want its error", err)
	}
	for what, name := range []string{"device allocations", "pinned host allocations", "streams", "events"} {
		if n := live(what); n != 0 {
			t.Errorf("%d %s live after a Close whose cudaSetDevice failed", n, name)
		}
	}
}
