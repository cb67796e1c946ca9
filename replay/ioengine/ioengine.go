// Package ioengine owns kvreplay's I/O engines: the layer that moves the
// bytes of one block of an object, as fio's ioengines do for its jobs. The
// scheduler (package replay) splits object operations into Ops and submits
// them; an engine runs them and hands each back, completed, on its Done
// channel. An engine knows nothing of traces, keys' order or requests, and
// holds no pointer into the scheduler: adding one (a GPU copy engine, say)
// touches no scheduler code.
//
// Engines register themselves by name (registry.go, as fio's
// register_ioengine): "psync" (psync.go: a pool of goroutines calling
// ReadAt/WriteAt, for any Object) and "uring" (uring.go: a Poller,
// io_uring through raw system calls, batched submission and completion,
// O_DIRECT, registered buffers; for backend.FdObject objects only). An
// engine is one file of this package; Register's Info says how a replay
// uses it.
package ioengine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// Op is one block I/O of an object. The submitter owns it until the engine
// sends it back on Params.Done; the engine sets Err and touches nothing
// else.
type Op struct {
	Obj   backend.Object
	Write bool
	// Off and N are the block's offset in the object and its length,
	// multiples of the backend's alignment.
	Off, N int64
	// Key, Version and Tier identify the data: a block's bytes derive from
	// (Key, Version, Off) through Params.Data.
	Key     string
	Version uint64
	Tier    schema.Tier
	// From is set on a block of a move given to a Mover: the object
	// whose bytes at Off the block copies to Obj (the key's copy on the
	// tier it leaves), instead of generating them.
	From backend.Object
	// Err is the block's error, set by the engine.
	Err error
	// FirstByte is when the first byte of a read came, set by the engine
	// for an Obj that knows it (backend.FirstByteReader); zero otherwise.
	FirstByte time.Time
	// User is the submitter's; engines never look at it.
	User any
}

// Data makes and checks a block's bytes. Engines call it on their CPU
// goroutines, concurrently.
type Data interface {
	// Fill writes the bytes of op's block into p (len(p) == op.N).
	Fill(p []byte, op *Op)
	// Check verifies the bytes read into p; nil when they are right or
	// when nothing is checked.
	Check(p []byte, op *Op) error
}

// DeviceFiller is a Data that also fills buffers a device reads next and
// the CPU does not (an O_DIRECT write's, read by DMA), bypassing the CPU's
// caches where it can (datagen.Generator.FillDevice). The engines that
// write from buffers of their own use it when Params.Data has it.
type DeviceFiller interface {
	// FillDevice writes the same bytes as Fill.
	FillDevice(p []byte, op *Op)
}

// Engine moves blocks. Submit and Close are called from one goroutine.
// An engine that is not a Poller completes ops on goroutines of its own;
// a Poller only in its Poll, Wait and Close.
type Engine interface {
	// Name is the engine's name in results ("psync", "uring").
	Name() string
	// Serves reports whether the engine can move obj's bytes.
	Serves(obj backend.Object) bool
	// Submit starts op, or queues it behind the Depth ops in flight. It
	// does not block while the caller keeps at most Params.Queue ops of
	// this engine submitted and not yet received from Done, even when
	// none of them can complete; its queue is then full (fio's
	// FIO_Q_BUSY) and the caller submits no more until it receives an op
	// from Done. Done holds Queue ops, so the engine never waits on the
	// caller either. enginetest.RunEngine enforces both (RunFactory for
	// an engine the registry does not know, as the movers).
	Submit(op *Op)
	// Close waits for the ops in flight (they are still sent on Done) and
	// releases the engine.
	Close() error
}

// Mover is an engine that moves an object's bytes from its copy on
// another tier itself, device to device, as GPUDirect Storage moves them
// between GPU memory and a file without staging through host memory. The
// scheduler gives the blocks of a move (a demotion or promotion, whose
// bytes do not change) to the first Mover that Moves them, with Op.From
// set and Op.Write true; every other transfer goes to the engines that
// Serve its object.
type Mover interface {
	Engine
	// Moves reports whether the engine can copy blocks from from to dst.
	Moves(dst, from backend.Object) bool
}

// Workers is the body of an engine whose calls block (a Mover's copies):
// do runs for each op submitted on one of n goroutines, and the op goes
// back on Params.Done with do's error.
type Workers struct {
	p  Params
	in chan *Op
	wg sync.WaitGroup
}

// NewWorkers starts n goroutines that run do. Its queue holds the
// Params.Queue ops the submitter may keep submitted (the engine
// contract), whatever n.
func NewWorkers(p Params, n int, do func(*Op) error) *Workers {
	w := &Workers{p: p, in: make(chan *Op, max(p.queue(), n))}
	for range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for op := range w.in {
				op.Err = do(op)
				p.Done <- op
				p.notify()
			}
		}()
	}
	return w
}

// Submit hands op to a goroutine; it does not block while the caller
// keeps at most Params.Queue ops submitted and not received from Done.
func (w *Workers) Submit(op *Op) { w.in <- op }

// Close waits for the ops submitted, which are still sent on Done.
func (w *Workers) Close() {
	close(w.in)
	w.wg.Wait()
}

// Factory makes an engine: a registered one (Info.New), or a Mover, from
// the package of the backend whose memory it reaches (replay.Hooks).
type Factory func(Params) (Engine, error)

// Poller is an engine that runs on its submitter's goroutine, as fio's
// engines run on their job's thread: Submit prepares requests, Poll hands
// them to the device and sends the ops completed so far on Done, and Wait
// sleeps until one completes. No goroutine handoff per op: the submitter
// takes its completions from Done without waiting for another goroutine.
// Every method but Wake is called from the submitter's goroutine.
type Poller interface {
	Engine
	// Poll submits what was prepared and sends the ops completed so far
	// on Done, without blocking.
	Poll()
	// Busy reports whether ops are in the engine.
	Busy() bool
	// Wait blocks while the engine is busy until an op completes (it is
	// then sent on Done) or Wake is called. Once a Wake would end it,
	// Wait calls ready, when not nil, and returns at once if ready
	// reports work the submitter has been handed meanwhile.
	Wait(ready func() bool)
	// Wake ends a Wait, from any goroutine: whoever hands the submitter
	// work (sends on a channel it reads) calls it after doing so.
	Wake()
}

// Params configure an engine.
type Params struct {
	// Depth is the most ops in flight: in the kernel, or in the hands of
	// the engine's workers. It is what fio calls iodepth.
	Depth int
	// Queue is the most ops the submitter keeps submitted and not yet
	// received from Done: Depth when 0, else at least Depth. The ops
	// beyond Depth wait in the engine, which starts one the moment an op
	// in flight completes, without a round trip through the submitter: a
	// queue of 2*Depth keeps Depth ops at the device while the submitter
	// prepares the next (replay's BenchmarkEngineExtentSmall, 4 KiB
	// objects at depth 32 on 2 busy cores, alternating runs: 1.04 to 1.7
	// times the IOPS of a queue of Depth, whose ring averaged 26 to 29
	// requests in the kernel where this one has 32).
	Queue int
	// BlockSize is the largest Op.N.
	BlockSize int64
	// Data fills and checks blocks.
	Data Data
	// Done receives every submitted op once it completed. Its buffer must
	// hold Queue ops, so an engine never waits on the submitter.
	Done chan<- *Op
	// Notify, when set, is called after each op an engine's own
	// goroutine sends on Done: a submitter that sleeps in a Poller's Wait
	// passes the Poller's Wake.
	Notify func()
}

// notify calls Notify when it is set.
func (p Params) notify() {
	if p.Notify != nil {
		p.Notify()
	}
}

// DeviceFill is how an engine that writes from buffers of its own fills
// them: Data's FillDevice where it has one (DeviceFiller), else its Fill.
func (p Params) DeviceFill() func(b []byte, op *Op) {
	if df, ok := p.Data.(DeviceFiller); ok {
		return df.FillDevice
	}
	return p.Data.Fill
}

// queue is Queue with its default.
func (p Params) queue() int { return max(p.Queue, p.Depth) }

// ErrUnavailable is wrapped by New when the kernel or the machine does not
// offer the engine (io_uring disabled, say); the caller may fall back.
var ErrUnavailable = errors.New("engine unavailable")

// New returns the engine registered as name.
func New(name string, p Params) (Engine, error) {
	info, ok := Lookup(name)
	if !ok {
		return nil, fmt.Errorf("ioengine: %q: %w", name, Check(name))
	}
	if p.Depth < 1 || (p.Queue != 0 && p.Queue < p.Depth) || p.BlockSize < 1 || p.Data == nil || p.Done == nil || cap(p.Done) < p.queue() {
		return nil, fmt.Errorf("ioengine: %s: bad parameters (depth %d, queue %d, block size %d, done buffer %d)", name, p.Depth, p.Queue, p.BlockSize, cap(p.Done))
	}
	return info.New(p)
}

// AlignedBuffer returns n bytes whose address is a multiple of align (a
// power of two), as O_DIRECT needs: backend.AlignedBuffer.
func AlignedBuffer(n, align int) []byte { return backend.AlignedBuffer(n, align) }
