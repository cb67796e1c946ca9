package ioengine

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestConformance runs every registered engine through the same suite:
// what the scheduler relies on does not depend on the engine.
func TestConformance(t *testing.T) {
	if names := Names(); len(names) < 2 || !slices.Contains(names, Fallback) {
		t.Fatalf("registered engines %q: want psync, uring and any other", names)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, name) })
			t.Run("ShortTransfer", func(t *testing.T) { testShortTransfer(t, name) })
			t.Run("EOF", func(t *testing.T) { testEOF(t, name) })
			t.Run("BadDescriptor", func(t *testing.T) { testBadDescriptor(t, name) })
			t.Run("CloseWithOpsInFlight", func(t *testing.T) { testCloseInFlight(t, name) })
			t.Run("FullDepth", func(t *testing.T) { testFullDepth(t, name) })
			t.Run("Queue", func(t *testing.T) { testQueue(t, name) })
			t.Run("Serves", func(t *testing.T) { testServes(t, name) })
		})
	}
}

// objectOps returns the ops of n objects of size bytes, laid out one after
// another in the file behind fd (as the extent layout does), split into
// blocks of at most bs.
func objectOps(fd int, n int, size, bs int64, write bool, version uint64) []*Op {
	var ops []*Op
	for i := range n {
		obj := &fileObj{fd: fd, base: int64(i) * size}
		for off := int64(0); off < size; off += bs {
			ops = append(ops, &Op{Obj: obj, Write: write, Off: off, N: min(bs, size-off),
				Key: fmt.Sprintf("obj%d", i), Version: version})
		}
	}
	return ops
}

// checkFile reads the file behind fd with plain pread and checks that
// every object's bytes are where the extent layout puts them: an engine
// that ignored Offset on both writes and reads would pass a round trip,
// not this.
func checkFile(t *testing.T, fd int, n int, size int64, version uint64) {
	t.Helper()
	got := AlignedBuffer(int(size), 4096)
	want := make([]byte, size)
	for i := range n {
		if _, err := (&fileObj{fd: fd}).ReadAt(got, int64(i)*size); err != nil {
			t.Fatalf("read object %d back: %v", i, err)
		}
		fillHash(want, fmt.Sprintf("obj%d", i), version, 0)
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("object %d byte %d (file offset %d): got %#x, want %#x", i, j, int64(i)*size+int64(j), got[j], want[j])
			}
		}
	}
}

func testRoundTrip(t *testing.T, name string) {
	for _, tc := range []struct {
		name    string
		bs      int64
		depth   int
		size    int64 // per object, a multiple of 4096
		objects int
	}{
		{"4KiB depth 1", 4 << 10, 1, 32 << 10, 2},
		{"4KiB depth 32", 4 << 10, 32, 256 << 10, 3},
		{"64KiB depth 8 last block short", 64 << 10, 8, 300 << 10, 3},
		{"128KiB depth 8", 128 << 10, 8, 1 << 20, 2},
		{"1MiB depth 4 last block short", 1 << 20, 4, 3<<20 + 12<<10, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, direct := openFile(t, filepath.Join(t.TempDir(), "extent"), int64(tc.objects)*tc.size)
			t.Logf("O_DIRECT %t", direct)
			e, data, done := newEngine(t, name, tc.depth, tc.bs)

			writes := objectOps(fd, tc.objects, tc.size, tc.bs, true, 1)
			for _, op := range runOps(t, e, done, tc.depth, writes) {
				if op.Err != nil {
					t.Fatalf("write %s at %d: %v", op.Key, op.Off, op.Err)
				}
			}
			if got := data.fills.Load(); got != int64(len(writes)) {
				t.Errorf("Fill called %d times for %d writes", got, len(writes))
			}
			checkFile(t, fd, tc.objects, tc.size, 1)

			reads := objectOps(fd, tc.objects, tc.size, tc.bs, false, 1)
			for _, op := range runOps(t, e, done, tc.depth, reads) {
				if op.Err != nil {
					t.Fatalf("read %s at %d: %v", op.Key, op.Off, op.Err)
				}
			}
			if got := data.checks.Load(); got != int64(len(reads)) {
				t.Errorf("Check called %d times for %d reads", got, len(reads))
			}

			// Reads of a version never written: Check must see every block.
			stale := objectOps(fd, tc.objects, tc.size, tc.bs, false, 2)
			for _, op := range runOps(t, e, done, tc.depth, stale) {
				if !errors.Is(op.Err, errMismatch) {
					t.Fatalf("read %s at %d of a version never written: error %v, want a mismatch", op.Key, op.Off, op.Err)
				}
			}
			if err := e.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

// testShortTransfer reads a block from a pipe whose writer delivers it in
// two halves: the engine gets the first half, must ask for the rest, and
// hand back the whole block.
func testShortTransfer(t *testing.T, name string) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	const n = 16 << 10
	e, data, done := newEngine(t, name, 2, n)
	block := make([]byte, n)
	fillHash(block, "piped", 7, 0)
	go func() {
		unix.Write(p[1], block[:n/4])
		time.Sleep(20 * time.Millisecond)
		unix.Write(p[1], block[n/4:])
	}()
	op := &Op{Obj: &pipeObj{fd: p[0]}, N: n, Key: "piped", Version: 7}
	e.Submit(op)
	if got := <-done; got != op || got.Err != nil {
		t.Fatalf("got op %p error %v, want op %p and no error", got, got.Err, op)
	}
	if data.checks.Load() != 1 {
		t.Errorf("Check called %d times, want 1", data.checks.Load())
	}
}

// testEOF reads two blocks where the file has one: the first block comes
// back, the second is an error, not zeros.
func testEOF(t *testing.T, name string) {
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "short"), 4096)
	e, _, done := newEngine(t, name, 1, 8192)
	w := &Op{Obj: &fileObj{fd: fd}, Write: true, N: 4096, Key: "k", Version: 1}
	e.Submit(w)
	if op := <-done; op.Err != nil {
		t.Fatalf("write: %v", op.Err)
	}
	r := &Op{Obj: &fileObj{fd: fd}, N: 8192, Key: "k", Version: 1}
	e.Submit(r)
	if op := <-done; !errors.Is(op.Err, io.ErrUnexpectedEOF) && !errors.Is(op.Err, io.EOF) {
		t.Fatalf("read of 8192 bytes from a 4096-byte file: error %v, want an end of file", op.Err)
	}
}

// closedFd returns a descriptor number that is closed and that no open
// reuses while the test runs (opens take the lowest free number).
func closedFd(t *testing.T, of int) int {
	t.Helper()
	for n := 900; n < 1000; n++ {
		if _, err := unix.FcntlInt(uintptr(n), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			continue // in use
		}
		if err := unix.Dup3(of, n, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		unix.Close(n)
		return n
	}
	t.Fatal("no free descriptor number between 900 and 1000")
	return -1
}

// testBadDescriptor mixes ops on a closed descriptor with good ones: each
// bad op fails with EBADF, and the good ones around them are unharmed.
func testBadDescriptor(t *testing.T, name string) {
	const depth, bs = 8, 4096
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), 64*bs)
	good, bad := &fileObj{fd: fd}, &fileObj{fd: closedFd(t, fd)}
	e, _, done := newEngine(t, name, depth, bs)
	for _, write := range []bool{true, false} {
		var ops []*Op
		for i := range 32 {
			obj := good
			if i%3 == 1 {
				obj = bad
			}
			ops = append(ops, &Op{Obj: obj, Write: write, Off: int64(i) * bs, N: bs, Key: "k", Version: 1})
		}
		for _, op := range runOps(t, e, done, depth, ops) {
			switch {
			case op.Obj == bad && !errors.Is(op.Err, unix.EBADF):
				t.Errorf("write %t at %d on a closed descriptor: error %v, want EBADF", write, op.Off, op.Err)
			case op.Obj == good && op.Err != nil:
				t.Errorf("write %t at %d: %v", write, op.Off, op.Err)
			}
		}
	}
}

// testCloseInFlight closes the engine with Depth ops in flight: Close
// returns after every op came back on Done, done.
func testCloseInFlight(t *testing.T, name string) {
	for _, bs := range []int64{4 << 10, 1 << 20} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			const depth = 8
			fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), depth*bs)
			e, _, done := newEngine(t, name, depth, bs)
			ops := objectOps(fd, depth, bs, bs, true, 3)
			for _, op := range ops {
				e.Submit(op)
			}
			if err := e.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if len(done) != depth {
				t.Fatalf("%d ops back on Done after Close, want %d", len(done), depth)
			}
			for range depth {
				if op := <-done; op.Err != nil {
					t.Errorf("write %s: %v", op.Key, op.Err)
				}
			}
			checkFile(t, fd, depth, bs, 3)
		})
	}
}

// testFullDepth submits Depth ops without draining Done, twice: Submit
// must not block and the engine must not wait on the submitter.
func testFullDepth(t *testing.T, name string) {
	const depth, bs = 16, 4096
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), depth*bs)
	e, _, done := newEngine(t, name, depth, bs)
	for round := range 2 {
		ops := objectOps(fd, depth, bs, bs, round == 0, 1)
		submitted := make(chan struct{})
		go func() {
			for _, op := range ops {
				e.Submit(op)
			}
			close(submitted)
		}()
		select {
		case <-submitted:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Submit of %d ops blocked with Done undrained", round, depth)
		}
		for range depth {
			select {
			case op := <-done:
				if op.Err != nil {
					t.Fatalf("round %d: %v", round, op.Err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: ops never came back", round)
			}
		}
	}
}

// testQueue submits a queue's worth of reads, three times the depth, from
// a pipe that has no data yet: Submit must not block while none can
// complete, and once the data comes every op comes back, whole.
func testQueue(t *testing.T, name string) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	const depth, queue, n = 2, 6, 4096
	e, _, done := newQueuedEngine(t, name, depth, queue, n)
	submitted := make(chan struct{})
	go func() {
		for range queue {
			e.Submit(&Op{Obj: &pipeObj{fd: p[0]}, N: n, Key: "piped", Version: 7})
		}
		close(submitted)
	}()
	select {
	case <-submitted:
	case <-time.After(10 * time.Second):
		t.Fatalf("Submit of %d ops at depth %d blocked while none could complete", queue, depth)
	}
	block := make([]byte, n)
	fillHash(block, "piped", 7, 0)
	go func() {
		for range queue {
			unix.Write(p[1], block)
		}
	}()
	for i := range queue {
		select {
		case op := <-done:
			if op.Err != nil {
				t.Fatalf("op %d: %v", i, op.Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d ops came back", i, queue)
		}
	}
}

// testServes: every engine serves objects in files; a Pooled one (psync)
// serves any object, and one that does not serve an object (uring, one
// without a descriptor) fails (does not lose) an op on it.
func testServes(t *testing.T, name string) {
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), 4096)
	e, _, done := newEngine(t, name, 1, 4096)
	mem := &memObj{b: make([]byte, 4096)}
	if !e.Serves(&fileObj{fd: fd}) {
		t.Error("does not serve an object in a file")
	}
	info, _ := Lookup(name)
	wantMem := e.Serves(mem)
	if info.Kind == Pooled && !wantMem {
		t.Errorf("a Pooled engine does not serve an object in memory")
	}
	op := &Op{Obj: mem, Write: true, N: 4096, Key: "m"}
	e.Submit(op)
	if got := <-done; (got.Err == nil) != wantMem {
		t.Errorf("write to an object in memory: error %v", got.Err)
	}
}

func TestNewUnknown(t *testing.T) {
	done := make(chan *Op, 1)
	if _, err := New("libaio", Params{Depth: 1, BlockSize: 4096, Data: &hashData{}, Done: done}); err == nil {
		t.Fatal("New of an unknown engine: no error")
	}
}

// TestBufferRegion: the ring's buffer memory is as long as asked,
// page-aligned (huge-page-aligned from 2 MiB on), writable, and unmapped
// without error.
func TestBufferRegion(t *testing.T) {
	for _, tc := range []struct {
		n     int
		align uintptr
	}{
		{4096, 4096},
		{32 * 4096, 4096},
		{2 << 20, hugePage},
		{32 << 20, hugePage},
		{3<<20 + 4096, hugePage},
	} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			r, err := bufferRegion(tc.n)
			if err != nil {
				t.Fatal(err)
			}
			if len(r) != tc.n || cap(r) != tc.n {
				t.Errorf("len %d cap %d, want %d", len(r), cap(r), tc.n)
			}
			if addr := uintptr(unsafe.Pointer(unsafe.SliceData(r))); addr%tc.align != 0 {
				t.Errorf("address %#x not a multiple of %d", addr, tc.align)
			}
			r[0], r[len(r)-1] = 1, 2
			if err := freeRegion(r); err != nil {
				t.Fatalf("unmap: %v", err)
			}
		})
	}
}

// TestPoller drives uring as the scheduler does, on the test's goroutine
// only: Submit beyond the depth (the rest wait in the engine), Poll and
// Wait until every op is back; then Wake, from another goroutine, ends a
// Wait on a read that cannot complete, and ready stops one before it
// sleeps.
func TestPoller(t *testing.T) {
	const depth, n, bs = 4, 64, 4096
	data := &hashData{}
	done := make(chan *Op, n+1)
	e, err := New("uring", Params{Depth: depth, Queue: n, BlockSize: bs, Data: data, Done: done})
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	p, ok := e.(Poller)
	if !ok {
		t.Fatalf("uring is a %T, not a Poller", e)
	}
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), n*bs)
	waitAll := func(ops []*Op) {
		t.Helper()
		for _, op := range ops {
			p.Submit(op)
		}
		if !p.Busy() {
			t.Fatal("not busy with ops submitted")
		}
		got := 0
		for got < len(ops) {
			p.Poll()
			for len(done) > 0 {
				if op := <-done; op.Err != nil {
					t.Fatalf("%v", op.Err)
				}
				got++
			}
			if got < len(ops) {
				if !p.Busy() {
					t.Fatalf("%d of %d ops back and the engine is idle", got, len(ops))
				}
				p.Wait(nil)
			}
		}
		if p.Busy() {
			t.Fatal("busy with every op back")
		}
	}
	waitAll(objectOps(fd, n, bs, bs, true, 5))
	waitAll(objectOps(fd, n, bs, bs, false, 5))
	if data.checks.Load() != n {
		t.Errorf("%d reads checked, want %d", data.checks.Load(), n)
	}

	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pp[0]); unix.Close(pp[1]) })
	p.Submit(&Op{Obj: &pipeObj{fd: pp[0]}, N: bs, Key: "piped", Version: 1})
	p.Poll()
	if p.Wait(func() bool { return true }); len(done) != 0 {
		t.Fatal("an op completed with nothing written to the pipe")
	}
	woke := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		p.Wake()
		close(woke)
	}()
	start := time.Now()
	p.Wait(nil)
	<-woke
	if len(done) != 0 || !p.Busy() {
		t.Fatalf("Wait returned %d ops, busy %t; want none, busy", len(done), p.Busy())
	}
	if d := time.Since(start); d < 40*time.Millisecond {
		t.Fatalf("Wait returned after %v, before the Wake", d)
	}
	block := make([]byte, bs)
	fillHash(block, "piped", 1, 0)
	unix.Write(pp[1], block)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if op := <-done; op.Err != nil {
		t.Fatal(op.Err)
	}
}
