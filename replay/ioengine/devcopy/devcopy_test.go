package devcopy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/internal/cuda/cudatest"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/replay/ram"
)

// keyed makes a block's bytes from its key and offset, and checks them.
type keyed struct{}

func (keyed) Fill(p []byte, op *ioengine.Op) {
	for i := range p {
		p[i] = byte(len(op.Key)*31 + int(op.Off) + i*7)
	}
	binary.LittleEndian.PutUint64(p, uint64(op.Off))
}

func (keyed) Check(p []byte, op *ioengine.Op) error {
	want := make([]byte, len(p))
	keyed{}.Fill(want, op)
	if !bytes.Equal(p, want) {
		return fmt.Errorf("%s at %d: bytes differ", op.Key, op.Off)
	}
	return nil
}

// devKeyed is keyed with a FillDevice that counts its calls.
type devKeyed struct {
	keyed
	dev atomic.Int64
}

func (d *devKeyed) FillDevice(p []byte, op *ioengine.Op) {
	d.dev.Add(1)
	d.Fill(p, op)
}

// fakeGPU is a gpu backend over the fake CUDA runtime.
func fakeGPU(t *testing.T) *gpu.Backend {
	t.Helper()
	cudatest.Setenv(t, "FAKE_CUDA_MEM", "268435456")
	rt, err := cuda.Load(cudatest.FakeRuntime(t))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := gpu.New(rt, gpu.Options{Capacity: 16 << 20, Slots: 4, StageBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// run submits ops to e and waits for them all.
func run(t *testing.T, e ioengine.Engine, done chan *ioengine.Op, ops []*ioengine.Op) {
	t.Helper()
	for _, op := range ops {
		e.Submit(op)
	}
	for range ops {
		<-done
	}
}

// TestServesGPUObjects: the engine serves the gpu tier's objects, not
// others; a write's blocks are made in its pinned buffers (by the Data's
// FillDevice) and copied to
// the device, a read's copied back and checked, a buffer a worker made,
// and the gpu tier counts the copies. A block read at the
// wrong offset fails its check.
func TestServesGPUObjects(t *testing.T) {
	g := fakeGPU(t)
	r, err := ram.New(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const depth, block, size = 3, 64 << 10, 1 << 20
	done := make(chan *ioengine.Op, 64)
	data := &devKeyed{}
	e, err := New(nil)(ioengine.Params{Depth: depth, BlockSize: block, Data: data, Done: done})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	objs := map[string]backend.Object{}
	for _, k := range []string{"a", "bb", "ccc"} {
		if objs[k], err = g.Open(k, size, true); err != nil {
			t.Fatal(err)
		}
	}
	onRAM, err := r.Open("r", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Serves(objs["a"]) || e.Serves(onRAM) {
		t.Fatalf("Serves: gpu object %v, RAM object %v; want true, false", e.Serves(objs["a"]), e.Serves(onRAM))
	}
	blocks := func(write bool) []*ioengine.Op {
		var ops []*ioengine.Op
		for k, o := range objs {
			for off := int64(0); off < size; off += block {
				ops = append(ops, &ioengine.Op{Obj: o, Key: k, Write: write, Off: off, N: block})
			}
		}
		return ops
	}
	before := g.Copies()
	for _, write := range []bool{true, false} {
		ops := blocks(write)
		run(t, e, done, ops)
		for _, op := range ops {
			if op.Err != nil {
				t.Fatalf("write %v: %v", write, op.Err)
			}
		}
	}
	// The blocks are made with FillDevice: the GPU reads them next.
	if n := int64(len(objs) * size / block); data.dev.Load() != n {
		t.Errorf("FillDevice made %d blocks of %d written", data.dev.Load(), n)
	}
	c := g.Copies()
	if n := int64(len(objs) * size); c.H2D.Bytes-before.H2D.Bytes != n || c.D2H.Bytes-before.D2H.Bytes != n {
		t.Errorf("the gpu tier counted %+v; want %d bytes each way", c, n)
	}
	eng := e.(*engine)
	for dev, bs := range eng.bufs {
		if len(bs.all) != depth {
			t.Errorf("GPU %d: %d pinned buffers made for %d workers", dev, len(bs.all), depth)
		}
	}
	// A block read back as if it lay elsewhere fails its check.
	bad := &ioengine.Op{Obj: objs["a"], Key: "a", Off: 0, N: block}
	run(t, e, done, []*ioengine.Op{bad})
	bad2 := &ioengine.Op{Obj: objs["a"], Key: "bb", Off: 0, N: block}
	run(t, e, done, []*ioengine.Op{bad2})
	if bad.Err != nil || bad2.Err == nil {
		t.Errorf("reads: the right key %v, the wrong key %v; want nil, an error", bad.Err, bad2.Err)
	}
	// A block of a move whose source the engine cannot move from (a RAM
	// object that is not in an arena it pins, here a plain object) is
	// served as a write of its own bytes, not taken as a move.
	other := &ioengine.Op{Obj: objs["a"], Key: "a", Write: true, Off: 0, N: block, From: plainObject{}}
	run(t, e, done, []*ioengine.Op{other})
	if other.Err != nil {
		t.Errorf("a block with a source no mover takes: %v", other.Err)
	}
}

// plainObject is an object in no arena.
type plainObject struct{}

func (plainObject) ReadAt([]byte, int64) (int, error)  { return 0, errors.ErrUnsupported }
func (plainObject) WriteAt([]byte, int64) (int, error) { return 0, errors.ErrUnsupported }
func (plainObject) Close() error                       { return nil }
func (plainObject) Remove() error                      { return nil }
