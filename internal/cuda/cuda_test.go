package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/kvbench/kvbench/internal/cuda/cudatest"
)

// TestLoadFake loads the fake runtime, binds every call and drives them:
// devices, versions, device and pinned memory, copies both ways, and
// CUDA's own error strings.
func TestLoadFake(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "1048576")
	r, err := Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.DeviceCount(); err != nil || n != 2 {
		t.Fatalf("DeviceCount = %d, %v", n, err)
	}
	d, err := r.Device(1)
	// "Fake GPU" is the fake's cudaGetDeviceProperties_v2, the symbol
	// CUDA 12's header binds; its plain one says "CUDA 11 layout".
	if err != nil || d.Name != "Fake GPU" || d.TotalBytes != 1<<20 || d.PCIBusID != "00000000:18:00" {
		t.Fatalf("Device(1) = %+v, %v", d, err)
	}
	if drv, rt, err := r.Versions(); err != nil || VersionString(drv) != "12.4" || VersionString(rt) != "12.2" {
		t.Errorf("Versions = %d, %d, %v", drv, rt, err)
	}
	var ce *Error
	if _, err := r.Device(5); !errors.As(err, &ce) || ce.Code != 101 || !strings.Contains(err.Error(), "invalid device ordinal") {
		t.Errorf("Device(5): %v", err)
	}
	p, err := r.Malloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Malloc(2 << 20); !errors.As(err, &ce) || ce.Text != "out of memory" {
		t.Errorf("Malloc past the device's memory: %v", err)
	}
	host, err := r.HostAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	for i := range host {
		host[i] = byte(i * 7)
	}
	back, err := r.HostAlloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
	if err := r.CopyAsync(p, addr(host), 4096, HostToDevice, s); err != nil {
		t.Fatal(err)
	}
	if err := r.CopyAsync(addr(back), p, 4096, DeviceToHost, s); err != nil {
		t.Fatal(err)
	}
	if err := r.SyncStream(s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, host) {
		t.Errorf("the bytes copied back differ")
	}
	if err := r.DestroyStream(s); err != nil {
		t.Error(err)
	}
	// Events time copies: created with timing, so they can be.
	e1, err := r.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	e2, err := r.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Record(e1, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Record(e2, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(e2); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Elapsed(e1, e2); err != nil || s < 0 {
		t.Errorf("Elapsed = %v, %v", s, err)
	}
	r.DestroyEvent(e1)
	r.DestroyEvent(e2)
	// A mark has no timing, and Done tells when the work before it is
	// done: not while it runs (cudaErrorNotReady), then done; a failed
	// query is CUDA's error.
	m, err := r.NewMark()
	if err != nil {
		t.Fatal(err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_NOT_READY", "2")
	if err := r.Record(m, 0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true} {
		if done, err := r.Done(m); done != want || err != nil {
			t.Errorf("Done, query %d = %v, %v; want %v", i+1, done, err, want)
		}
	}
	if _, err := r.Elapsed(m, m); err == nil {
		t.Errorf("Elapsed of a mark: no error; a mark keeps no time")
	}
	cudatest.Setenv(t, "FAKE_CUDA_QUERY_FAIL", "1")
	if done, err := r.Done(m); done || !errors.As(err, &ce) || ce.Call != "cudaEventQuery" {
		t.Errorf("Done with the query failing = %v, %v", done, err)
	}
	r.DestroyEvent(m)
	// Pinning host memory: portable, once; an overlapping range is refused
	// as CUDA refuses it (cudaErrorHostMemoryAlreadyRegistered).
	region := make([]byte, 8192)
	if err := r.HostRegister(addr(region), 8192); err != nil {
		t.Fatal(err)
	}
	if err := r.HostRegister(addr(region)+4096, 4096); !errors.As(err, &ce) || ce.Code != 712 {
		t.Errorf("HostRegister of a registered range: %v; want code 712", err)
	}
	if err := r.HostUnregister(addr(region)); err != nil {
		t.Error(err)
	}
	if err := r.HostUnregister(addr(region)); !errors.As(err, &ce) || ce.Code != 713 {
		t.Errorf("HostUnregister twice: %v; want code 713", err)
	}
	if err := r.FreeHost(back); err != nil {
		t.Error(err)
	}
	if err := r.FreeHost(host); err != nil {
		t.Error(err)
	}
	if err := r.Free(p); err != nil {
		t.Error(err)
	}
}

// TestLoadMissing names every library it tried and wraps ErrNoRuntime.
func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "libcudart.so"), "libnothere.so.9")
	if !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), "libnothere.so.9") {
		t.Errorf("Load of missing libraries: %v", err)
	}
	// A library without the calls is refused too, naming the call.
	if _, err := Load("libc.so.6"); !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), "cudaGetErrorString") {
		t.Errorf("Load of libc: %v", err)
	}
}

// TestABIValues holds the enum and flag values kvbench passes to the
// values of CUDA's driver_types.h.
func TestABIValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"cudaMemcpyHostToDevice", HostToDevice, 1},
		{"cudaMemcpyDeviceToHost", DeviceToHost, 2},
		{"cudaDevAttrPciBusId", attrPCIBusID, 33},
		{"cudaDevAttrPciDeviceId", attrPCIDeviceID, 34},
		{"cudaDevAttrPciDomainId", attrPCIDomainID, 50},
		{"cudaStreamNonBlocking", streamNonBlocking, 1},
		{"cudaEventBlockingSync", eventBlockingSync, 1},
		{"cudaEventDisableTiming", eventDisableTiming, 2},
		{"cudaErrorNotReady", errNotReady, 600},
		{"cudaHostRegisterPortable", hostRegisterPortable, 1},
	} {
		if c.got != c.want {
			t.Errorf("%s is %d here; driver_types.h has %d", c.name, c.got, c.want)
		}
	}
	if VersionString(12040) != "12.4" || VersionString(11080) != "11.8" || VersionString(13000) != "13.0" {
		t.Errorf("VersionString does not read 1000 x major + 10 x minor")
	}
}

// TestCUDADirs finds a runtime that only a toolkit's directory holds.
func TestCUDADirs(t *testing.T) {
	home := t.TempDir()
	lib := filepath.Join(home, "lib64")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := cudatest.FakeRuntime(t)
	b, err := os.ReadFile(fake)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "libcudart.so.99"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CUDA_HOME", home)
	got := candidates([]string{"libcudart.so.99"})
	if len(got) < 2 || got[0] != "libcudart.so.99" || got[1] != filepath.Join(lib, "libcudart.so.99") {
		t.Fatalf("candidates = %q", got)
	}
	r, err := loadFirst(nil, got, ErrNoRuntime, load)
	if err != nil || r.Path != got[1] {
		t.Errorf("loaded %v, %v; want %s", r, err, got[1])
	}
}
