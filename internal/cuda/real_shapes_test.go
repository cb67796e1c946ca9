package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/internal/datagen"
)

// hostAllocWriteCombined is cudaHostAllocWriteCombined: pinned memory
// the CPU writes through write-combining buffers, bypassing its caches,
// and reads very slowly; the device reads it without snooping them.
const hostAllocWriteCombined = 4

// TestRealCopyShapes measures, on the machine's GPU, what the GPU tier's
// copies pay beside a plain copy loop, one cost at a time, in 1 MiB and
// 16 MiB copies over 32 buffers (the replay's default queue depth), 2 GiB
// a figure:
//   - how the copies are timed: span (two events around a batch of
//     copies queued back to back, as the copy loop), marks (span, with an
//     untimed event after each copy, as the tier waits for them), pairs (two timed
//     events around each copy, as the tier timed them until 2026-11-27), chain (a timed
//     event after each copy only, the time between one copy's event and
//     the next's), idle (each copy queued on an idle stream between two
//     events and waited for before the next is queued);
//   - what the CPU did to the buffers before a batch: nothing; filled
//     them with the data generator's ordinary stores (fill) or its
//     non-temporal ones (fillNT); read every byte of them (read, as
//     --verify's check);
//   - the buffers: cudaHostAlloc's (pinned) or write-combined (wc);
//   - copies while other goroutines fill other memory.
//
// It only logs; the figures chose how the tier times and fills its
// copies (replay/gpu, replay/ioengine/devcopy).
func TestRealCopyShapes(t *testing.T) {
	r := realRuntime(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must(t, r.SetDevice(0))
	s, err := r.NewStream()
	must(t, err)
	defer r.DestroyStream(s)
	const k = 32
	events := make([]Event, 2*k+2)
	for i := range events {
		events[i], err = r.NewEvent()
		must(t, err)
		defer r.DestroyEvent(events[i])
	}
	marks := make([]Event, k)
	for i := range marks {
		marks[i], err = r.NewMark()
		must(t, err)
		defer r.DestroyEvent(marks[i])
	}
	gen := datagen.New(1)
	addr := func(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
	elapsed := func(a, b Event) float64 {
		t.Helper()
		sec, err := r.Elapsed(a, b)
		must(t, err)
		return sec
	}

	for _, size := range []uint64{1 << 20, 16 << 20} {
		dev, err := r.Malloc(k * size)
		must(t, err)
		alloc := func(flags uint32) [][]byte {
			bs := make([][]byte, k)
			for i := range bs {
				var p unsafe.Pointer
				must(t, r.check("cudaHostAlloc", r.hostAlloc(&p, size, flags)))
				bs[i] = unsafe.Slice((*byte)(p), size)
				gen.Fill(bs[i], "warm", 0, 0) // fault every page in
			}
			return bs
		}
		pinned, wc := alloc(0), alloc(hostAllocWriteCombined)
		batches := int((2 << 30) / (k * size))

		// prep does to every buffer, in parallel, what the CPU does
		// before a batch.
		var sink [k]uint64
		prep := func(bufs [][]byte, what string, batch int) {
			if what == "none" {
				return
			}
			var wg sync.WaitGroup
			for i, b := range bufs {
				wg.Go(func() {
					key := fmt.Sprint("k", batch, i)
					switch what {
					case "fill":
						gen.Fill(b, key, 0, 0)
					case "fillNT":
						gen.FillDevice(b, key, 0, 0)
					case "read":
						w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
						var x uint64
						for _, v := range w {
							x += v
						}
						sink[i] = x
					}
				})
			}
			wg.Wait()
		}
		// batch queues a copy of every buffer, timed as mode says, and
		// returns the copies' device time.
		batch := func(bufs [][]byte, toDevice bool, mode string) float64 {
			copyOne := func(i int) {
				d, h, kind := dev+uintptr(uint64(i)*size), addr(bufs[i]), HostToDevice
				src, dst := h, d
				if !toDevice {
					src, dst, kind = d, h, DeviceToHost
				}
				must(t, r.CopyAsync(dst, src, size, kind, s))
			}
			last := events[len(events)-1]
			sum := 0.0
			switch mode {
			case "span", "marks", "chain":
				must(t, r.Record(events[0], s))
				for i := range bufs {
					copyOne(i)
					switch mode {
					case "marks":
						must(t, r.Record(marks[i], s))
					case "chain":
						must(t, r.Record(events[i+1], s))
					}
				}
				must(t, r.Record(last, s))
				must(t, r.Wait(last))
				if mode != "chain" {
					return elapsed(events[0], last)
				}
				for i := range bufs {
					sum += elapsed(events[i], events[i+1])
				}
			case "pairs", "idle":
				for i := range bufs {
					a, b := events[2*i], events[2*i+1]
					must(t, r.Record(a, s))
					copyOne(i)
					must(t, r.Record(b, s))
					if mode == "idle" {
						for {
							done, err := r.Done(b)
							must(t, err)
							if done {
								break
							}
						}
					}
				}
				must(t, r.SyncStream(s))
				for i := range bufs {
					sum += elapsed(events[2*i], events[2*i+1])
				}
			}
			return sum
		}
		run := func(name string, bufs [][]byte, toDevice bool, what, mode string) {
			sec, cpu := 0.0, time.Duration(0)
			for b := range batches {
				start := time.Now()
				prep(bufs, what, b)
				cpu += time.Since(start)
				sec += batch(bufs, toDevice, mode)
			}
			bytes := float64(uint64(batches) * k * size)
			msg := fmt.Sprintf("copy shape, %d MiB, %s, %s buffers, CPU before: %s, timed %s: %.2f GB/s",
				size>>20, map[bool]string{true: "host-to-device", false: "device-to-host"}[toDevice],
				name, what, mode, bytes/sec/1e9)
			if what != "none" {
				msg += fmt.Sprintf(" (the CPU's %s of %d buffers at once: %.1f GB/s)", what, k, bytes/cpu.Seconds()/1e9)
			}
			t.Log(msg)
		}
		batch(pinned, true, "span") // warm up
		for _, mode := range []string{"span", "marks", "pairs", "chain", "idle"} {
			for _, what := range []string{"none", "fill", "fillNT"} {
				run("pinned", pinned, true, what, mode)
				if mode == "span" {
					run("wc", wc, true, what, mode)
				}
			}
			for _, what := range []string{"none", "read"} {
				run("pinned", pinned, false, what, mode)
			}
		}
		// Copies while the CPU fills other memory with non-temporal
		// stores, as the replay's workers make the next blocks while
		// the tier's copies run: what the host's memory lets the two
		// share.
		for _, fillers := range []int{4, 12} {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for f := range fillers {
				wg.Go(func() {
					b := make([]byte, 16<<20)
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						gen.FillDevice(b, fmt.Sprint("bg", f, i), 0, 0)
					}
				})
			}
			for _, toDevice := range []bool{true, false} {
				run(fmt.Sprintf("pinned (%d goroutines filling other memory meanwhile)", fillers), pinned, toDevice, "none", "span")
			}
			close(stop)
			wg.Wait()
		}
		for _, b := range append(pinned, wc...) {
			must(t, r.FreeHost(b))
		}
		must(t, r.Free(dev))
	}
}
