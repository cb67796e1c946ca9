// Package enginetest holds the contract every I/O engine registered with
// replay/ioengine keeps with the scheduler, as replay/replaytest holds the
// backends' (it lives here because the backends' suite may not see the
// engines: internal/lint's import rules).
package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/replay/ioengine"
)

// fill writes the suite's pattern: byte i is a function of i.
func fill(p []byte) {
	for i := range p {
		p[i] = byte(i*7 + i>>8 + 1)
	}
}

// RunEngine runs the contract every registered I/O engine keeps with the
// scheduler (replay) on the engine registered as name; ioengine's tests
// call it for each of ioengine.Names(), so an engine added to the
// registry is held to it without a line of test of its own.
//
// The queue-full contract, fio's FIO_Q_BUSY told the other way round: the
// scheduler keeps at most Params.Queue ops of an engine submitted and not
// yet received from Done, and the engine
//
//   - accepts those Queue ops without blocking in Submit, even when none
//     of them can complete (their object has no data yet);
//   - sends each on Done exactly once, without ever waiting on the
//     submitter (Done's buffer holds Queue ops and no more);
//   - refuses, in ioengine.New, parameters that would break this: a Queue
//     below Depth, a Done buffer below Queue.
//
// A Poller is driven as the scheduler drives it: Submit and Poll on the
// caller's goroutine, Wait while it is Busy.
func RunEngine(t *testing.T, name string) {
	t.Run("QueueFull", func(t *testing.T) {
		RunFactory(t, name, func(p ioengine.Params) (ioengine.Engine, error) { return ioengine.New(name, p) })
	})
	t.Run("RefusesBadQueue", func(t *testing.T) { testRefusesBadQueue(t, name) })
}

// RunFactory holds an engine made by f, one the registry does not know
// (a Mover, or one built on ioengine.Workers), to the queue-full contract
// of RunEngine; name is for messages. An engine that does not serve
// objects in files skips it.
func RunFactory(t *testing.T, name string, f ioengine.Factory) {
	testQueueFull(t, name, f)
}

// stuck is how long a call that must return at once may take before the
// suite calls it blocked: far above any scheduling delay, so it never
// races the engine; it only turns a hang into a failure.
const stuck = 30 * time.Second

// pipeData makes every block the same pattern, which the suite writes
// into the pipe the ops read.
type pipeData struct{}

func pattern(n int) []byte {
	p := make([]byte, n)
	fill(p)
	return p
}

func (pipeData) Fill(p []byte, _ *ioengine.Op) { fill(p) }
func (pipeData) Check(p []byte, _ *ioengine.Op) error {
	if !bytes.Equal(p, pattern(len(p))) {
		return errors.New("enginetest: the bytes read are not the bytes the pipe was given")
	}
	return nil
}

// pipeObject is an object whose bytes come from a pipe, in the order
// they were written (offsets are ignored): a read blocks, in a worker or
// in the kernel, until the suite writes. It has a descriptor, so every
// engine that serves objects in files serves it.
type pipeObject struct{ fd int }

func (o *pipeObject) ReadAt(p []byte, _ int64) (int, error) {
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

func (o *pipeObject) WriteAt([]byte, int64) (int, error) { return 0, errors.ErrUnsupported }
func (o *pipeObject) Close() error                       { return nil }
func (o *pipeObject) Remove() error                      { return nil }
func (o *pipeObject) Fd() uintptr                        { return uintptr(o.fd) }
func (o *pipeObject) Offset() int64                      { return 0 }

// testQueueFull submits a full queue, three times the depth, of reads
// that cannot complete, then lets them complete: every Submit returns at
// once, every op comes back once, and nothing more comes.
func testQueueFull(t *testing.T, name string, f ioengine.Factory) {
	const depth, queue, n = 2, 6, 4096
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	done := make(chan *ioengine.Op, queue) // exactly Queue: an engine that needs more blocks
	e, err := f(ioengine.Params{Depth: depth, Queue: queue, BlockSize: n, Data: pipeData{}, Done: done})
	if errors.Is(err, ioengine.ErrUnavailable) {
		t.Skipf("%s: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	obj := &pipeObject{fd: p[0]}
	if !e.Serves(obj) {
		e.Close()
		t.Skipf("%s does not serve objects in files", name)
	}
	poller, _ := e.(ioengine.Poller)
	ops := make([]*ioengine.Op, queue)
	submitted := make(chan struct{})
	go func() {
		defer close(submitted)
		for i := range ops {
			ops[i] = &ioengine.Op{Obj: obj, N: n, Key: fmt.Sprint("q", i), User: i}
			e.Submit(ops[i])
		}
		if poller != nil {
			poller.Poll() // hands the prepared requests to the kernel; nothing completes
		}
	}()
	select {
	case <-submitted:
	case <-time.After(stuck):
		t.Fatalf("%s: Submit of a full queue (%d ops at depth %d) blocked while none could complete", name, queue, depth)
	}
	if len(done) != 0 {
		t.Fatalf("%s: %d ops completed before their data existed", name, len(done))
	}
	// Let them complete, and take them back as the scheduler does.
	writer := make(chan error, 1)
	go func() {
		var err error
		for range queue {
			if _, werr := unix.Write(p[1], pattern(n)); werr != nil && err == nil {
				err = werr
			}
		}
		writer <- err
	}()
	seen := make([]int, queue)
	got := 0
	take := func(op *ioengine.Op) {
		if op.Err != nil {
			t.Fatalf("%s: op %v: %v", name, op.User, op.Err)
		}
		seen[op.User.(int)]++
		got++
	}
	for got < queue {
		select {
		case op := <-done:
			take(op)
			continue
		default:
		}
		if poller != nil {
			poller.Poll()
			if len(done) == 0 && poller.Busy() {
				poller.Wait(func() bool { return len(done) > 0 })
			}
			continue
		}
		select {
		case op := <-done:
			take(op)
		case <-time.After(stuck):
			t.Fatalf("%s: ops never came back once their data was there", name)
		}
	}
	if err := <-writer; err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("%s: Close: %v", name, err)
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("%s: op %d came back %d times", name, i, c)
		}
	}
	if len(done) != 0 {
		t.Errorf("%s: %d ops more than were submitted came back", name, len(done))
	}
}

// testRefusesBadQueue: New refuses a queue below the depth and a Done
// buffer that cannot hold the queue.
func testRefusesBadQueue(t *testing.T, name string) {
	for _, tc := range []struct {
		what         string
		depth, queue int
		buffer       int
	}{
		{"queue below depth", 4, 2, 4},
		{"done buffer below queue", 2, 6, 5},
		{"done buffer below depth", 4, 0, 3},
	} {
		e, err := ioengine.New(name, ioengine.Params{Depth: tc.depth, Queue: tc.queue, BlockSize: 4096, Data: pipeData{},
			Done: make(chan *ioengine.Op, tc.buffer)})
		if err == nil {
			e.Close()
			t.Errorf("%s: New accepted %s (depth %d, queue %d, done buffer %d)", name, tc.what, tc.depth, tc.queue, tc.buffer)
		}
	}
}
