package cuda

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tests of this file run against the machine's own CUDA runtime and
// libcufile, never a fake: KVBENCH_GPU=1 runs them (bench/gpu-check.sh
// sets it), and they fail, not skip, where that finds no GPU. The cuFile
// test needs KVBENCH_GDS_DIR too, a directory on the NVMe device to move
// a file through.

// realRuntime loads the machine's CUDA runtime, or skips without
// KVBENCH_GPU.
func realRuntime(t *testing.T) *Runtime {
	t.Helper()
	if os.Getenv("KVBENCH_GPU") == "" {
		t.Skip("KVBENCH_GPU=1 runs the tests against this machine's CUDA runtime")
	}
	r, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := r.DeviceCount(); err != nil || n < 1 {
		t.Fatalf("%s: %d devices, %v", r.Path, n, err)
	}
	return r
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestRealRuntime drives every bound call on device 0: its description,
// the versions, device and pinned allocations, copies both ways (from
// cudaHostAlloc's memory and from mmap'd memory pinned with
// cudaHostRegister) checked byte for byte, events timing them, and CUDA's
// own error for an allocation past the device's memory. It logs a plain
// copy loop's rate each way: the figure the GPU tier's copies compare
// with.
func TestRealRuntime(t *testing.T) {
	r := realRuntime(t)
	drv, rt, err := r.Versions()
	must(t, err)
	d, err := r.Device(0)
	must(t, err)
	t.Logf("%s: runtime %s, driver %s; GPU 0 %q, %d bytes (%d free), PCI %s",
		r.Path, VersionString(rt), VersionString(drv), d.Name, d.TotalBytes, d.FreeBytes, d.PCIBusID)
	if d.Name == "" || d.TotalBytes == 0 || d.FreeBytes > d.TotalBytes || rt < 11000 || drv < rt/1000*1000 {
		t.Errorf("device %+v, runtime %d, driver %d: not what a GPU reports", d, rt, drv)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}:[0-9a-f]{2}:[0-9a-f]{2}$`).MatchString(d.PCIBusID) {
		t.Errorf("PCI id %q is not domain:bus:device", d.PCIBusID)
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, r.SetDevice(0))
	var ce *Error
	if _, err := r.Malloc(1 << 62); !errors.As(err, &ce) || ce.Code != 2 {
		t.Errorf("Malloc of 4 EiB: %v; want cudaErrorMemoryAllocation (2)", err)
	}

	const n = 64 << 20
	dev, err := r.Malloc(n)
	must(t, err)
	defer r.Free(dev)
	src, err := r.HostAlloc(n)
	must(t, err)
	defer r.FreeHost(src)
	dst, err := r.HostAlloc(n)
	must(t, err)
	defer r.FreeHost(dst)
	for i := range src {
		src[i] = byte(i*31 + i>>12)
	}
	s, err := r.NewStream()
	must(t, err)
	defer r.DestroyStream(s)
	e1, err := r.NewEvent()
	must(t, err)
	defer r.DestroyEvent(e1)
	e2, err := r.NewEvent()
	must(t, err)
	defer r.DestroyEvent(e2)
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

	// timed copies reps copies of size bytes each and returns GB/s by
	// the events around them.
	timed := func(dst, src uintptr, size uint64, kind, reps int) float64 {
		t.Helper()
		must(t, r.Record(e1, s))
		for range reps {
			must(t, r.CopyAsync(dst, src, size, kind, s))
		}
		must(t, r.Record(e2, s))
		must(t, r.Wait(e2))
		sec, err := r.Elapsed(e1, e2)
		must(t, err)
		if sec <= 0 {
			t.Fatalf("%d copies took %v s by the events", reps, sec)
		}
		return float64(size) * float64(reps) / sec / 1e9
	}
	timed(dev, addr(src), n, HostToDevice, 1)
	timed(addr(dst), dev, n, DeviceToHost, 1)
	must(t, r.SyncStream(s))
	if !bytes.Equal(src, dst) {
		t.Fatal("64 MiB copied to the device and back differ")
	}
	// The loop's rate is the best of three: on the H100 lent on
	// 2026-11-27 (a virtual machine), one loop of 16 MiB copies ran
	// anywhere from 35 to 55 GB/s from one call to the next, and the
	// figure the tier's copies are held to should be what the link
	// does, not a slow moment of it.
	for _, size := range []uint64{1 << 20, 16 << 20} {
		reps := int((4 << 30) / size)
		var h2d, d2h float64
		for range 3 {
			h2d = max(h2d, timed(dev, addr(src), size, HostToDevice, reps))
			d2h = max(d2h, timed(addr(dst), dev, size, DeviceToHost, reps))
		}
		t.Logf("copy loop, pinned, %d MiB copies on one stream: host-to-device %.2f GB/s, device-to-host %.2f GB/s (the best of 3 loops)",
			size>>20, h2d, d2h)
	}

	// mmap'd memory, as the RAM tier's arena, pinned in place.
	m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	must(t, err)
	defer unix.Munmap(m)
	must(t, r.HostRegister(addr(m), n))
	if err := r.HostRegister(addr(m)+4096, 4096); !errors.As(err, &ce) || ce.Code != 712 {
		t.Errorf("HostRegister inside a registered range: %v; want cudaErrorHostMemoryAlreadyRegistered (712)", err)
	}
	copy(m, src)
	clear(dst)
	h2d := timed(dev, addr(m), n, HostToDevice, 16)
	d2h := timed(addr(m), dev, n, DeviceToHost, 16)
	must(t, r.SyncStream(s))
	if !bytes.Equal(m, src) {
		t.Error("registered memory copied to the device and back differs")
	}
	t.Logf("registered (cudaHostRegister) memory, 64 MiB copies: host-to-device %.2f GB/s, device-to-host %.2f GB/s", h2d, d2h)
	must(t, r.HostUnregister(addr(m)))
	if err := r.HostUnregister(addr(m)); !errors.As(err, &ce) || ce.Code != 713 {
		t.Errorf("HostUnregister twice: %v; want cudaErrorHostMemoryNotRegistered (713)", err)
	}
}

// TestRealCuFile writes 16 MiB of device memory to a file in
// $KVBENCH_GDS_DIR through libcufile, reads it back into other device
// memory at an offset, and checks the bytes on the host.
func TestRealCuFile(t *testing.T) {
	r := realRuntime(t)
	dir := os.Getenv("KVBENCH_GDS_DIR")
	if dir == "" {
		t.Skip("KVBENCH_GDS_DIR names a directory on NVMe for the cuFile test")
	}
	f, err := LoadCuFile()
	must(t, err)
	v, ok := f.Version()
	t.Logf("%s: version %s (%v)", f.Path, VersionString(v), ok)
	must(t, f.Open())
	defer func() { must(t, f.Close()) }()

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, r.SetDevice(0))
	const n = 16 << 20
	a, err := r.Malloc(n)
	must(t, err)
	defer r.Free(a)
	b, err := r.Malloc(2 * n)
	must(t, err)
	defer r.Free(b)
	host, err := r.HostAlloc(n)
	must(t, err)
	defer r.FreeHost(host)
	for i := range host {
		host[i] = byte(i*7 + i>>16)
	}
	s, err := r.NewStream()
	must(t, err)
	defer r.DestroyStream(s)
	hp := uintptr(unsafe.Pointer(unsafe.SliceData(host)))
	must(t, r.CopyAsync(a, hp, n, HostToDevice, s))
	must(t, r.SyncStream(s))

	path := filepath.Join(dir, "kvbench-cufile-test")
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_DIRECT, 0o600)
	must(t, err)
	defer os.Remove(path)
	defer file.Close()
	h, err := f.RegisterFile(int(file.Fd()))
	must(t, err)
	defer f.DeregisterFile(h)
	if err := f.RegisterBuffer(a, n); err != nil {
		t.Logf("cuFileBufRegister: %v (cuFile moves through its bounce buffers)", err)
	} else {
		defer f.DeregisterBuffer(a)
	}
	if k, err := f.Write(h, a, n, 0, 0); err != nil || k != n {
		t.Fatalf("cuFileWrite = %d, %v", k, err)
	}
	if k, err := f.Read(h, b, n, 0, n); err != nil || k != n {
		t.Fatalf("cuFileRead into the second half = %d, %v", k, err)
	}
	if k, err := f.Read(h, b, n, n, 0); err != nil || k != 0 {
		t.Errorf("cuFileRead at the end of the file = %d, %v; want 0", k, err)
	}
	clear(host)
	must(t, r.CopyAsync(hp, b+n, n, DeviceToHost, s))
	must(t, r.SyncStream(s))
	for i := range host {
		if host[i] != byte(i*7+i>>16) {
			t.Fatalf("byte %d read back through cuFile is %d, not %d", i, host[i], byte(i*7+i>>16))
		}
	}
}

// TestRealCallCost logs what the calls a copy of the GPU tier makes cost
// the host here, and how long a caller waits for one copy of 1 MiB on an
// idle stream: sleeping in cudaEventSynchronize on a blocking-sync event,
// or polling cudaEventQuery. It checks nothing but that the calls work;
// its figures say where a tier's copies spend their time on this machine.
func TestRealCallCost(t *testing.T) {
	r := realRuntime(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, r.SetDevice(0))
	const n = 1 << 20
	dev, err := r.Malloc(n)
	must(t, err)
	defer r.Free(dev)
	host, err := r.HostAlloc(n)
	must(t, err)
	defer r.FreeHost(host)
	hp := uintptr(unsafe.Pointer(unsafe.SliceData(host)))
	s, err := r.NewStream()
	must(t, err)
	defer r.DestroyStream(s)
	timed, err := r.NewEvent()
	must(t, err)
	defer r.DestroyEvent(timed)
	mark, err := r.NewMark()
	must(t, err)
	defer r.DestroyEvent(mark)
	per := func(reps int, fn func()) time.Duration {
		start := time.Now()
		for range reps {
			fn()
		}
		return time.Since(start) / time.Duration(reps)
	}
	const reps = 200
	record := per(reps, func() { must(t, r.Record(timed, s)) })
	recordMark := per(reps, func() { must(t, r.Record(mark, s)) })
	must(t, r.SyncStream(s))
	query := per(reps, func() {
		if _, err := r.Done(mark); err != nil {
			t.Fatal(err)
		}
	})
	queue := per(reps, func() { must(t, r.CopyAsync(dev, hp, n, HostToDevice, s)) })
	must(t, r.SyncStream(s))
	sleep := per(reps, func() {
		must(t, r.CopyAsync(dev, hp, n, HostToDevice, s))
		must(t, r.Record(timed, s))
		must(t, r.Wait(timed))
	})
	poll := per(reps, func() {
		must(t, r.CopyAsync(dev, hp, n, HostToDevice, s))
		must(t, r.Record(mark, s))
		for {
			done, err := r.Done(mark)
			must(t, err)
			if done {
				break
			}
		}
	})
	t.Logf("host time per call: cudaEventRecord %v (timed), %v (untimed); cudaEventQuery %v; cudaMemcpyAsync of 1 MiB queued behind others %v",
		record, recordMark, query, queue)
	t.Logf("one 1 MiB host-to-device copy on an idle stream, queued and waited for: %v sleeping in cudaEventSynchronize (blocking sync), %v polling cudaEventQuery",
		sleep, poll)
}
