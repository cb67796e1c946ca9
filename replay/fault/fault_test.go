package fault_test

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/fault"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/replay/ram"
	"github.com/kvbench/kvbench/replay/replaytest"
)

func newRAM(t testing.TB) *arena.Backend {
	t.Helper()
	b, err := ram.New(16 << 20)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformanceDelayRAM(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend { return fault.Delay(newRAM(t), 20*time.Microsecond) })
}

func TestConformanceRecordNVMe(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		b, err := nvme.New(t.TempDir(), nvme.Options{Direct: true})
		if err != nil {
			t.Fatal(err)
		}
		return fault.Record(b)
	})
}

// TestConformanceFailNever checks that a Fail whose limit is not reached
// changes nothing, and that "null+..." still skips the data checks.
func TestConformanceFailNever(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return fault.Fail(null.New(null.WithAlign(4096)), fault.Rule{Op: fault.OpAny, AfterCalls: 1 << 40, Err: syscall.EIO})
	})
}

func TestCapsName(t *testing.T) {
	b := fault.Record(fault.Fail(fault.Delay(null.New(), 0), fault.IOError(fault.OpRead)))
	c := b.Caps()
	if c.Name != "null+delay+fail+record" || c.Align != 1 {
		t.Errorf("Caps() = %+v, want null+delay+fail+record, the inner Align", c)
	}
}

func TestOpString(t *testing.T) {
	for op, want := range map[fault.Op]string{
		fault.OpRead: "read", fault.OpWrite | fault.OpOpen: "write|open", fault.OpAny: "read|write|open|remove", 0: "op(0)",
	} {
		if got := op.String(); got != want {
			t.Errorf("Op(%d).String() = %q, want %q", op, got, want)
		}
	}
}

func TestDelay(t *testing.T) {
	const d = 20 * time.Millisecond
	b := fault.Delay(null.New(), d)
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	for _, op := range []func([]byte, int64) (int, error){o.ReadAt, o.WriteAt} {
		start := time.Now()
		if _, err := op(p, 0); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el < d {
			t.Errorf("an I/O took %v, want at least %v", el, d)
		}
	}
	// Delays overlap: 8 concurrent reads take far less than 8 delays.
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { o.ReadAt(make([]byte, 4096), 0) })
	}
	wg.Wait()
	if el := time.Since(start); el >= 8*d {
		t.Errorf("8 concurrent reads took %v: the delays did not overlap", el)
	}
}

func TestFailNoSpaceAfterBytes(t *testing.T) {
	r := fault.NoSpace(fault.OpWrite)
	r.AfterBytes = 3 * 4096
	b := fault.Fail(newRAM(t), r)
	defer b.Close()
	o, err := b.Open("k", 8*4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := replaytest.AlignedBuffer(4096, 4096)
	for i := range 3 {
		if _, err := o.WriteAt(p, int64(i*4096)); err != nil {
			t.Fatalf("write %d within the limit: %v", i, err)
		}
	}
	n, err := o.WriteAt(p, 3*4096)
	if n != 0 || !errors.Is(err, backend.ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, fault.ErrInjected) {
		t.Fatalf("write past the limit = %d, %v; want ErrNoSpace, ENOSPC, ErrInjected", n, err)
	}
	if want := `fault: write "k" at offset 12288: injected fault: no space left on device`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// The disk stays full; reads do not match the rule.
	if _, err := o.WriteAt(p[:0], 0); !errors.Is(err, backend.ErrNoSpace) {
		t.Errorf("a later write: %v, want ErrNoSpace", err)
	}
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Errorf("a read: %v", err)
	}
}

func TestFailIOErrorTransient(t *testing.T) {
	r := fault.IOError(fault.OpRead)
	r.AfterCalls, r.Times = 2, 1
	b := fault.Fail(null.New(), r)
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	var got []bool
	for range 5 {
		_, err := o.ReadAt(p, 0)
		if err != nil && (!errors.Is(err, syscall.EIO) || !errors.Is(err, fault.ErrInjected) || errors.Is(err, backend.ErrNoSpace)) {
			t.Fatalf("injected error %v: want EIO and ErrInjected only", err)
		}
		got = append(got, err == nil)
	}
	if want := []bool{true, true, false, true, true}; !equal(got, want) {
		t.Errorf("reads succeeded %v, want %v", got, want)
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFailOpenCreatesNothing(t *testing.T) {
	inner := newRAM(t)
	b := fault.Fail(inner, fault.NoSpace(fault.OpOpen))
	defer b.Close()
	if o, err := b.Open("k", 4096, true); o != nil || !errors.Is(err, backend.ErrNoSpace) {
		t.Fatalf("Open = %v, %v; want nil, ErrNoSpace", o, err)
	}
	if _, err := inner.Open("k", 4096, false); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("the failed create reached the backend: %v", err)
	}
	if st := inner.Stats(); st.Used != 0 {
		t.Errorf("the failed create took space: %+v", st)
	}
}

func TestFailKeyAndRemove(t *testing.T) {
	b := fault.Fail(null.New(), fault.Rule{Op: fault.OpRemove, Key: "bad"})
	defer b.Close()
	for _, key := range []string{"good", "bad"} {
		o, err := b.Open(key, 8, true)
		if err != nil {
			t.Fatal(err)
		}
		err = o.Remove()
		if key == "good" && err != nil {
			t.Errorf("Remove(good): %v", err)
		}
		if key == "bad" {
			if !errors.Is(err, fault.ErrInjected) {
				t.Errorf("Remove(bad): %v, want ErrInjected", err)
			}
			// The Object is still open and the object still there.
			if _, err := o.ReadAt(make([]byte, 8), 0); err != nil {
				t.Errorf("ReadAt after a failed Remove: %v", err)
			}
			if err := o.Close(); err != nil {
				t.Error(err)
			}
			if _, err := b.Open("bad", 8, false); err != nil {
				t.Errorf("the failed Remove removed: %v", err)
			}
		}
	}
}

// TestFailExactUnderConcurrency checks that exactly AfterCalls calls pass
// when many run at once.
func TestFailExactUnderConcurrency(t *testing.T) {
	b := fault.Fail(null.New(), fault.Rule{Op: fault.OpWrite, AfterCalls: 50, Err: syscall.EIO})
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if _, err := o.WriteAt(make([]byte, 4096), 0); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 50 {
		t.Errorf("%d writes passed, want 50", ok.Load())
	}
}

func TestRecorder(t *testing.T) {
	r := fault.Record(newRAM(t))
	defer r.Close()
	before := time.Now()
	o, err := r.Open("k", 2*4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := replaytest.AlignedBuffer(4096, 4096)
	o.WriteAt(p, 4096)
	o.ReadAt(p, 4096)
	o.ReadAt(p, 2*4096)
	o.Close()
	if _, err := r.Open("missing", 4096, false); err == nil {
		t.Fatal("Open of a missing key succeeded")
	}
	o, _ = r.Open("k", 2*4096, false)
	o.Remove()

	log := r.Log()
	want := []fault.Call{
		{Op: fault.OpOpen, Key: "k", Len: 8192, Create: true},
		{Op: fault.OpWrite, Key: "k", Off: 4096, Len: 4096, N: 4096},
		{Op: fault.OpRead, Key: "k", Off: 4096, Len: 4096, N: 4096},
		{Op: fault.OpRead, Key: "k", Off: 8192, Len: 4096, Err: io.EOF},
		{Op: fault.OpClose, Key: "k"},
		{Op: fault.OpOpen, Key: "missing", Len: 4096, Err: backend.ErrNotFound},
		{Op: fault.OpOpen, Key: "k", Len: 8192},
		{Op: fault.OpRemove, Key: "k"},
	}
	if len(log) != len(want) {
		t.Fatalf("%d calls logged, want %d: %+v", len(log), len(want), log)
	}
	prev := before
	for i, c := range log {
		w := want[i]
		if c.Op != w.Op || c.Key != w.Key || c.Off != w.Off || c.Len != w.Len || c.N != w.N || c.Create != w.Create || !errors.Is(c.Err, w.Err) || (w.Err == nil) != (c.Err == nil) {
			t.Errorf("call %d = %+v, want %+v", i, c, w)
		}
		if c.Start.Before(prev) || c.End.Before(c.Start) {
			t.Errorf("call %d: start %v end %v, after the previous end %v", i, c.Start, c.End, prev)
		}
		prev = c.End
	}
	// Log returns a copy.
	log[0].Key = "changed"
	if r.Log()[0].Key != "k" {
		t.Error("Log returned the Recorder's own slice")
	}
}

func TestRecorderConcurrent(t *testing.T) {
	r := fault.Record(null.New())
	defer r.Close()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			o, err := r.Open("k", 4096, true)
			if err != nil {
				return
			}
			for range 10 {
				o.WriteAt(make([]byte, 4096), 0)
			}
			o.Close()
		})
	}
	wg.Wait()
	if n := len(r.Log()); n != 16*12 {
		t.Errorf("%d calls logged, want %d", n, 16*12)
	}
}
