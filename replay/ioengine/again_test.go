package ioengine

import (
	"errors"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/uring"
)

// TestUringRetriesEAGAIN: a request that completes with -EAGAIN is issued
// again, as liburing asks of the older kernels that post it (an O_DIRECT
// request whose bios could not all get a tag on a busy device: liburing
// issues 766 and 1269), and the op succeeds; a request the kernel keeps
// refusing fails with EAGAIN after
// againMax tries instead of spinning for ever. Completions are rewritten
// to -EAGAIN on their way to the engine (the I/O itself happened, and is
// repeated). Before, the first -EAGAIN failed the op.
func TestUringRetriesEAGAIN(t *testing.T) {
	const bs = 8192
	data := &hashData{}
	done := make(chan *Op, 2)
	e, err := newUringEngine(Params{Depth: 2, BlockSize: bs, Data: data, Done: done}, true)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fd, _ := openFile(t, filepath.Join(t.TempDir(), "f"), 2*bs)
	refuse := 0 // completions still to rewrite
	e.reap = func(c uring.CQE) {
		if c.UserData != wakeToken && refuse > 0 {
			refuse--
			c.Res = -int32(unix.EAGAIN)
		}
		e.complete(c)
	}
	run := func(op *Op) *Op {
		t.Helper()
		e.Submit(op)
		for len(done) == 0 {
			e.Poll()
			if len(done) == 0 && e.Busy() {
				e.Wait(nil)
			}
		}
		return <-done
	}
	for _, write := range []bool{true, false} {
		refuse = 3
		op := run(&Op{Obj: &fileObj{fd: fd}, Write: write, Off: bs, N: bs, Key: "k", Version: 1})
		if op.Err != nil || refuse != 0 {
			t.Errorf("write %t, three -EAGAIN completions: error %v, %d completions left to rewrite", write, op.Err, refuse)
		}
	}
	if data.checks.Load() != 1 {
		t.Errorf("%d reads checked, want 1", data.checks.Load())
	}
	refuse = againMax + 1
	op := run(&Op{Obj: &fileObj{fd: fd}, N: bs, Key: "k", Version: 1})
	if !errors.Is(op.Err, unix.EAGAIN) || refuse != 0 {
		t.Errorf("a read refused %d times: error %v, %d completions left; want EAGAIN after %d tries", againMax+1, op.Err, refuse, againMax+1)
	}
}
