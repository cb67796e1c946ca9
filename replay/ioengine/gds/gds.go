// Package gds is the GPUDirect Storage engine: an ioengine.Mover that
// moves the blocks of a move between the gpu tier's device memory
// (replay/gpu) and a file with libcufile's cuFileWrite and cuFileRead,
// which internal/cuda binds, so that a demotion from GPU memory to NVMe,
// or a promotion back, does not stage through host memory. kvreplay's
// --gds gives it to the replay.
//
// It is tested against fake CUDA and cuFile libraries (internal/cuda's
// testdata), and ran on an H100 with libcufile 1.15 in compatibility mode
// (no nvidia_fs, a virtio disk: bench/gpu-check.sh), not yet with
// GPUDirect's DMA.
package gds

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/kvbench/kvbench/internal/cuda"
	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/gpu"
	"github.com/kvbench/kvbench/replay/ioengine"
)

// Stats is what the engine moved, per direction.
type Stats struct {
	// ToFile are blocks of GPU objects written to files (demotions),
	// FromFile blocks of files read into GPU objects (promotions).
	ToFile, FromFile Direction
	// BufferRegistration is how registering the arena with cuFile went:
	// "registered", or why not (cuFile then moves the bytes through
	// bounce buffers of its own).
	BufferRegistration string
}

// Direction counts one direction's blocks.
type Direction struct {
	Blocks int64
	Bytes  int64
	// Seconds is the sum of the cuFile calls' wall-clock times.
	Seconds float64
}

// New returns the factory of the engine over the driver of f, which the
// caller opened: it moves the blocks of a move between a gpu backend's
// arena and a file (an O_DIRECT backend.FdObject), Depth cuFile calls at
// once on goroutines of its own. The engine closes neither f nor its
// driver. stats, when set, receives the engine's figures when it closes.
func New(f *cuda.CuFile, stats func(Stats)) ioengine.Factory {
	return func(p ioengine.Params) (ioengine.Engine, error) {
		e := &gdsEngine{f: f, stats: stats, regs: map[uintptr]error{}, files: map[uintptr]*file{}}
		e.work = ioengine.NewWorkers(p, p.Depth, e.move)
		return e, nil
	}
}

type gdsEngine struct {
	f     *cuda.CuFile
	stats func(Stats)
	work  *ioengine.Workers

	mu    sync.Mutex        // guards regs, files and st
	regs  map[uintptr]error // arena bases, and how registering them went
	files map[uintptr]*file // the files registered, by descriptor
	st    Stats
}

// file is a registered file and the blocks using it.
type file struct {
	h    cuda.FileHandle
	uses int
}

// openFile returns fd's cuFile handle, registering it when no block in
// flight uses it. A file is registered once however many blocks use it at
// once, and deregistered when the last is done: the engine does not see a
// file's close (the scheduler closes no object with blocks in flight),
// after which its descriptor may name another file.
func (e *gdsEngine) openFile(fd uintptr) (cuda.FileHandle, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if f := e.files[fd]; f != nil {
		f.uses++
		return f.h, nil
	}
	h, err := e.f.RegisterFile(int(fd))
	if err != nil {
		return 0, err
	}
	e.files[fd] = &file{h: h, uses: 1}
	return h, nil
}

// closeFile ends a block's use of fd.
func (e *gdsEngine) closeFile(fd uintptr) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f := e.files[fd]
	if f.uses--; f.uses == 0 {
		e.f.DeregisterFile(f.h)
		delete(e.files, fd)
	}
}

func (e *gdsEngine) Name() string { return "gds" }

// Serves is false: the engine takes only moves.
func (e *gdsEngine) Serves(backend.Object) bool { return false }

// Moves reports whether one of dst and from is an object of a gpu backend
// and the other an object in a file.
func (e *gdsEngine) Moves(dst, from backend.Object) bool {
	_, toFile := dst.(backend.FdObject)
	_, fromFile := from.(backend.FdObject)
	return (toFile && gpu.Holds(from)) || (fromFile && gpu.Holds(dst))
}

func (e *gdsEngine) Submit(op *ioengine.Op) { e.work.Submit(op) }

func (e *gdsEngine) Close() error {
	e.work.Close()
	e.mu.Lock()
	var errs []error
	for base, err := range e.regs {
		if err == nil {
			errs = append(errs, e.f.DeregisterBuffer(base))
		}
	}
	st := e.st
	e.mu.Unlock()
	if e.stats != nil {
		e.stats(st)
	}
	return errors.Join(errs...)
}

// move copies op's block between its GPU object and its file, piece by
// piece of the GPU object's arena.
func (e *gdsEngine) move(op *ioengine.Op) error {
	// A device's calls need it current on the calling thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, file := op.From, op.Obj
	toFile := true
	if _, ok := file.(backend.FdObject); !ok {
		dev, file, toFile = op.Obj, op.From, false
	}
	fo, ok := file.(backend.FdObject)
	sp, ok2 := dev.(arena.Spanner)
	if !ok || !ok2 {
		return fmt.Errorf("gds: block of %s at %d: not a move between a file and GPU memory", op.Key, op.Off)
	}
	h, err := e.openFile(fo.Fd())
	if err != nil {
		return fmt.Errorf("gds: %s: %w", op.Key, err)
	}
	defer e.closeFile(fo.Fd())
	fileOff := fo.Offset() + op.Off
	start := time.Now()
	err = sp.Span(op.Off, op.N, func(m arena.Memory, at, n int64) error {
		a, ok := gpu.ArenaOf(m)
		if !ok {
			return errors.New("not in GPU memory")
		}
		if err := e.prepare(a); err != nil {
			return err
		}
		for done := int64(0); done < n; {
			var k int
			var err error
			if toFile {
				k, err = e.f.Write(h, a.Base, uint64(n-done), fileOff, at+done)
			} else {
				k, err = e.f.Read(h, a.Base, uint64(n-done), fileOff, at+done)
			}
			if err != nil {
				return backend.FileError(err) // ENOSPC matches backend.ErrNoSpace
			}
			if k == 0 {
				return fmt.Errorf("cuFile moved no bytes at file offset %d", fileOff)
			}
			done += int64(k)
			fileOff += int64(k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("gds: %s, %d bytes at %d: %w", op.Key, op.N, op.Off, err)
	}
	e.count(toFile, op.N, time.Since(start))
	return nil
}

// prepare makes a's device current on this thread and registers the
// arena with cuFile once, recording how that went.
func (e *gdsEngine) prepare(a gpu.Arena) error {
	if err := a.Runtime.SetDevice(a.Device); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, done := e.regs[a.Base]; done {
		return nil
	}
	err := e.f.RegisterBuffer(a.Base, uint64(a.Size))
	e.regs[a.Base] = err
	if err == nil {
		e.st.BufferRegistration = "registered"
	} else {
		e.st.BufferRegistration = "not registered (" + err.Error() + "): cuFile used its own bounce buffers"
	}
	return nil
}

func (e *gdsEngine) count(toFile bool, n int64, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	dir := &e.st.FromFile
	if toFile {
		dir = &e.st.ToFile
	}
	dir.Blocks++
	dir.Bytes += n
	dir.Seconds += d.Seconds()
}

var _ ioengine.Mover = (*gdsEngine)(nil)
