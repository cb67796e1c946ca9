package replay

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestKeyTable adds keys of many lengths (one larger than a chunk, keys
// that are prefixes of others) with flags, through several growths, and
// wants each found with its flag, a key added again keeping its first
// flag, and keys never added not found, as a map finds them.
func TestKeyTable(t *testing.T) {
	var kt keyTable
	want := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := [][]byte{[]byte("K"), []byte("KK"), []byte(""), bytes.Repeat([]byte("x"), 3*maxChunk)}
	for i := range 50_000 {
		keys = append(keys, fmt.Appendf(nil, "conv_user_%04d_%04d_turn_%d", i%200, i/200, rng.IntN(3)))
	}
	for _, k := range keys {
		flag := rng.IntN(2) == 1
		got, added := kt.add(k, flag)
		first, seen := want[string(k)]
		if !seen {
			want[string(k)] = flag
			first = flag
		}
		if added == seen || got != first {
			t.Fatalf("add(%.40q, %v) = %v, %v; want %v, %v", k, flag, got, added, first, !seen)
		}
	}
	if kt.n != len(want) {
		t.Errorf("%d keys, want %d", kt.n, len(want))
	}
	for k, flag := range want {
		if got, ok := kt.get([]byte(k)); !ok || got != flag {
			t.Fatalf("get(%.40q) = %v, %v; want %v, true", k, got, ok, flag)
		}
	}
	for _, k := range []string{"KKK", "k", "conv_user_0000_0000_turn_3", string(bytes.Repeat([]byte("x"), 3*maxChunk-1))} {
		if kt.has([]byte(k)) {
			t.Errorf("has(%.40q) for a key never added", k)
		}
	}
	var empty keyTable
	if empty.has([]byte("K")) {
		t.Error("an empty table has K")
	}
}

// TestKeyTableAllocs wants a lookup, and an add of a key the table has,
// to allocate nothing.
func TestKeyTableAllocs(t *testing.T) {
	var kt keyTable
	kt.add([]byte("conv_user_0001_0002_turn_1"), true)
	key := []byte("conv_user_0001_0002_turn_1")
	if n := testing.AllocsPerRun(100, func() { kt.add(key, false); kt.get(key) }); n != 0 {
		t.Errorf("%v allocations per lookup, want 0", n)
	}
}

// TestClHeapOrder pushes items of few distinct times, popping some on
// the way, and wants them popped by time, then by seq (the order
// container/heap gave the closed loop), and the popped slot cleared.
func TestClHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.Unix(0, 0)
	var h clHeap
	var popped []clItem
	pop := func() {
		popped = append(popped, h[0])
		h.pop()
		if c := h[:cap(h)][len(h)]; c.req != nil {
			t.Fatalf("a popped slot holds its request")
		}
	}
	for seq := range uint64(2000) {
		h.push(clItem{at: base.Add(time.Duration(rng.IntN(50))), seq: seq, req: &clRequest{}})
		if rng.IntN(3) == 0 {
			pop()
		}
	}
	for len(h) > 0 {
		pop()
	}
	// Popped while pushing, items come out in order among those there.
	for i := 1; i < len(popped); i++ {
		a, b := popped[i-1], popped[i]
		if b.at.Before(a.at) && b.seq < a.seq || b.at.Equal(a.at) && b.seq < a.seq {
			t.Fatalf("popped %v/%d after %v/%d", b.at, b.seq, a.at, a.seq)
		}
	}
	if len(popped) != 2000 {
		t.Fatalf("popped %d of 2000", len(popped))
	}
}
