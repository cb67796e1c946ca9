package uring

import (
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	benchFileSize = 256 << 20
	benchDepth    = 32
)

// benchDir holds the benchmarks' file, made on first use and removed by
// TestMain, so the runs of one benchmark with growing b.N share it.
var benchDir struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	m.Run() // its status becomes the exit status when TestMain returns
	if benchDir.dir != "" {
		os.RemoveAll(benchDir.dir)
	}
}

// benchFile returns the path of a 256 MiB pattern file, written once and
// dropped from the page cache. A memory file system ($TMPDIR on a tmpfs)
// is skipped: its O_DIRECT reads are copies from the page cache.
func benchFile(b *testing.B) string {
	b.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(os.TempDir(), &st); err == nil && (st.Type == unix.TMPFS_MAGIC || st.Type == unix.RAMFS_MAGIC) {
		b.Skipf("%s is a memory file system: set TMPDIR to a directory on a disk", os.TempDir())
	}
	benchDir.once.Do(func() {
		if benchDir.dir, benchDir.err = os.MkdirTemp("", "uring-bench-"); benchDir.err != nil {
			return
		}
		benchDir.path = patternFile(b, benchDir.dir, benchFileSize/blockSize)
		fd, err := unix.Open(benchDir.path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			benchDir.err = err
			return
		}
		unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
		unix.Close(fd)
	})
	if benchDir.err != nil {
		b.Fatal(benchDir.err)
	}
	return benchDir.path
}

// benchReads keeps benchDepth O_DIRECT reads of bs bytes in flight on the
// benchmark file, offsets from nextOff, until b.N have completed; it
// reports MB/s through b.SetBytes.
func benchReads(b *testing.B, bs int, nextOff func() uint64) {
	r := newRing(b, Params{Entries: benchDepth})
	fd := openFile(b, benchFile(b), unix.O_RDONLY|unix.O_DIRECT)
	mem := alignedBuf(b, benchDepth*bs)
	slot := func(i uint64) []byte { return mem[int(i)*bs : int(i+1)*bs] }
	b.SetBytes(int64(bs))
	b.ResetTimer()
	issued := 0
	for i := range min(benchDepth, b.N) {
		if err := r.PrepRead(fd, slot(uint64(i)), nextOff(), uint64(i)); err != nil {
			b.Fatal(err)
		}
		issued++
	}
	for done := 0; done < b.N; {
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		r.Reap(func(c CQE) {
			if c.Res != int32(bs) {
				b.Fatalf("read %d: result %d (%v), want %d", c.UserData, c.Res, Errno(c.Res), bs)
			}
			done++
			if issued < b.N {
				if err := r.PrepRead(fd, slot(c.UserData), nextOff(), c.UserData); err != nil {
					b.Fatal(err)
				}
				issued++
			}
		})
	}
}

// BenchmarkReadRandom4K: 4 KiB O_DIRECT reads at random aligned offsets of
// a 256 MiB file, queue depth 32.
func BenchmarkReadRandom4K(b *testing.B) {
	requireURing(b)
	rng := rand.New(rand.NewPCG(5, 6))
	benchReads(b, 4096, func() uint64 { return uint64(rng.IntN(benchFileSize/4096)) * 4096 })
}

// BenchmarkRead1M: 1 MiB O_DIRECT reads walking a 256 MiB file in order
// and wrapping, queue depth 32.
func BenchmarkRead1M(b *testing.B) {
	requireURing(b)
	var off uint64
	benchReads(b, 1<<20, func() uint64 {
		o := off
		off = (off + 1<<20) % benchFileSize
		return o
	})
}

// BenchmarkNopRoundTrip: one no-op prepared, submitted, waited for and
// consumed per operation: the ring's fixed cost per system call.
func BenchmarkNopRoundTrip(b *testing.B) {
	r := newRing(b, Params{Entries: 8})
	for i := range b.N {
		if err := r.PrepNop(uint64(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := r.SubmitAndWait(1); err != nil {
			b.Fatal(err)
		}
		if _, ok := r.PeekCQE(); !ok {
			b.Fatal("no completion after SubmitAndWait(1)")
		}
		r.SeenCQE()
	}
}

// BenchmarkNopBatch32: 32 no-ops per system call, the per-request cost
// of the ring itself.
func BenchmarkNopBatch32(b *testing.B) {
	r := newRing(b, Params{Entries: 32})
	for done := 0; done < b.N; {
		n := min(32, b.N-done)
		for i := range n {
			if err := r.PrepNop(uint64(i)); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := r.SubmitAndWait(uint32(n)); err != nil {
			b.Fatal(err)
		}
		done += r.Reap(func(CQE) {})
	}
}
