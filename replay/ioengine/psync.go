package ioengine

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
)

// psync is a pool of Depth goroutines, each with its own aligned buffer,
// calling the Object's ReadAt and WriteAt: the engine of RAM objects, and
// of files where io_uring is refused or not wanted.
type psync struct {
	p  Params
	in chan *Op
	wg sync.WaitGroup
}

func newPsync(p Params) *psync {
	e := &psync{p: p, in: make(chan *Op, p.queue())}
	for range p.Depth {
		e.wg.Add(1)
		go e.worker()
	}
	return e
}

func (e *psync) Name() string               { return "psync" }
func (e *psync) Serves(backend.Object) bool { return true }
func (e *psync) Submit(op *Op)              { e.in <- op }

func (e *psync) Close() error {
	close(e.in)
	e.wg.Wait()
	return nil
}

func (e *psync) worker() {
	defer e.wg.Done()
	var buf []byte // on first use: a pool that serves no op allocates nothing
	for op := range e.in {
		if buf == nil {
			buf = AlignedBuffer(int(e.p.BlockSize), bufferAlign(e.p.BlockSize))
		}
		p := buf[:op.N]
		var n int
		if op.Write {
			e.p.Data.Fill(p, op)
			if n, op.Err = op.Obj.WriteAt(p, op.Off); op.Err == nil && n < len(p) {
				op.Err = fmt.Errorf("ioengine: psync: write %q at offset %d: %d of %d bytes: %w", op.Key, op.Off, n, len(p), io.ErrShortWrite)
			}
		} else {
			n, op.FirstByte, op.Err = readAt(op.Obj, p, op.Off)
			switch {
			case op.Err == io.EOF && n == len(p):
				op.Err = nil // io.ReaderAt's full read at the end
			case (op.Err == nil || op.Err == io.EOF) && n < len(p):
				// Short, or cut short by the object's end (a file
				// truncated behind the run's back): say where.
				op.Err = fmt.Errorf("ioengine: psync: read %q at offset %d: %d of %d bytes: %w", op.Key, op.Off, n, len(p), io.ErrUnexpectedEOF)
			}
			if op.Err == nil {
				op.Err = e.p.Data.Check(p, op)
			}
		}
		e.p.Done <- op
		e.p.notify()
	}
}

// bufferAlign is the alignment of a buffer of blocks of bs bytes: bs's
// largest power-of-two divisor, at least 4 KiB and at most 2 MiB. A
// backend's alignment (Caps().Align: 64 KiB on a device of such logical
// blocks) divides its blocks, so their buffers meet it: the backends'
// ReadAt and WriteAt check the buffer's address against it (CheckIO).
// The uring engine's buffers, cut from one region (page-aligned, and
// huge-page-aligned from 2 MiB on), skip that check: the kernel asks of
// O_DIRECT memory only its dio_mem_align (512 bytes or less, as a rule).
func bufferAlign(bs int64) int {
	a := bs & -bs
	return int(min(max(a, 4<<10), 2<<20))
}

// readAt reads p at off of obj, with the instant its first byte came
// where obj knows it (backend.FirstByteReader).
func readAt(obj backend.Object, p []byte, off int64) (int, time.Time, error) {
	if fb, ok := obj.(backend.FirstByteReader); ok {
		return fb.ReadAtFirstByte(p, off)
	}
	n, err := obj.ReadAt(p, off)
	return n, time.Time{}, err
}

func init() {
	Register(Info{Name: "psync", Kind: Pooled, Doc: "a pool of pread/pwrite goroutines per backend",
		New: func(p Params) (Engine, error) { return newPsync(p), nil }})
}
