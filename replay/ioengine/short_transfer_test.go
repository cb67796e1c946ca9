package ioengine

import (
	"io"
	"testing"
)

// shortObj moves half of what is asked and says nothing (an Object that
// breaks io.ReaderAt's and io.WriterAt's rule); and a full read that ends
// the object reports io.EOF with it, which io.ReaderAt allows.
type shortObj struct {
	memObj
	fullEOF bool
}

func (o *shortObj) WriteAt(p []byte, off int64) (int, error) {
	return copy(o.b[off:], p[:len(p)/2]), nil
}

func (o *shortObj) ReadAt(p []byte, off int64) (int, error) {
	if o.fullEOF {
		return copy(p, o.b[off:]), io.EOF
	}
	return copy(p[:len(p)/2], o.b[off:]), nil
}

// TestPsyncShortTransfer: psync takes a short write or read (n <
// N, no error) as a success, and a full read at the object's end that
// says io.EOF (allowed by io.ReaderAt) as a failure.
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
	if op := <-done; op.Err != nil && !isCheck(op.Err) {
		t.Errorf("read of all 4096 bytes, io.EOF at the end: %v", op.Err)
	}
}

func isCheck(err error) bool { return false }
