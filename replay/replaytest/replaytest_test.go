package replaytest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/kvbench/kvbench/replay/backend"
)

// mem is a reference Backend in a map, with switchable defects (bugs),
// for testing that the suite passes a correct backend and catches each
// defect.
type mem struct {
	align    int
	capacity int64
	bug      string

	mu     sync.Mutex
	objs   map[string]*memData
	used   int64
	closed atomic.Bool
}

type memData struct {
	mu   sync.Mutex
	data []byte
}

type memObj struct {
	b      *mem
	key    string
	d      *memData
	closed atomic.Bool
}

func newMem(bug string) *mem {
	return &mem{align: 4096, capacity: 16 << 20, bug: bug, objs: map[string]*memData{}}
}

func (b *mem) Caps() backend.Caps {
	return backend.Caps{Name: "mem", Align: b.align, Capacity: b.capacity}
}

func (b *mem) key(k string) string {
	if b.bug == "collide" && len(k) > 100 {
		return k[:100] // a naive file-name shortening
	}
	return k
}

func (b *mem) Open(key string, size int64, create bool) (backend.Object, error) {
	if b.closed.Load() {
		return nil, backend.ErrClosed
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.key(key)
	d := b.objs[k]
	if !create {
		if d == nil {
			if b.bug == "notfound" {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, backend.ErrNotFound
		}
		return &memObj{b: b, key: k, d: d}, nil
	}
	if size%int64(b.align) != 0 {
		return nil, backend.ErrMisaligned
	}
	if d != nil {
		b.used -= int64(len(d.data))
	}
	if b.used+size > b.capacity {
		delete(b.objs, k)
		return nil, backend.ErrNoSpace
	}
	b.used += size
	d = &memData{data: make([]byte, size)}
	b.objs[k] = d
	return &memObj{b: b, key: k, d: d}, nil
}

func (b *mem) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return backend.ErrClosed
	}
	return nil
}

func (o *memObj) check(p []byte, off int64) (int, error) {
	if o.closed.Load() || o.b.closed.Load() {
		return 0, backend.ErrClosed
	}
	a := o.b.align
	if o.b.bug != "align" && (off%int64(a) != 0 || len(p)%a != 0 || len(p) > 0 && uintptr(unsafe.Pointer(&p[0]))%uintptr(a) != 0) {
		return 0, backend.ErrMisaligned
	}
	if off < 0 {
		return 0, fmt.Errorf("negative offset")
	}
	size := int64(len(o.d.data))
	if off >= size {
		return 0, nil
	}
	return int(min(int64(len(p)), size-off)), nil
}

func (o *memObj) ReadAt(p []byte, off int64) (int, error) {
	n, err := o.check(p, off)
	if err != nil {
		return 0, err
	}
	o.d.mu.Lock()
	copy(p[:n], o.d.data[off:])
	o.d.mu.Unlock()
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (o *memObj) WriteAt(p []byte, off int64) (int, error) {
	n, err := o.check(p, off)
	if err != nil {
		return 0, err
	}
	if n < len(p) {
		return 0, fmt.Errorf("past the end")
	}
	if o.b.bug != "nostore" || off == 0 {
		o.d.mu.Lock()
		copy(o.d.data[off:], p)
		o.d.mu.Unlock()
	}
	return n, nil
}

func (o *memObj) Close() error {
	if !o.closed.CompareAndSwap(false, true) && o.b.bug != "close" {
		return backend.ErrClosed
	}
	return nil
}

func (o *memObj) Remove() error {
	if !o.closed.CompareAndSwap(false, true) {
		return backend.ErrClosed
	}
	if o.b.closed.Load() {
		return backend.ErrClosed
	}
	b := o.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs[o.key] == o.d {
		if b.bug != "leak" {
			b.used -= int64(len(o.d.data))
		}
		delete(b.objs, o.key)
	}
	return nil
}

func TestReference(t *testing.T) {
	Run(t, func(t *testing.T) backend.Backend { return newMem("") })
}

// TestCatches runs the suite on each defective backend in a child process
// and checks that the subtest meant to catch the defect fails.
func TestCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	for bug, subtest := range map[string]string{
		"collide":  "OddKeys",
		"notfound": "OpenMissing",
		"align":    "Misaligned",
		"nostore":  "WriteReadBack",
		"close":    "ObjectClosed",
		"leak":     "Remove",
	} {
		t.Run(bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDefective$", "-test.v")
			cmd.Env = append(os.Environ(), "REPLAYTEST_BUG="+bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a backend with the defect %q:\n%s", bug, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestDefective/"+subtest+" ") {
				t.Errorf("the defect %q did not fail %s:\n%s", bug, subtest, out)
			}
		})
	}
}

// TestDefective is TestCatches' child: it runs the suite on a backend
// with the defect REPLAYTEST_BUG names.
func TestDefective(t *testing.T) {
	bug := os.Getenv("REPLAYTEST_BUG")
	if bug == "" {
		t.Skip("run by TestCatches")
	}
	Run(t, func(t *testing.T) backend.Backend { return newMem(bug) })
}

func TestFill(t *testing.T) {
	whole := make([]byte, 3*4096)
	Fill(whole, 7, 4096)
	parts := make([]byte, 3*4096)
	for i := range 3 {
		Fill(parts[i*4096:(i+1)*4096], 7, int64((i+1)*4096))
	}
	if string(whole) != string(parts) {
		t.Error("Fill at once and block by block differ")
	}
	other := make([]byte, 4096)
	Fill(other, 8, 4096)
	if string(other) == string(whole[:4096]) {
		t.Error("Fill gives the same bytes for two seeds")
	}
	Fill(other, 7, 8192)
	if string(other) == string(whole[:4096]) {
		t.Error("Fill gives the same bytes at two offsets")
	}
}
