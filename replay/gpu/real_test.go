package gpu

import (
	"bytes"
	"encoding/binary"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
)

// The tests of this file run the tier on the machine's own GPU (CUDA
// runtime, device 0), never a fake: KVBENCH_GPU=1 runs them
// (bench/gpu-check.sh sets it); they fail where that finds no GPU.

func realRuntime(t *testing.T) *cuda.Runtime {
	t.Helper()
	if os.Getenv("KVBENCH_GPU") == "" {
		t.Skip("KVBENCH_GPU=1 runs the tests on this machine's GPU")
	}
	rt, err := cuda.Load()
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestRealConformance runs the backend contract's suite on an arena of
// real device memory.
func TestRealConformance(t *testing.T) {
	rt := realRuntime(t)
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		b, info, err := New(rt, Options{Capacity: 64 << 20, Slots: 4, StageBytes: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if info.Device.Name == "" || info.Runtime == "" || info.Driver == "" {
			t.Errorf("info %+v", info)
		}
		t.Cleanup(func() { b.Close() })
		return b
	})
}

// TestRealCopies writes and reads 512 MiB through the tier's staging slots
// from 8 goroutines at once (as the I/O engine's workers do, 1 MiB
// blocks), checks every byte, and logs the tier's rate each way by the
// wall clock and its copies' rate on their streams, beside
// TestRealRuntime's plain copy loop (internal/cuda). The blocks' bytes
// are a worker's pattern with the block's offset in its first 8 bytes,
// made by a copy, so that the workers' own work weighs little beside the
// tier's.
func TestRealCopies(t *testing.T) {
	rt := realRuntime(t)
	const workers, block, perWorker = 8, 1 << 20, 64 << 20
	b, info, err := New(rt, Options{Capacity: workers * perWorker, Slots: workers, StageBytes: block})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t.Logf("%s (PCI %s, link %q), driver %s, runtime %s", info.Device.Name, info.Device.PCIBusID, info.Link, info.Driver, info.Runtime)
	objs := make([]backend.Object, workers)
	for w := range objs {
		if objs[w], err = b.Open(string(rune('a'+w)), perWorker, true); err != nil {
			t.Fatal(err)
		}
	}
	base := make([][]byte, workers)
	for w := range base {
		base[w] = make([]byte, block)
		for i := range base[w] {
			base[w][i] = byte(w*131 + i*7 + i>>11)
		}
	}
	pattern := func(p []byte, w, off int) {
		copy(p, base[w])
		binary.LittleEndian.PutUint64(p, uint64(off))
	}
	run := func(write bool) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf, want := make([]byte, block), make([]byte, block)
				for off := 0; off < perWorker; off += block {
					pattern(want, w, off)
					if write {
						if _, err := objs[w].WriteAt(want, int64(off)); err != nil {
							errs <- err
							return
						}
						continue
					}
					if _, err := objs[w].ReadAt(buf, int64(off)); err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(buf, want) {
						errs <- os.ErrInvalid
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("write %v: %v (ErrInvalid: bytes read back differ)", write, err)
			}
		}
		return time.Since(start)
	}
	w, r := run(true), run(false)
	c := b.Copies()
	total := float64(workers * perWorker)
	t.Logf("tier, %d workers of 1 MiB blocks (bytes checked on read): write %.2f GB/s, read %.2f GB/s by the wall clock; over the time the streams were busy with them (events): host-to-device %.2f GB/s, device-to-host %.2f GB/s",
		workers, total/w.Seconds()/1e9, total/r.Seconds()/1e9, c.H2D.GBps(), c.D2H.GBps())
	if c.H2D.Bytes != int64(total) || c.D2H.Bytes != int64(total) || c.H2D.GBps() <= 0 || c.D2H.GBps() <= 0 {
		t.Errorf("copies %+v", c)
	}
	for _, o := range objs {
		o.Close()
	}
}
