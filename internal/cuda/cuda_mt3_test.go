package cuda

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
)

// What the fake runtime's fake_cuda_live counts.
const (
	liveDevice = iota
	liveHost
	liveStreams
	liveEvents
)

// fakeLive returns the count the fake runtime at path keeps of what it
// handed out and has not had back (the same library Load opened: dlopen
// of one path gives one copy).
func fakeLive(t *testing.T, path string) func(what int) int {
	t.Helper()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var live func(int32) int64
	purego.RegisterLibFunc(&live, lib, "fake_cuda_live")
	return func(what int) int { return int(live(int32(what))) }
}

// hostFlags returns the flags of the last cudaHostAlloc the fake runtime
// at path served.
func hostFlags(t *testing.T, path string) uint32 {
	t.Helper()
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	var flags func() uint32
	purego.RegisterLibFunc(&flags, lib, "fake_cuda_host_flags")
	return flags()
}

// TestErrorWords_mt3 pins an Error's text to the call, CUDA's string and
// its code, and a failing Device to the call that failed first
// (cudaSetDevice, for a device that is not there).
func TestErrorWords_mt3(t *testing.T) {
	r, err := Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Device(7)
	var ce *Error
	if !errors.As(err, &ce) || ce.Call != "cudaSetDevice" || err.Error() != "cuda: cudaSetDevice: invalid device ordinal (101)" {
		t.Errorf("Device(7) = %v; want cudaSetDevice's invalid device ordinal (101)", err)
	}
}

// TestDeviceMemory_mt3 pins Device's free and total bytes (cudaMemGetInfo
// fills free first) and that Malloc takes, and Free gives back, exactly
// the bytes asked for; HostAlloc's slice has the length asked for, and
// its memory is of the default kind (not write-combined).
func TestDeviceMemory_mt3(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "1048576")
	path := cudatest.FakeRuntime(t)
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Malloc(12288)
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.Device(0)
	if err != nil || d.TotalBytes != 1<<20 || d.FreeBytes != 1<<20-12288 {
		t.Errorf("Device(0) after a Malloc of 12288 bytes = %+v, %v; want total 1048576, free 1036288", d, err)
	}
	if err := r.Free(p); err != nil {
		t.Fatal(err)
	}
	if d, err := r.Device(0); err != nil || d.FreeBytes != 1<<20 {
		t.Errorf("Device(0) after Free = %+v, %v; want every byte free", d, err)
	}
	h, err := r.HostAlloc(5000)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 5000 {
		t.Errorf("HostAlloc(5000) gave %d bytes", len(h))
	}
	if f := hostFlags(t, path); f != 0 {
		t.Errorf("HostAlloc passed flags %#x; want cudaHostAllocDefault (0), memory the CPU reads at full speed", f)
	}
	r.FreeHost(h)
}

// TestReleased_mt3 pins that FreeHost, DestroyStream and DestroyEvent give
// what they free back to the runtime: the fake counts what is live.
func TestReleased_mt3(t *testing.T) {
	path := cudatest.FakeRuntime(t)
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	live := fakeLive(t, path)
	h, err := r.HostAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	if live(liveHost) != 1 || live(liveStreams) != 1 || live(liveEvents) != 1 {
		t.Fatalf("live after making one of each: host %d, streams %d, events %d", live(liveHost), live(liveStreams), live(liveEvents))
	}
	for _, err := range []error{r.FreeHost(h), r.DestroyStream(s), r.DestroyEvent(e)} {
		if err != nil {
			t.Error(err)
		}
	}
	for what, name := range []string{"device allocations", "pinned host allocations", "streams", "events"} {
		if n := live(what); n != 0 {
			t.Errorf("%d %s live after freeing them", n, name)
		}
	}
}

// TestCopyKinds_mt3 pins the kind CopyAsync passes: a copy whose kind
// does not match its pointers is refused (the fake refuses what CUDA
// leaves undefined), so HostToDevice must reach the runtime as 1 and
// DeviceToHost as 2.
func TestCopyKinds_mt3(t *testing.T) {
	r, err := Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := r.Malloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free(dev)
	host, err := r.HostAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer r.FreeHost(host)
	h := uintptr(unsafe.Pointer(&host[0]))
	for _, c := range []struct {
		name     string
		dst, src uintptr
		kind     int
		ok       bool
	}{
		{"host to device", dev, h, HostToDevice, true},
		{"device to host", h, dev, DeviceToHost, true},
		{"host to device named device to host", dev, h, DeviceToHost, false},
		{"device to host named host to device", h, dev, HostToDevice, false},
	} {
		if err := r.CopyAsync(c.dst, c.src, 4096, c.kind, 0); (err == nil) != c.ok {
			t.Errorf("%s: %v; want success %v", c.name, err, c.ok)
		}
	}
}

// TestElapsedSeconds_mt3 pins Elapsed's unit: seconds, from CUDA's
// milliseconds. Two events recorded 20 ms apart on the host (the fake's
// events hold the host's time at their record) are 0.02 s apart.
func TestElapsedSeconds_mt3(t *testing.T) {
	r, err := Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := r.NewEvent()
	b, _ := r.NewEvent()
	defer r.DestroyEvent(a)
	defer r.DestroyEvent(b)
	if err := r.Record(a, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := r.Record(b, 0); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Elapsed(a, b); err != nil || s < 0.019 || s > 5 {
		t.Errorf("Elapsed over 20 ms = %v s, %v", s, err)
	}
}

// TestCUDA11Symbols_mt3 pins Load's fallback to the plain
// cudaGetDeviceProperties where a runtime has no _v2 (CUDA 11): the fake
// built without its _v2 loads, and names its device from the plain call.
func TestCUDA11Symbols_mt3(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	_, here, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(here), "testdata", "fakecudart.c")
	lib := filepath.Join(t.TempDir(), "libcudart.so")
	if msg, err := exec.Command(cc, "-shared", "-fPIC", "-pthread", "-DFAKE_CUDA11", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, msg)
	}
	r, err := Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := r.Device(0); err != nil || d.Name != "Fake GPU (CUDA 11 layout)" {
		t.Errorf("Device(0) of a CUDA 11 runtime = %+v, %v", d, err)
	}
}

// TestCuFileRegistrations_mt3 pins that DeregisterFile and
// DeregisterBuffer release what they name (libcufile refuses a file or a
// buffer registered twice, 5028 and 5023), and RegisterFile's error names
// the descriptor.
func TestCuFileRegistrations_mt3(t *testing.T) {
	f, err := LoadCuFile(cudatest.FakeCuFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "gds"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	fd := int(file.Fd())
	buf := make([]byte, 4096)
	base := uintptr(unsafe.Pointer(&buf[0]))
	var ce *CuFileError
	for round := range 2 {
		h, err := f.RegisterFile(fd)
		if err != nil {
			t.Fatalf("round %d: RegisterFile: %v", round, err)
		}
		if _, err := f.RegisterFile(fd); !errors.As(err, &ce) || ce.Status != 5028 || !strings.HasPrefix(err.Error(), "fd ") {
			t.Errorf("round %d: RegisterFile twice = %v; want fd ...: status 5028", round, err)
		}
		f.DeregisterFile(h)
		if err := f.RegisterBuffer(base, 4096); err != nil {
			t.Fatalf("round %d: RegisterBuffer: %v", round, err)
		}
		if err := f.RegisterBuffer(base, 4096); !errors.As(err, &ce) || ce.Status != 5023 {
			t.Errorf("round %d: RegisterBuffer twice = %v; want status 5023", round, err)
		}
		if err := f.DeregisterBuffer(base); err != nil {
			t.Errorf("round %d: DeregisterBuffer: %v", round, err)
		}
	}
	if err := f.DeregisterBuffer(base); !errors.As(err, &ce) || ce.Status != 5024 {
		t.Errorf("DeregisterBuffer of no registration = %v; want status 5024", err)
	}
}
