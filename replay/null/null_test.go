package null_test

import (
	"errors"
	"testing"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/replaytest"
)

func TestConformance(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend { return null.New() })
}

func TestConformanceAlignedBounded(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return null.New(null.WithAlign(4096), null.WithCapacity(8<<20))
	})
}

func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		opts     []null.Option
		align    int
		capacity int64
	}{
		{nil, 1, 0},
		{[]null.Option{null.WithAlign(0)}, 1, 0},
		{[]null.Option{null.WithAlign(512)}, 512, 0},
		{[]null.Option{null.WithAlign(3000)}, 4096, 0},
		{[]null.Option{null.WithCapacity(-1)}, 1, 0},
		{[]null.Option{null.WithCapacity(1 << 20)}, 1, 1 << 20},
	} {
		c := null.New(tc.opts...).Caps()
		if c.Name != "null" || c.Align != tc.align || c.Capacity != tc.capacity {
			t.Errorf("Caps() = %+v, want Name null, Align %d, Capacity %d", c, tc.align, tc.capacity)
		}
	}
}

// TestReadLeavesBuffer checks that a read neither zeroes nor fills p.
func TestReadLeavesBuffer(t *testing.T) {
	b := null.New()
	defer b.Close()
	o, err := b.Open("k", 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt([]byte("abcdefgh"), 0); err != nil {
		t.Fatal(err)
	}
	p := []byte("12345678")
	if n, err := o.ReadAt(p, 0); n != 8 || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if string(p) != "12345678" {
		t.Errorf("ReadAt changed p to %q", p)
	}
}

func TestSizeMismatch(t *testing.T) {
	b := null.New()
	defer b.Close()
	if _, err := b.Open("k", 8, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open("k", 16, false); err == nil {
		t.Error("Open of 16 bytes of an 8-byte object succeeded")
	}
}

// TestStaleObject checks that an Object whose object was replaced neither
// reads nor removes the replacement.
func TestStaleObject(t *testing.T) {
	b := null.New(null.WithCapacity(16))
	defer b.Close()
	old, err := b.Open("k", 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open("k", 16, true); err != nil {
		t.Fatalf("replacing create in a full backend: %v", err)
	}
	if _, err := old.ReadAt(make([]byte, 8), 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("ReadAt of a replaced object: %v, want ErrClosed", err)
	}
	if err := old.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open("k", 16, false); err != nil {
		t.Errorf("a stale Remove removed the replacement: %v", err)
	}
}
