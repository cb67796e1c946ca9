// Package gpu owns the Tier-0 (GPU memory) replay backend: one arena of
// device memory allocated with cudaMalloc on one GPU, the RAM tier's
// placement rules over it (replay/ram.NewArena: objects in pieces, never
// failing from fragmentation), and host-device copies through the CUDA
// runtime that internal/cuda loads at run time. A read copies the object's
// bytes device-to-host, a write host-to-device; both wait for the copy, on
// the I/O engine's goroutines.
//
// It is tested against a fake CUDA runtime (internal/cuda's testdata); it
// has not yet run on a GPU.
package gpu

import (
	"fmt"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ram"
)

// Info describes the device behind a backend, for results.
type Info struct {
	Device  cuda.Device
	Driver  string
	Runtime string
}

// New allocates capacity bytes (rounded up to ram.Align) of device
// memory on GPU device of rt and returns the backend over it.
func New(rt *cuda.Runtime, device int, capacity int64) (backend.Backend, Info, error) {
	var info Info
	if capacity <= 0 {
		return nil, info, fmt.Errorf("gpu: capacity %d: must be positive", capacity)
	}
	d, err := rt.Device(device)
	if err != nil {
		return nil, info, fmt.Errorf("gpu: device %d: %w", device, err)
	}
	info.Device = d
	if drv, run, err := rt.Versions(); err == nil {
		info.Driver, info.Runtime = cuda.VersionString(drv), cuda.VersionString(run)
	}
	size := (capacity + ram.Align - 1) / ram.Align * ram.Align
	if uint64(size) > d.FreeBytes {
		return nil, info, fmt.Errorf("gpu: device %d (%s) has %d bytes free and the tier needs %d: use --size-scale, or a smaller trace",
			device, d.Name, d.FreeBytes, size)
	}
	base, err := rt.Malloc(uint64(size))
	if err != nil {
		return nil, info, fmt.Errorf("gpu: device %d: an arena of %d bytes: %w", device, size, err)
	}
	return ram.NewArena("gpu", size, &deviceMemory{rt: rt, base: base}), info, nil
}

// deviceMemory is an arena of device memory.
type deviceMemory struct {
	rt   *cuda.Runtime
	base uintptr
}

func (m *deviceMemory) Copy(p []byte, off int64, write bool) error {
	if write {
		return m.rt.CopyToDevice(m.base+uintptr(off), p)
	}
	return m.rt.CopyToHost(p, m.base+uintptr(off))
}

func (m *deviceMemory) Release() error { return m.rt.Free(m.base) }
