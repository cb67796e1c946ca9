package gds

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/replaytest"
)

// fileObject is an object at off of an open file, as the nvme tier's are.
type fileObject struct {
	f   *os.File
	off int64
}

func (o fileObject) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, o.off+off) }
func (o fileObject) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, o.off+off) }
func (o fileObject) Close() error                             { return nil }
func (o fileObject) Remove() error                            { return nil }
func (o fileObject) Fd() uintptr                              { return o.f.Fd() }
func (o fileObject) Offset() int64                            { return o.off }

var _ backend.FdObject = fileObject{}

// noData makes and checks nothing: a move's bytes come from its source.
type noData struct{}

func (noData) Fill([]byte, *ioengine.Op)        {}
func (noData) Check([]byte, *ioengine.Op) error { return nil }

// fixture is a gpu backend and an opened cuFile driver over the fakes.
func fixture(t *testing.T, capacity int64) (*gpu.Backend, *cuda.CuFile) {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	rt, err := cuda.Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := gpu.New(rt, gpu.Options{Capacity: capacity, Slots: 2, StageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f, err := cuda.LoadCuFile(cudatest.FakeCuFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return g, f
}

// tempFile is a new file of n zero bytes.
func tempFile(t *testing.T, n int64) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "obj"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(n); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMovesThroughFile_mt3 pins a demotion and a promotion of blocks of a
// GPU object that lies in pieces, at a nonzero block offset, to and from
// an object at a nonzero offset of its file: the file holds the object's
// bytes where the object's offset puts them, the promotion brings them
// back, each direction's stats count its blocks and bytes, the arena is
// registered with cuFile once and deregistered at Close, and the file is
// deregistered when its blocks are done.
// With FAKE_CUFILE_MAX set, cuFile moves fewer bytes a call than asked
// for, and the engine goes on from where each call stopped.
func TestMovesThroughFile_mt3(t *testing.T) {
	for _, most := range []string{"", "5000"} {
		t.Run("max="+most, func(t *testing.T) {
			if most != "" {
				cudatest.Setenv(t, "FAKE_CUFILE_MAX", most)
			}
			movesThroughFile(t)
		})
	}
}

// TestSecondsAddUp_mt3 pins a direction's seconds: the sum of its blocks'
// cuFile times. Each call of the fake takes 2 ms at least (a slow
// device), so three blocks take 6 ms at least.
func TestSecondsAddUp_mt3(t *testing.T) {
	g, f := fixture(t, 1<<20)
	obj, err := g.Open("k", 3*4096, true)
	if err != nil {
		t.Fatal(err)
	}
	file := fileObject{tempFile(t, 3*4096), 0}
	var st Stats
	done := make(chan *ioengine.Op, 1)
	e, err := New(f, func(s Stats) { st = s })(ioengine.Params{Depth: 1, BlockSize: 4096, Data: noData{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	cudatest.Setenv(t, "FAKE_CUFILE_DELAY_US", "2000")
	for off := int64(0); off < 3*4096; off += 4096 {
		op := &ioengine.Op{Obj: file, From: obj, Key: "k", Write: true, Off: off, N: 4096}
		e.Submit(op)
		if <-done; op.Err != nil {
			t.Fatal(op.Err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if st.ToFile.Blocks != 3 || st.ToFile.Seconds < 0.006 {
		t.Errorf("to files: %+v; want 3 blocks taking 0.006 s at least", st.ToFile)
	}
}

func movesThroughFile(t *testing.T) {
	const capacity, size, block, fileOff = 256 << 10, 128 << 10, 32 << 10, 8192
	g, f := fixture(t, capacity)
	src := replaytest.InPieces(t, g, capacity, "src", 20<<10, size)
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i*11 + i>>12)
	}
	if _, err := src.WriteAt(want, 0); err != nil {
		t.Fatal(err)
	}
	file := tempFile(t, fileOff+size)
	onFile := fileObject{file, fileOff}
	var st *Stats
	done := make(chan *ioengine.Op, 8)
	e, err := New(f, func(s Stats) { st = &s })(ioengine.Params{Depth: 2, BlockSize: block, Data: noData{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	if !e.(ioengine.Mover).Moves(onFile, src) || !e.(ioengine.Mover).Moves(src, onFile) {
		t.Errorf("Moves between a GPU object and a file object: false")
	}
	r, err := ram.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	onRAM, err := r.Open("r", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	if e.(ioengine.Mover).Moves(onFile, onRAM) || e.(ioengine.Mover).Moves(onRAM, onFile) {
		t.Errorf("Moves between a RAM object and a file object: true")
	}
	run := func(dst, from backend.Object) {
		for off := int64(block); off < size; off += block {
			op := &ioengine.Op{Obj: dst, From: from, Key: "k", Write: true, Off: off, N: block}
			e.Submit(op)
			if <-done; op.Err != nil {
				t.Fatal(op.Err)
			}
		}
	}
	run(onFile, src)
	onDisk := make([]byte, size)
	if _, err := file.ReadAt(onDisk, fileOff); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk[block:], want[block:]) || !bytes.Equal(onDisk[:block], make([]byte, block)) {
		t.Errorf("the file does not hold the demoted blocks at the object's offsets")
	}
	// The file is deregistered when its blocks are done: cuFile takes it
	// again.
	if h, err := f.RegisterFile(int(file.Fd())); err != nil {
		t.Errorf("the file after its blocks: %v; still registered", err)
	} else {
		f.DeregisterFile(h)
	}
	// The promotion goes to an object the arena cuts elsewhere.
	for _, k := range []string{"src", "src-after"} {
		o, err := g.Open(k, map[string]int64{"src": size, "src-after": capacity - size}[k], false)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Remove(); err != nil {
			t.Fatal(err)
		}
	}
	dst := replaytest.InPieces(t, g, capacity, "dst", 36<<10, size)
	run(dst, onFile)
	got := make([]byte, size)
	if _, err := dst.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[block:], want[block:]) {
		t.Errorf("the promoted blocks differ from the demoted ones")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	n := int64(size/block - 1)
	if st == nil || st.ToFile.Blocks != n || st.ToFile.Bytes != n*block || st.FromFile.Blocks != n || st.FromFile.Bytes != n*block ||
		st.ToFile.Seconds <= 0 || st.FromFile.Seconds <= 0 || st.BufferRegistration != "registered" {
		t.Errorf("stats %+v; want %d blocks of %d bytes each way, timed, the arena registered", st, n, block)
	}
	a, _ := gpu.ArenaOf(src.(arena.Spanner).Arena())
	if err := f.RegisterBuffer(a.Base, uint64(a.Size)); err != nil {
		t.Errorf("registering the arena after Close: %v; Close left it registered", err)
	} else {
		f.DeregisterBuffer(a.Base)
	}
}

// TestFileUses_mt3 pins the file registrations' count: a file is
// registered once for the blocks using it at once and deregistered when
// the last is done, not before.
func TestFileUses_mt3(t *testing.T) {
	_, f := fixture(t, 1<<20)
	fd := tempFile(t, 4096).Fd()
	e := &gdsEngine{f: f, regs: map[uintptr]error{}, files: map[uintptr]*file{}}
	h1, err := e.openFile(fd)
	if err != nil {
		t.Fatal(err)
	}
	h2, err := e.openFile(fd)
	if err != nil || h2 != h1 {
		t.Fatalf("a second block's handle = %v, %v; want the first's", h2, err)
	}
	registered := func() bool {
		h, err := f.RegisterFile(int(fd))
		if err == nil {
			f.DeregisterFile(h)
		}
		return err != nil
	}
	e.closeFile(fd)
	if !registered() {
		t.Errorf("the file deregistered with a block still using it")
	}
	e.closeFile(fd)
	if registered() {
		t.Errorf("the file still registered after its last block")
	}
}

// TestMoveFailures_mt3 pins a move's errors: a file that ends before the
// block (cuFile moves no bytes) and a device that cannot be made current
// fail the block, naming the key, its bytes and offset and the cause.
func TestMoveFailures_mt3(t *testing.T) {
	g, f := fixture(t, 1<<20)
	obj, err := g.Open("k", 8192, true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *ioengine.Op, 1)
	e, err := New(f, nil)(ioengine.Params{Depth: 1, BlockSize: 4096, Data: noData{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	short := fileObject{tempFile(t, 4096), 0}
	op := &ioengine.Op{Obj: obj, From: short, Key: "k", Write: true, Off: 4096, N: 4096}
	e.Submit(op)
	<-done
	if op.Err == nil || !strings.HasPrefix(op.Err.Error(), "gds: k, 4096 bytes at 4096: ") ||
		!strings.Contains(op.Err.Error(), "cuFile moved no bytes at file offset 4096") {
		t.Errorf("a promotion past the file's end: %v", op.Err)
	}
	cudatest.Setenv(t, "FAKE_CUDA_DEVICES", "0") // cudaSetDevice fails from here on
	op = &ioengine.Op{Obj: short, From: obj, Key: "k", Write: true, Off: 0, N: 4096}
	e.Submit(op)
	<-done
	var ce *cuda.Error
	if !errors.As(op.Err, &ce) || ce.Call != "cudaSetDevice" {
		t.Errorf("a demotion with cudaSetDevice failing: %v", op.Err)
	}
}

// TestMoveNoSpace: a demotion whose cuFileWrite fails with ENOSPC (the
// fake's pwrite to /dev/full) fails with an error that matches
// backend.ErrNoSpace as well as the errno, as the other engines' and the
// file backends' do: the replay stops on a full disk by that. It matched
// the errno only.
func TestMoveNoSpace(t *testing.T) {
	g, f := fixture(t, 1<<20)
	obj, err := g.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	done := make(chan *ioengine.Op, 1)
	e, err := New(f, nil)(ioengine.Params{Depth: 1, BlockSize: 4096, Data: noData{}, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	op := &ioengine.Op{Obj: fileObject{full, 0}, From: obj, Key: "k", Write: true, N: 4096}
	e.Submit(op)
	<-done
	if !errors.Is(op.Err, backend.ErrNoSpace) || !errors.Is(op.Err, syscall.ENOSPC) {
		t.Errorf("a demotion to a full device: %v; want an error matching backend.ErrNoSpace and ENOSPC", op.Err)
	}
}
