package gpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/schema"
)

// fakeRuntime loads the fake CUDA runtime with mem bytes per device.
func fakeRuntime(t *testing.T, mem string) *cuda.Runtime {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", mem)
	rt, err := cuda.Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestConformance runs the backend contract's suite on an arena of the
// fake runtime's device memory: every byte written is copied to the
// "device" and back through the staging slots.
func TestConformance(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		b, info, err := New(rt, Options{Capacity: 64 << 20, Slots: 4, StageBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if info.Device.Name != "Fake GPU" || info.Runtime != "12.2" {
			t.Errorf("info %+v", info)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// TestCopiesStagedAndTimed writes and reads objects larger than a staging
// buffer from several goroutines at once: the bytes come back, every
// piece is a copy counted in its direction with its busy time, and no
// more copies run at once than there are slots.
func TestCopiesStagedAndTimed(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	const slots, stage, objSize, workers = 2, 16 << 10, 64 << 10, 6
	b, _, err := New(rt, Options{Capacity: 8 << 20, Slots: slots, StageBytes: stage})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := string(rune('a' + w))
			o, err := b.Open(name, objSize, true)
			if err != nil {
				errs <- err
				return
			}
			want := bytes.Repeat([]byte{byte(w + 1)}, objSize)
			if _, err := o.WriteAt(want, 0); err != nil {
				errs <- err
				return
			}
			got := make([]byte, objSize)
			if _, err := o.ReadAt(got, 0); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(got, want) {
				errs <- errors.New(name + ": bytes differ")
			}
			errs <- o.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c := b.Copies()
	pieces := int64(workers * objSize / stage)
	for _, d := range []struct {
		name string
		d    Direction
	}{{"host-to-device", c.H2D}, {"device-to-host", c.D2H}} {
		if d.d.Copies != pieces || d.d.Bytes != workers*objSize || d.d.BusyS <= 0 || d.d.GBps() <= 0 {
			t.Errorf("%s: %+v (%.2f GB/s); want %d copies of %d bytes in all, timed", d.name, d.d, d.d.GBps(), pieces, workers*objSize)
		}
	}
	if len(b.mem.slots) != slots {
		t.Errorf("%d of %d slots back after the copies", len(b.mem.slots), slots)
	}
	// The backend describes itself for the result: its device and the
	// copies it measured.
	pi := schema.PathInfo{Backend: "gpu", Path: "GPU 0"}
	b.Describe(&pi)
	if g := pi.GPU; g == nil || g.Name != "Fake GPU" || pi.Model != "Fake GPU" || g.HostToDevice.Bytes != c.H2D.Bytes ||
		g.DeviceToHost.Copies != c.D2H.Copies || g.DeviceToHost.BusyGBps != c.D2H.GBps() || !strings.Contains(g.Copies, "2 pinned staging buffers of 16 KiB") {
		t.Errorf("Describe: %+v, GPU %+v", pi, g)
	}
}

// TestCopiesOfADirectionInOrder copies from more goroutines than there
// are cores, each through its own slot: the copies of a direction are
// queued one after another on its stream, so the stretches of copies
// timed (the fake's events hold the host's monotonic time at their
// record) do not overlap, and their sum stays within the time all the
// copies took. With a stream per slot, when each copy was timed alone,
// the intervals overlapped, and the sum exceeded it: a copy's time
// included the others', and the rate fell with the number of workers
// instead of telling the link's.
func TestCopiesOfADirectionInOrder(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	const workers, objSize, rounds = 8, 4 << 20, 4
	b, _, err := New(rt, Options{Capacity: 64 << 20, Slots: workers, StageBytes: objSize})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	objs := make([]backend.Object, workers)
	for w := range objs {
		if objs[w], err = b.Open(string(rune('a'+w)), objSize, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, write := range []bool{true, false} {
		before := b.Copies()
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		start := time.Now()
		for _, o := range objs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := make([]byte, objSize)
				for range rounds {
					var err error
					if write {
						_, err = o.WriteAt(p, 0)
					} else {
						_, err = o.ReadAt(p, 0)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		took := time.Since(start).Seconds()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		c, d := b.Copies(), Direction{}
		if write {
			d = c.H2D
			d.BusyS -= before.H2D.BusyS
		} else {
			d = c.D2H
			d.BusyS -= before.D2H.BusyS
		}
		// float32 milliseconds per stretch: allow their rounding.
		if d.BusyS <= 0 || d.BusyS > took*1.001+1e-6*float64(workers*rounds) {
			t.Errorf("write %v: the stretches' busy times add up to %.6f s in %.6f s of copying: they overlapped", write, d.BusyS, took)
		}
	}
}

// TestCopyFailure: a copy CUDA refuses fails the I/O with CUDA's words,
// and the slot goes back for the next one.
func TestCopyFailure(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
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
	_, err = o.WriteAt(make([]byte, 4096), 0)
	var ce *cuda.Error
	if !errors.As(err, &ce) || ce.Call != "cudaMemcpyAsync" || ce.Text != "invalid argument" {
		t.Fatalf("write with the copy refused: %v, want cudaMemcpyAsync's invalid argument", err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_FAIL_ASYNC", "")
	if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// TestCopyPolled: a copy's caller waits until the poller sees the copy's
// end event done (the fake answers "not ready" to its first queries), and a
// query that fails fails the I/O with CUDA's words; the slot goes back.
func TestCopyPolled(t *testing.T) {
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
	cudatest.Setenv(t, "FAKE_CUDA_NOT_READY", "50")
	want := bytes.Repeat([]byte{7}, 8192)
	if _, err := o.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8192)
	if _, err := o.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back: %v, equal %v", err, bytes.Equal(got, want))
	}
	if c := b.Copies(); c.H2D.Copies != 2 || c.D2H.Copies != 2 || c.H2D.BusyS <= 0 || c.D2H.BusyS <= 0 {
		t.Errorf("copies %+v: want 2 timed each way", c)
	}
	cudatest.Setenv(t, "FAKE_CUDA_QUERY_FAIL", "1")
	var ce *cuda.Error
	if _, err := o.WriteAt(want, 0); !errors.As(err, &ce) || ce.Call != "cudaEventQuery" {
		t.Fatalf("write with the query failing: %v, want cudaEventQuery's error", err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_QUERY_FAIL", "")
	if _, err := o.WriteAt(want, 0); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}

// TestStagingOnFirstUse: the slots' staging buffers (pinned memory,
// resident) are made when the tier's own WriteAt or ReadAt first needs
// one, not before: a replay's engine copies from buffers of its own.
func TestStagingOnFirstUse(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 3, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	made := func() (n int) {
		for _, s := range b.mem.all {
			if s.buf != nil {
				n++
			}
		}
		return n
	}
	if n := made(); n != 0 {
		t.Fatalf("%d staging buffers made by New", n)
	}
	o, err := b.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(make([]byte, 8192), 0); err != nil {
		t.Fatal(err)
	}
	if n := made(); n != 1 {
		t.Errorf("%d staging buffers after one write from one goroutine; want 1", n)
	}
}

// TestReleaseStopsPollers: a Close whose cudaSetDevice fails still stops
// the two pollers.
func TestReleaseStopsPollers(t *testing.T) {
	rt := fakeRuntime(t, "268435456")
	b, _, err := New(rt, Options{Capacity: 1 << 20, Slots: 2, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "0") // cudaSetDevice fails from here on
	if err := b.Close(); err == nil {
		t.Fatal("Close with cudaSetDevice failing: no error")
	}
	stopped := make(chan struct{})
	go func() {
		b.mem.pollers.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the pollers still run after Close")
	}
}

// TestCopiesOnRunningStreams runs the tier over the fake's background
// streams (FAKE_CUDA_ASYNC: each stream runs its copies and events on a
// thread of its own, a copy taking 300 us), as a GPU runs them: a copy's
// caller is woken only once its copy is done, so every byte read back is
// the one written, from many goroutines at once, through staging and
// through CopyDirect, and each direction's copies are timed on the
// device, not overlapping. A poller that waited on a copy's start event
// woke its reader before the bytes came.
func TestCopiesOnRunningStreams(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_ASYNC", "1")
	cudatest.Setenv(t, "FAKE_CUDA_COPY_US", "300")
	rt := fakeRuntime(t, "268435456")
	const workers, block, blocks = 6, 16 << 10, 8
	b, _, err := New(rt, Options{Capacity: 8 << 20, Slots: 4, StageBytes: block})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	host, err := rt.HostAlloc(workers * block)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.FreeHost(host)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := b.Open(string(rune('a'+w)), blocks*block, true)
			if err != nil {
				errs <- err
				return
			}
			defer o.Close()
			for i := range blocks {
				want := bytes.Repeat([]byte{byte(w*blocks + i + 1)}, block)
				off := int64(i * block)
				if _, err := o.WriteAt(want, off); err != nil {
					errs <- err
					return
				}
				got := make([]byte, block)
				if _, err := o.ReadAt(got, off); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, want) {
					errs <- fmt.Errorf("%c block %d: staged read back differs", 'a'+w, i)
					return
				}
				// The same block by CopyDirect, from pinned memory.
				mine := host[w*block : (w+1)*block]
				clear(mine)
				err := o.(arena.Spanner).Span(off, block, func(mem arena.Memory, at, n int64) error {
					return CopyDirect(mem, uintptr(unsafe.Pointer(&mine[0])), at, int(n), false)
				})
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(mine, want) {
					errs <- fmt.Errorf("%c block %d: direct read back differs", 'a'+w, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start).Seconds()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := b.Copies()
	if c.H2D.Copies != workers*blocks || c.D2H.Copies != 2*workers*blocks {
		t.Errorf("copies %+v", c)
	}
	// Each copy takes 300 us on its stream: a direction's busy time is
	// at least that for each, and, one after another, within the run.
	for _, d := range []Direction{c.H2D, c.D2H} {
		if min := 300e-6 * float64(d.Copies); d.BusyS < min*0.9 || d.BusyS > took*1.001 {
			t.Errorf("%d copies timed %.4f s in %.4f s of copying; want at least %.4f, within the run", d.Copies, d.BusyS, took, min)
		}
	}
}

// TestTooBig refuses an arena the device cannot hold, a device that is
// not there, and staging of nothing.
func TestTooBig(t *testing.T) {
	rt := fakeRuntime(t, "1048576")
	for _, opt := range []Options{
		{Capacity: 2 << 20, Slots: 1, StageBytes: 4096},
		{Device: 3, Capacity: 4096, Slots: 1, StageBytes: 4096},
		{Capacity: 4096},
	} {
		if b, _, err := New(rt, opt); err == nil {
			b.Close()
			t.Errorf("%+v: no error", opt)
		}
	}
}

// TestPCIeLink reads the link from a sysfs tree laid out as Linux does.
func TestPCIeLink(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "0000:17:00.0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "current_link_speed"), []byte("16.0 GT/s PCIe\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "current_link_width"), []byte("16\n"), 0o644)
	for id, want := range map[string]string{
		"00000000:17:00": "16.0 GT/s PCIe x16",
		"00000000:18:00": "", // no such device
		"garbage":        "",
	} {
		if got := pcieLink(root, id); got != want {
			t.Errorf("pcieLink(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestPin pins host memory for an arena's GPU once: pinning it again is
// CUDA's cudaErrorHostMemoryAlreadyRegistered, and Unpin undoes it.
func TestPin(t *testing.T) {
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "2")
	rt := fakeRuntime(t, "268435456")
	b, _, err := New(rt, Options{Device: 1, Capacity: 1 << 20, Slots: 1, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a, ok := ArenaOf(b.mem)
	if !ok || a.Device != 1 {
		t.Fatalf("ArenaOf = %+v, %v", a, ok)
	}
	host := make([]byte, 8192)
	p := uintptr(unsafe.Pointer(&host[0]))
	if err := a.Pin(p, 8192); err != nil {
		t.Fatal(err)
	}
	var ce *cuda.Error
	if err := a.Pin(p, 4096); !errors.As(err, &ce) || ce.Code != 712 {
		t.Errorf("Pin twice: %v; want code 712", err)
	}
	if err := a.Unpin(p); err != nil {
		t.Error(err)
	}
	if err := a.Unpin(p); !errors.As(err, &ce) || ce.Code != 713 {
		t.Errorf("Unpin twice: %v; want code 713", err)
	}
}
