package arena_test

import (
	"errors"
	"testing"

	"github.com/kvbench/kvbench/replay/arena"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
)

// sliceMemory is an arena's Memory in a Go slice, counting its releases:
// the arena's rules apart from any tier's memory.
type sliceMemory struct {
	b        []byte
	released int
}

func (m *sliceMemory) Copy(p []byte, off int64, write bool) error {
	if write {
		copy(m.b[off:], p)
	} else {
		copy(p, m.b[off:off+int64(len(p))])
	}
	return nil
}

func (m *sliceMemory) Release() error { m.released++; return nil }

// The arena over any Memory passes the contract's conformance suite.
func TestConformance(t *testing.T) {
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		return arena.New("test", 16<<20, &sliceMemory{b: make([]byte, 16<<20)})
	})
}

// An object in pieces goes through Span piece by piece, in order, in the
// Memory it lives in; Close releases the Memory once.
func TestSpanAndRelease(t *testing.T) {
	const P = arena.Align
	mem := &sliceMemory{b: make([]byte, 4*P)}
	b := arena.New("test", 4*P, mem)
	if c := b.Caps(); c.Name != "test" || c.Align != P || c.Capacity != 4*P || !c.FastMeta {
		t.Errorf("Caps() = %+v", c)
	}
	// Fragment the arena: objects at pages 0 1 2 3, free 1 and 3, and a
	// two-page object takes both.
	var objs []backend.Object
	for _, k := range []string{"a", "b", "c", "d"} {
		o, err := b.Open(k, P, true)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	objs[1].Remove()
	objs[3].Remove()
	o, err := b.Open("e", 2*P, true)
	if err != nil {
		t.Fatalf("a two-page object in two free pages: %v", err)
	}
	sp, ok := o.(arena.Spanner)
	if !ok {
		t.Fatal("an arena object is not a Spanner")
	}
	var at []int64
	if err := sp.Span(0, 2*P, func(m arena.Memory, off, n int64) error {
		if m != arena.Memory(mem) || n != P {
			t.Errorf("Span piece: memory %T, %d bytes", m, n)
		}
		at = append(at, off)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(at) != 2 || at[0] != P || at[1] != 3*P {
		t.Errorf("pieces at %v, want [%d %d]", at, P, 3*P)
	}
	if err := sp.Span(P, 2*P, func(arena.Memory, int64, int64) error { return nil }); err == nil {
		t.Error("a Span past the object's end did not fail")
	}
	if st := b.Stats(); st.Free != 0 || st.Objects != 3 || st.FreeExtents != 0 {
		t.Errorf("Stats() = %+v, want a full arena of 3 objects", st)
	}
	if err := b.Close(); err != nil || mem.released != 1 {
		t.Fatalf("Close: %v, %d releases", err, mem.released)
	}
	if err := b.Close(); !errors.Is(err, backend.ErrClosed) || mem.released != 1 {
		t.Errorf("second Close: %v, %d releases", err, mem.released)
	}
	if _, err := o.WriteAt(make([]byte, P), 0); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("WriteAt after Close: %v", err)
	}
}
