package gpu

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/arena"
)

// asyncRuntime loads the fake runtime with streams that run their copies
// in the background, copyUS microseconds each, and returns how many
// copies it has seen queued behind a timed event between two copies.
func asyncRuntime(t *testing.T, copyUS string) (*cuda.Runtime, func() int) {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	cudatest.Setenv(t, "FAKE_CUDA_ASYNC", "1")
	cudatest.Setenv(t, "FAKE_CUDA_COPY_US", copyUS)
	rt, lib := fakeLib(t)
	var behind func() int64
	purego.RegisterLibFunc(&behind, lib, "fake_cuda_timed_between")
	return rt, func() int { return int(behind()) }
}

// TestStretches times the copies as a copy loop is timed: back-to-back
// copies from many callers are timed without a timed event between them
// (on a GPU, one there slows the copies around it), their busy time is at
// least what the copies took on the stream and within the run; and the
// time the stream sat idle between two copies is not counted.
func TestStretches(t *testing.T) {
	const copyUS, workers, blocks, block = 300, 8, 10, 16 << 10
	rt, behind := asyncRuntime(t, "300")
	b, _, err := New(rt, Options{Capacity: 8 << 20, Slots: workers, StageBytes: block})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	host, err := rt.HostAlloc(workers * block)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.FreeHost(host)
	o, err := b.Open("k", workers*block, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// copyBlock copies block i of the object to (write) or from the
	// device, from or into its part of host.
	copyBlock := func(i int, write bool) error {
		p := uintptr(unsafe.Pointer(&host[i*block]))
		return o.(arena.Spanner).Span(int64(i*block), block, func(mem arena.Memory, at, n int64) error {
			return CopyDirect(mem, p, at, int(n), write)
		})
	}

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, workers*blocks)
	for w := range workers {
		wg.Go(func() {
			for range blocks {
				errs <- copyBlock(w, true)
			}
		})
	}
	wg.Wait()
	took := time.Since(start).Seconds()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	h := b.Copies().H2D
	if min := copyUS * 1e-6 * workers * blocks; h.Copies != workers*blocks || h.Bytes != workers*blocks*block || h.BusyS < min*0.9 || h.BusyS > took*1.001 {
		t.Errorf("%d copies of %d bytes in all, busy %.4f s in a run of %.4f s; want %d of %d, busy at least %.4f s and within the run",
			h.Copies, h.Bytes, h.BusyS, took, workers*blocks, workers*blocks*block, min)
	}
	if n := behind(); n != 0 {
		t.Errorf("%d copies queued behind a timed event behind another; want none", n)
	}

	// Two copies 100 ms apart: the stream was busy for the two copies'
	// 0.6 ms and what it took to start and see each done, not for the
	// 100 ms between.
	for i := range 2 {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if err := copyBlock(i, false); err != nil {
			t.Fatal(err)
		}
	}
	if d := b.Copies().D2H; d.Copies != 2 || d.BusyS < 2*copyUS*1e-6*0.9 || d.BusyS > 0.05 {
		t.Errorf("two copies 100 ms apart: %d copies, busy %.4f s; want 2, at least %.4f s and well under 0.1 s", d.Copies, d.BusyS, 2*copyUS*1e-6)
	}
}

// TestFailedCopyOpensNoStretch: a copy the runtime refuses leaves no
// stretch open, so the idle time until the next copy is not counted.
func TestFailedCopyOpensNoStretch(t *testing.T) {
	rt, _ := asyncRuntime(t, "300")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_ASYNC", "1")
	if _, err := o.WriteAt(make([]byte, 4096), 0); err == nil {
		t.Fatal("a write whose copy the runtime refused: no error")
	}
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_ASYNC", "")
	time.Sleep(100 * time.Millisecond)
	if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	if h := b.Copies().H2D; h.Copies != 1 || h.BusyS > 0.05 {
		t.Errorf("one 300 us copy 100 ms after a refused one: %d copies, busy %.4f s; want 1, well under 0.1 s", h.Copies, h.BusyS)
	}
}

// TestStagingOnArenaDevice: a staging buffer is pinned with the arena's
// device current, whatever the calling thread's is.
func TestStagingOnArenaDevice(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	rt, lib := fakeLib(t)
	var hostDevice func() int32
	purego.RegisterLibFunc(&hostDevice, lib, "fake_cuda_host_device")
	b, _, err := New(rt, Options{Device: 1, Capacity: 1 << 20, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := rt.SetDevice(0); err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	if d := hostDevice(); d != 1 {
		t.Errorf("staging buffer pinned with device %d current; want the arena's, 1", d)
	}
}

// TestDirectionsOverlap: host-to-device and device-to-host copies run on
// streams of their own, so the two directions' copies run at once, as a
// GPU's two copy engines run them; on one stream they would take turns.
func TestDirectionsOverlap(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	cudatest.Setenv(t, "FAKE_CUDA_ASYNC", "1")
	cudatest.Setenv(t, "FAKE_CUDA_COPY_US", "2000")
	rt, lib := fakeLib(t)
	var peak func() int64
	purego.RegisterLibFunc(&peak, lib, "fake_cuda_peak_copies")
	const block, copies = 4096, 50
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 2, StageBytes: block})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o, err := b.Open("k", 2*block, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 2*copies)
	for i, write := range []bool{true, false} {
		wg.Go(func() {
			p := make([]byte, block)
			for range copies {
				var err error
				if write {
					_, err = o.WriteAt(p, int64(i*block))
				} else {
					_, err = o.ReadAt(p, int64(i*block))
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := peak(); n < 2 {
		t.Errorf("at most %d copy running at once while both directions copied %d blocks of 2 ms each; want the two directions at once", n, copies)
	}
}

// TestFailedCallWaitsForCopy: a call that fails after its copy was
// queued (here the event after it) returns only once that copy is done,
// so that the buffer it copies from or into is free when the caller has
// it back.
func TestFailedCallWaitsForCopy(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	cudatest.Setenv(t, "FAKE_CUDA_ASYNC", "1")
	cudatest.Setenv(t, "FAKE_CUDA_COPY_US", "20000")
	rt, lib := fakeLib(t)
	var outstanding func() int64
	purego.RegisterLibFunc(&outstanding, lib, "fake_cuda_outstanding")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_MARK", "1")
	if _, err := o.WriteAt(make([]byte, 4096), 0); err == nil {
		t.Fatal("a write whose event after the copy failed: no error")
	}
	if n := outstanding(); n != 0 {
		t.Errorf("the failed write returned with %d copy queued or running; want it done first", n)
	}
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_MARK", "")
}
