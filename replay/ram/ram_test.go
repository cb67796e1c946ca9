package ram_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/extent"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/replaytest"
)

func newRAM(t testing.TB, capacity int64, opts ...ram.Option) *arena.Backend {
	t.Helper()
	b, err := ram.New(capacity, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend { return newRAM(t, 16<<20) })
}

func TestConformanceOptions(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return newRAM(t, 16<<20, ram.Populate(), ram.NoReserve(), ram.HugePages())
	})
}

func TestNew(t *testing.T) {
	for _, c := range []int64{0, -1} {
		if _, err := ram.New(c); err == nil || !strings.HasPrefix(err.Error(), "ram: ") {
			t.Errorf("New(%d) = %v, want a ram: error", c, err)
		}
	}
	b := newRAM(t, 10000)
	defer b.Close()
	if c := b.Caps(); c.Name != "ram" || c.Align != 4096 || c.Capacity != 12288 || c.Direct || c.Device {
		t.Errorf("Caps() = %+v, want ram, Align 4096, Capacity 12288 (10000 rounded up to pages)", c)
	}
}

// TestFragmentedArenaFits checks that the arena cannot fail from
// fragmentation: with three one-page holes and no two together, a
// three-page object fits (scattered over the holes) and reads back what
// was written, byte for byte, across the pieces; one page more than is
// free fails with ErrNoSpace and a message that says how much is free.
func TestFragmentedArenaFits(t *testing.T) {
	const P = 4096
	b := newRAM(t, 8*P)
	defer b.Close()
	objs := make([]backend.Object, 8)
	for i := range objs {
		o, err := b.Open(fmt.Sprint(i), P, true)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = o
	}
	// Holes at pages 1, 3 and 6: 3 pages free, no two together.
	for _, i := range []int{1, 3, 6} {
		if err := objs[i].Remove(); err != nil {
			t.Fatal(err)
		}
	}
	st := b.Stats()
	if st != (arena.Stats{Stats: extent.Stats{Capacity: 8 * P, Used: 5 * P, Free: 3 * P, LargestFree: P, FreeExtents: 3}, Objects: 5}) {
		t.Errorf("Stats() = %+v", st)
	}
	_, err := b.Open("big", 4*P, true)
	if !errors.Is(err, backend.ErrNoSpace) {
		t.Fatalf("Open of 4 pages with 3 free: %v, want ErrNoSpace", err)
	}
	want := `ram: create "big" of 16384 bytes: 12288 bytes free (arena 32768 bytes): no space left`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	big, err := b.Open("big", 3*P, true)
	if err != nil {
		t.Fatalf("Open of 3 pages into three 1-page holes: %v", err)
	}
	if st := b.Stats(); st.Free != 0 || st.Objects != 6 {
		t.Errorf("Stats() = %+v, want a full arena of 6 objects", st)
	}
	// Two pages written at offset P span two pieces.
	w := replaytest.AlignedBuffer(2*P, P)
	for i := range w {
		w[i] = byte(i*7 + i>>12)
	}
	if _, err := big.WriteAt(w, P); err != nil {
		t.Fatal(err)
	}
	r := replaytest.AlignedBuffer(3*P, P)
	if _, err := big.ReadAt(r, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r[P:], w) {
		t.Fatal("bytes read across pieces differ from those written")
	}
	// The neighbours were not touched.
	for _, i := range []int{0, 2, 4, 5, 7} {
		p := replaytest.AlignedBuffer(P, P)
		if _, err := objs[i].ReadAt(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := big.Remove(); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Free != 3*P {
		t.Errorf("after Remove: Stats() = %+v, want 3 pages free", st)
	}
}

// TestReplaceFrees checks that a create replacing an object gives the old
// space back first, so a same-size replacement fits in a full arena, and
// that the stale Object can neither write nor remove the new one.
func TestReplaceFrees(t *testing.T) {
	b := newRAM(t, 4*4096)
	defer b.Close()
	old, err := b.Open("k", 4*4096, true)
	if err != nil {
		t.Fatal(err)
	}
	o, err := b.Open("k", 4*4096, true)
	if err != nil {
		t.Fatalf("replacing create in a full arena: %v", err)
	}
	p := replaytest.AlignedBuffer(4096, 4096)
	if _, err := old.WriteAt(p, 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("WriteAt through a replaced Object: %v, want ErrClosed", err)
	}
	if err := old.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Errorf("a stale Remove removed the replacement: %v", err)
	}
	if st := b.Stats(); st.Objects != 1 || st.Free != 0 {
		t.Errorf("Stats() = %+v, want one object filling the arena", st)
	}
}

// TestManyObjects fills a fragmented arena with 100k objects and empties
// it: everything coalesces back into one extent.
func TestManyObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const n = 100000
	b := newRAM(t, 2*n*4096, ram.NoReserve())
	defer b.Close()
	objs := make([]backend.Object, n)
	for i := range objs {
		o, err := b.Open(fmt.Sprint(i), int64(1+i%2)*4096, true)
		if err != nil {
			t.Fatal(err)
		}
		objs[i] = o
	}
	for i := 0; i < n; i += 2 {
		if err := objs[i].Remove(); err != nil {
			t.Fatal(err)
		}
	}
	// The holes, and the arena's unused tail.
	if st := b.Stats(); st.FreeExtents != n/2+1 || st.Objects != n/2 {
		t.Fatalf("Stats() = %+v, want %d free extents", st, n/2+1)
	}
	for i := 1; i < n; i += 2 {
		if err := objs[i].Remove(); err != nil {
			t.Fatal(err)
		}
	}
	if st := b.Stats(); st.FreeExtents != 1 || st.LargestFree != st.Capacity || st.Objects != 0 {
		t.Fatalf("Stats() = %+v, want one free extent of the whole arena", st)
	}
}

// BenchmarkCopy measures the bandwidth of WriteAt and ReadAt (memcpy into
// and out of the arena) for block sizes around the engine's default, on
// one goroutine and on all of them.
func BenchmarkCopy(b *testing.B) {
	const arena = 256 << 20
	be := newRAM(b, arena, ram.Populate())
	defer be.Close()
	obj, err := be.Open("bench", arena, true)
	if err != nil {
		b.Fatal(err)
	}
	for _, bs := range []int{64 << 10, 1 << 20, 4 << 20} {
		for _, op := range []string{"WriteAt", "ReadAt"} {
			io := obj.WriteAt
			if op == "ReadAt" {
				io = obj.ReadAt
			}
			blocks := int64(arena / bs)
			b.Run(fmt.Sprintf("%s/%dKiB", op, bs>>10), func(b *testing.B) {
				p := replaytest.AlignedBuffer(bs, 4096)
				b.SetBytes(int64(bs))
				var i int64
				for b.Loop() {
					if _, err := io(p, i%blocks*int64(bs)); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run(fmt.Sprintf("%s/%dKiB/parallel", op, bs>>10), func(b *testing.B) {
				b.SetBytes(int64(bs))
				b.RunParallel(func(pb *testing.PB) {
					p := replaytest.AlignedBuffer(bs, 4096)
					var i int64
					for pb.Next() {
						if _, err := io(p, i%blocks*int64(bs)); err != nil {
							b.Error(err)
							return
						}
						i += 7
					}
				})
			})
		}
	}
}

// TestCloseDuringIO checks that Close waits for copies in flight and that
// later ones fail with ErrClosed instead of touching the unmapped arena.
func TestCloseDuringIO(t *testing.T) {
	b := newRAM(t, 1<<20)
	o, err := b.Open("k", 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			p := replaytest.AlignedBuffer(64<<10, 4096)
			<-start
			for i := 0; ; i++ {
				var err error
				if (w+i)%2 == 0 {
					_, err = o.WriteAt(p, int64(i%16)*(64<<10))
				} else {
					_, err = o.ReadAt(p, int64(i%16)*(64<<10))
				}
				if err != nil {
					if !errors.Is(err, backend.ErrClosed) {
						t.Errorf("I/O during Close: %v, want ErrClosed", err)
					}
					return
				}
			}
		})
	}
	close(start)
	time.Sleep(10 * time.Millisecond)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}
