package ioengine

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/backend"
)

// shortObj moves half of what is asked and says nothing (an Object that
// breaks io.ReaderAt's and io.WriterAt's rule); and a full read that ends
// the object reports io.EOF with it, which io.ReaderAt allows.
type shortObj struct {
	memObj
	fullEOF, cutEOF bool
}

func (o *shortObj) WriteAt(p []byte, off int64) (int, error) {
	return copy(o.b[off:], p[:len(p)/2]), nil
}

func (o *shortObj) ReadAt(p []byte, off int64) (int, error) {
	if o.fullEOF {
		return copy(p, o.b[off:]), io.EOF
	}
	if o.cutEOF { // a file cut short behind the run's back
		return copy(p, o.b[off:len(o.b)/2]), io.EOF
	}
	return copy(p[:len(p)/2], o.b[off:]), nil
}

// TestPsyncShortTransfer: psync fails a short write or read (n < N, no
// error), and a read cut short by the object's end (io.EOF) with the key,
// the offset and io.ErrUnexpectedEOF, not a bare EOF; a full read at the
// object's end that says io.EOF (io.ReaderAt allows it) succeeds. Before,
// the first two were successes, the last a failure.
func TestPsyncShortTransfer(t *testing.T) {
	e, _, done := newEngine(t, "psync", 1, 4096)
	obj := &shortObj{memObj: memObj{b: make([]byte, 4096)}}
	e.Submit(&Op{Obj: obj, Write: true, Off: 0, N: 4096, Key: "k"})
	if op := <-done; op.Err == nil {
		t.Errorf("write of 4096 bytes that moved 2048: no error")
	}
	e.Submit(&Op{Obj: obj, Off: 0, N: 4096, Key: "k"})
	if op := <-done; op.Err == nil {
		t.Errorf("read of 4096 bytes that moved 2048: no error")
	}
	obj.fullEOF = true
	fillHash(obj.b, "k", 0, 0)
	e.Submit(&Op{Obj: obj, Off: 0, N: 4096, Key: "k"})
	if op := <-done; op.Err != nil {
		t.Errorf("read of all 4096 bytes, io.EOF at the end: %v", op.Err)
	}
	obj.fullEOF, obj.cutEOF = false, true
	e.Submit(&Op{Obj: obj, Off: 0, N: 4096, Key: "k"})
	if op := <-done; !errors.Is(op.Err, io.ErrUnexpectedEOF) || !strings.Contains(errText(op.Err), `"k" at offset 0: 2048 of 4096 bytes`) {
		t.Errorf("read of 4096 bytes of an object cut to 2048: %v; want the key, the offset, the bytes and io.ErrUnexpectedEOF", op.Err)
	}
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// alignedObj refuses a transfer whose buffer, offset or length is not a
// multiple of align, as a device of large logical blocks (16 or 64 KiB)
// refuses O_DIRECT.
type alignedObj struct {
	memObj
	align int
}

func (o *alignedObj) WriteAt(p []byte, off int64) (int, error) {
	if _, err := backend.CheckIO(p, off, int64(len(o.b)), o.align, true); err != nil {
		return 0, err
	}
	return o.memObj.WriteAt(p, off)
}

// TestPsyncBuffersAlignedToBlocks: psync's buffers are aligned to the
// block size's largest power-of-two divisor, so that a backend of large
// logical blocks (Caps().Align 64 KiB: nvme and extent take it from
// STATX_DIOALIGN and BLKSSZGET) gets aligned buffers; they were aligned to
// 4 KiB only, and such a backend's blocks failed ErrMisaligned.
func TestPsyncBuffersAlignedToBlocks(t *testing.T) {
	const bs, depth = 256 << 10, 16
	e, _, done := newEngine(t, "psync", depth, bs)
	obj := &alignedObj{memObj: memObj{b: make([]byte, depth*bs)}, align: 64 << 10}
	for round := range 4 {
		for i := range depth {
			e.Submit(&Op{Obj: obj, Write: true, Off: int64(i) * bs, N: bs, Key: "k"})
		}
		for range depth {
			if op := <-done; op.Err != nil {
				t.Fatalf("round %d: %v", round, op.Err)
			}
		}
	}
}
