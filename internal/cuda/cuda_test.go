package cuda

import (
	"bytes"
	"errors"
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
	t.Setenv("FAKE_CUDA_DEVICES", "2")
	t.Setenv("FAKE_CUDA_MEM", "1048576")
	r, err := Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.DeviceCount(); err != nil || n != 2 {
		t.Fatalf("DeviceCount = %d, %v", n, err)
	}
	d, err := r.Device(1)
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
