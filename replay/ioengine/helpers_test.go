package ioengine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/replay/backend"
)

// hashData is a Data whose bytes are a hash of (key, version, offset), 8
// bytes at a time: deterministic, different for every block, and cheap
// enough for tests. It counts its calls so tests see that engines use it.
type hashData struct {
	fills, checks atomic.Int64
}

// word is the 8 bytes at object offset off (a multiple of 8) of key at
// version: splitmix64 of their mix.
func word(keyHash, version uint64, off int64) uint64 {
	z := keyHash ^ version*0x9e3779b97f4a7c15 ^ uint64(off)*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func keyHash(key string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, key)
	return h.Sum64()
}

func (d *hashData) Fill(p []byte, op *Op) {
	d.fills.Add(1)
	fillHash(p, op.Key, op.Version, op.Off)
}

func fillHash(p []byte, key string, version uint64, off int64) {
	kh := keyHash(key)
	for i := 0; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], word(kh, version, off+int64(i)))
	}
}

func (d *hashData) Check(p []byte, op *Op) error {
	d.checks.Add(1)
	kh := keyHash(op.Key)
	for i := 0; i+8 <= len(p); i += 8 {
		if got, want := binary.LittleEndian.Uint64(p[i:]), word(kh, op.Version, op.Off+int64(i)); got != want {
			return fmt.Errorf("%w: key %q version %d offset %d: got %#x, want %#x", errMismatch, op.Key, op.Version, op.Off+int64(i), got, want)
		}
	}
	return nil
}

var errMismatch = errors.New("bytes differ")

// fileObj is an object at offset base of a file, read and written with
// pread and pwrite on its descriptor: the shape of the extent layout's
// objects, for both engines.
type fileObj struct {
	fd   int
	base int64
}

var _ backend.FdObject = (*fileObj)(nil)

func (o *fileObj) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Pread(o.fd, p[done:], o.base+off+int64(done))
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

func (o *fileObj) WriteAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Pwrite(o.fd, p[done:], o.base+off+int64(done))
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func (o *fileObj) Close() error  { return nil }
func (o *fileObj) Remove() error { return nil }
func (o *fileObj) Fd() uintptr   { return uintptr(o.fd) }
func (o *fileObj) Offset() int64 { return o.base }

// pipeObj reads an object from a pipe (offsets are ignored, the stream is
// the object): reads return what the writer has put in so far, so an
// engine sees short transfers in the middle of a block.
type pipeObj struct{ fd int }

func (o *pipeObj) ReadAt(p []byte, _ int64) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Read(o.fd, p[done:])
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

func (o *pipeObj) WriteAt([]byte, int64) (int, error) { return 0, errors.ErrUnsupported }
func (o *pipeObj) Close() error                       { return nil }
func (o *pipeObj) Remove() error                      { return nil }
func (o *pipeObj) Fd() uintptr                        { return uintptr(o.fd) }
func (o *pipeObj) Offset() int64                      { return 0 }

// memObj is an object in memory, with no descriptor: psync serves it,
// uring does not.
type memObj struct{ b []byte }

func (o *memObj) ReadAt(p []byte, off int64) (int, error)  { return copy(p, o.b[off:]), nil }
func (o *memObj) WriteAt(p []byte, off int64) (int, error) { return copy(o.b[off:], p), nil }
func (o *memObj) Close() error                             { return nil }
func (o *memObj) Remove() error                            { return nil }

// openFile creates (or opens) path with O_DIRECT where the file system
// allows it, closed at cleanup, and reports whether O_DIRECT is on.
func openFile(tb testing.TB, path string, size int64) (fd int, direct bool) {
	tb.Helper()
	flags := unix.O_RDWR | unix.O_CREAT | unix.O_CLOEXEC
	fd, err := unix.Open(path, flags|unix.O_DIRECT, 0o644)
	direct = err == nil
	if errors.Is(err, unix.EINVAL) { // tmpfs before Linux 6.6, some FUSE
		tb.Logf("%s: no O_DIRECT here, buffered I/O", path)
		fd, err = unix.Open(path, flags, 0o644)
	}
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	if size > 0 {
		if err := unix.Ftruncate(fd, size); err != nil {
			tb.Fatalf("truncate %s to %d: %v", path, size, err)
		}
	}
	return fd, direct
}

// newEngine returns engine name with hashData, a Done channel of depth
// ops, closing it at cleanup if the test did not; a uring that the
// kernel does not offer skips tb.
func newEngine(tb testing.TB, name string, depth int, bs int64) (Engine, *hashData, chan *Op) {
	tb.Helper()
	return newQueuedEngine(tb, name, depth, depth, bs)
}

// newQueuedEngine is newEngine with queue ops outstanding.
func newQueuedEngine(tb testing.TB, name string, depth, queue int, bs int64) (Engine, *hashData, chan *Op) {
	tb.Helper()
	data := &hashData{}
	done := make(chan *Op, queue)
	e, err := New(name, Params{Depth: depth, Queue: queue, BlockSize: bs, Data: data, Done: done})
	if errors.Is(err, ErrUnavailable) {
		tb.Skipf("%s: %v", name, err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	if p, ok := e.(Poller); ok {
		e = drive(p, queue)
	}
	closed := false
	tb.Cleanup(func() {
		if !closed {
			e.Close()
		}
	})
	return &closeOnce{Engine: e, closed: &closed}, data, done
}

// driven runs a Poller on a goroutine of its own, as a scheduler would:
// it takes submitted ops from a channel, polls, and sleeps in Wait while
// ops are in the engine, woken by Submit and Close. The conformance tests,
// written for engines that complete ops on their own goroutines, drive a
// Poller through it; TestPoller drives one directly.
type driven struct {
	p       Poller
	in      chan *Op
	closing atomic.Bool
	exited  chan error
}

func drive(p Poller, queue int) *driven {
	d := &driven{p: p, in: make(chan *Op, queue), exited: make(chan error, 1)}
	go d.run()
	return d
}

func (d *driven) Name() string                   { return d.p.Name() }
func (d *driven) Serves(obj backend.Object) bool { return d.p.Serves(obj) }
func (d *driven) Submit(op *Op)                  { d.in <- op; d.p.Wake() }

func (d *driven) Close() error {
	d.closing.Store(true)
	close(d.in)
	d.p.Wake()
	return <-d.exited
}

func (d *driven) run() {
	ready := func() bool { return len(d.in) > 0 || d.closing.Load() }
	for {
		open := true
	take:
		for {
			select {
			case op, ok := <-d.in:
				if !ok {
					open = false
					break take
				}
				d.p.Submit(op)
			default:
				break take
			}
		}
		d.p.Poll()
		switch {
		case !open:
			d.exited <- d.p.Close()
			return
		case d.p.Busy():
			d.p.Wait(ready)
		default:
			op, ok := <-d.in
			if !ok {
				d.exited <- d.p.Close()
				return
			}
			d.p.Submit(op)
		}
	}
}

// closeOnce records that the test closed the engine itself.
type closeOnce struct {
	Engine
	closed *bool
}

func (c *closeOnce) Close() error {
	*c.closed = true
	return c.Engine.Close()
}

// runOps drives e as the scheduler does: at most depth ops in flight, a
// new one submitted for each completion drained, until every op of ops has
// completed. It returns them in completion order.
func runOps(tb testing.TB, e Engine, done chan *Op, depth int, ops []*Op) []*Op {
	tb.Helper()
	var out []*Op
	next := 0
	for ; next < len(ops) && next < depth; next++ {
		e.Submit(ops[next])
	}
	for len(out) < len(ops) {
		op := <-done
		out = append(out, op)
		if next < len(ops) {
			e.Submit(ops[next])
			next++
		}
	}
	return out
}
