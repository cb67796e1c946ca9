package ioengine

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/datagen"
)

// The benchmarks drive an engine as the scheduler does, on one file laid
// out in full beforehand (so no write pays for allocation and no read
// hits a hole), with random block-aligned offsets, and report IOPS. To
// compare with fio side by side, lay a file out once and give it to both
// (random offsets differ from run to run in both):
//
//	fio --name=prep --filename=/var/tmp/F --size=1G --rw=write --bs=1M --direct=1
//	go test -run - -bench Uring4K -benchtime 10s ./replay/ioengine/ -ioengine.file /var/tmp/F
//	fio --name=x --filename=/var/tmp/F --size=1G --rw=randwrite --bs=4k --iodepth=32 \
//		--ioengine=io_uring --direct=1 --time_based --runtime=10 --randrepeat=0 \
//		--fixedbufs --registerfiles --iodepth_batch_submit=32 --iodepth_batch_complete_max=32
//
// (fio tuned as bench/vs-fio.sh tunes it: registered buffers and file,
// batched submission and completion; add --iomem=shmhuge where huge pages
// are reserved.)
var (
	benchFileFlag    = flag.String("ioengine.file", "", "benchmarks: an existing file to use, overwritten by the write benchmarks (default: a fresh one under /var/tmp)")
	benchSizeFlag    = flag.Int64("ioengine.size", 1<<30, "benchmarks: the size of the fresh file, in bytes")
	benchBuffered    = flag.Bool("ioengine.buffered", false, "benchmarks: no O_DIRECT (a cached file measures the engine's own cost)")
	benchVerify      = flag.Bool("ioengine.verify", false, "benchmarks: check every byte read (the fresh file only)")
	benchInlineWrite = flag.Bool("ioengine.inline-write", true, "BenchmarkUringInline: writes (false: reads)")
	benchFill        = flag.String("ioengine.fill", "datagen", "benchmarks: how writes are filled: datagen (the replay's bytes) or none (the buffer as it is, as fio does)")
	benchDepth       = flag.Int("ioengine.depth", 32, "benchmarks: ops in flight")
)

// benchDir is the benchmarks' fresh file, made on first use and removed
// by TestMain, so every benchmark and every b.N shares it.
var benchDir struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir.dir != "" {
		os.RemoveAll(benchDir.dir)
	}
	os.Exit(code)
}

// benchFile returns the path and size of the benchmarks' file.
func benchFile(b *testing.B) (string, int64) {
	b.Helper()
	if *benchFileFlag != "" {
		fi, err := os.Stat(*benchFileFlag)
		if err != nil {
			b.Fatal(err)
		}
		return *benchFileFlag, fi.Size()
	}
	benchDir.once.Do(func() {
		// /tmp may be a tmpfs: a disk file system is the point.
		if benchDir.dir, benchDir.err = os.MkdirTemp("/var/tmp", "ioengine-bench-"); benchDir.err != nil {
			return
		}
		benchDir.path = filepath.Join(benchDir.dir, "extent")
		benchDir.err = layOut(benchDir.path, *benchSizeFlag)
	})
	if benchDir.err != nil {
		b.Fatal(benchDir.err)
	}
	return benchDir.path, *benchSizeFlag
}

// layOut writes a file of size bytes with O_DIRECT, 1 MiB at a time, as
// fio lays out its files.
func layOut(path string, size int64) error {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf := AlignedBuffer(1<<20, 4096)
	g := datagen.New(1)
	for off := int64(0); off < size; off += int64(len(buf)) {
		p := buf[:min(int64(len(buf)), size-off)]
		g.Fill(p, "bench", 1, off) // what the benchmarks write, so reads verify
		if _, err := unix.Pwrite(fd, p, off); err != nil {
			return fmt.Errorf("lay out %s: %w", path, err)
		}
	}
	return unix.Fsync(fd)
}

// genData is the replay's Data: datagen's bytes, reads verified when
// verify is set (kvreplay --verify).
type genData struct {
	g      *datagen.Generator
	verify bool
}

func (d genData) Fill(p []byte, op *Op) {
	if d.g != nil {
		d.g.Fill(p, op.Key, op.Version, op.Off)
	}
}

func (d genData) FillDevice(p []byte, op *Op) {
	if d.g != nil {
		d.g.FillDevice(p, op.Key, op.Version, op.Off)
	}
}

func (d genData) Check(p []byte, op *Op) error {
	if !d.verify || d.g == nil {
		return nil
	}
	if bad, ok := d.g.Verify(p, op.Key, op.Version, op.Off); !ok {
		return fmt.Errorf("%w: %s at %d", errMismatch, op.Key, bad)
	}
	return nil
}

// benchData is the benchmarks' Data, as the flags say.
func benchData() Data {
	if *benchFill == "none" {
		return genData{}
	}
	return genData{datagen.New(1), *benchVerify}
}

// benchEngine runs b.N ops of bs bytes through engine name, Depth in
// flight, at random offsets of the benchmarks' file. It drives the
// engine as the scheduler's event loop does: wait for one completion,
// drain every other one ready, then submit a new op for each.
func benchEngine(b *testing.B, name string, bs int64, write bool) {
	b.Helper()
	depth := *benchDepth
	done := make(chan *Op, depth)
	e, err := New(name, Params{Depth: depth, BlockSize: bs, Data: benchData(), Done: done})
	if err != nil {
		b.Skip(err)
	}
	runBench(b, e, done, depth, bs, write)
}

func runBench(b *testing.B, e Engine, done chan *Op, depth int, bs int64, write bool) {
	path, size := benchFile(b)
	fd, _ := openFile(b, path, 0)
	if *benchBuffered {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err == nil {
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_DIRECT)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	obj := &fileObj{fd: fd}
	blocks := size / bs
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) // no run replays another's offsets
	ops := make([]Op, depth)
	for i := range ops {
		ops[i] = Op{Obj: obj, Write: write, N: bs, Key: "bench", Version: 1}
	}
	batch := make([]*Op, 0, depth)
	b.SetBytes(bs)
	b.ReportAllocs()
	b.ResetTimer()
	issued, completed := 0, 0
	for ; issued < min(depth, b.N); issued++ {
		ops[issued].Off = rng.Int64N(blocks) * bs
		e.Submit(&ops[issued])
	}
	for completed < b.N {
		batch = append(batch[:0], next(e, done))
	drain:
		for {
			select {
			case op := <-done:
				batch = append(batch, op)
			default:
				break drain
			}
		}
		for _, op := range batch {
			if op.Err != nil {
				b.Fatalf("%s at %d: %v", map[bool]string{true: "write", false: "read"}[write], op.Off, op.Err)
			}
			completed++
			if issued < b.N {
				op.Off = rng.Int64N(blocks) * bs
				e.Submit(op)
				issued++
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "IOPS")
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
}

// next returns the next op e completes: from Done, polling e, on this
// goroutine, when it is a Poller.
func next(e Engine, done chan *Op) *Op {
	p, ok := e.(Poller)
	if !ok {
		return <-done
	}
	for {
		p.Poll()
		select {
		case op := <-done:
			return op
		default:
		}
		p.Wait(nil)
	}
}

func benchRW(b *testing.B, name string, bs int64) {
	b.Run("randwrite", func(b *testing.B) { benchEngine(b, name, bs, true) })
	b.Run("randread", func(b *testing.B) { benchEngine(b, name, bs, false) })
}

// BenchmarkUring4K: 4 KiB random writes and reads, Depth 32, through the
// uring engine; fio's randwrite and randread with bs=4k and iodepth=32 on
// the same file are the bar.
func BenchmarkUring4K(b *testing.B) { benchRW(b, "uring", 4<<10) }

// BenchmarkUring1M: 1 MiB random writes and reads through the uring
// engine, data made on its CPU goroutines.
func BenchmarkUring1M(b *testing.B) { benchRW(b, "uring", 1<<20) }

// BenchmarkPsync4K: 4 KiB through the psync engine's Depth goroutines.
func BenchmarkPsync4K(b *testing.B) { benchRW(b, "psync", 4<<10) }

// BenchmarkPsync1M: 1 MiB through the psync engine.
func BenchmarkPsync1M(b *testing.B) { benchRW(b, "psync", 1<<20) }

// BenchmarkUringInline writes blocks of sizes around inlineMax with the
// data made on the ring's goroutine and on the CPU goroutines: where
// inline stops winning is where inlineMax belongs.
func BenchmarkUringInline(b *testing.B) {
	for _, bs := range []int64{4 << 10, 16 << 10, 64 << 10, 128 << 10, 256 << 10} {
		for _, inline := range []bool{true, false} {
			where := map[bool]string{true: "inline", false: "cpu"}[inline]
			b.Run(fmt.Sprintf("%dKiB/%s", bs>>10, where), func(b *testing.B) {
				depth := *benchDepth
				done := make(chan *Op, depth)
				e, err := newUringEngine(Params{Depth: depth, BlockSize: bs, Data: benchData(), Done: done}, inline)
				if err != nil {
					b.Skip(err)
				}
				runBench(b, e, done, depth, bs, *benchInlineWrite)
			})
		}
	}
}
