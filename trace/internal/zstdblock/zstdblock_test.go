package zstdblock

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/kvbench/kvbench/trace/internal/lz"
	"github.com/kvbench/kvbench/trace/internal/zstdtest"
)

// TestFittedTables codes random blocks, whose literal lengths,
// match lengths and offsets spread over many codes, and checks that the
// zstd library and the zstd command decode them to what the sequences
// describe: the fitted FSE tables and their descriptions (normalize,
// writeNCount) against real decoders.
func TestFittedTables(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c := NewWriter(io.Discard)
	defer c.Close()
	for iter := range 150 {
		var want, lits []byte
		var seqs []lz.Sequence
		// skewed draws a length: mostly small, sometimes large.
		skewed := func(small, large int) int {
			if rng.IntN(8) == 0 {
				return rng.IntN(large)
			}
			return rng.IntN(small)
		}
		n := 1 + rng.IntN(4000)
		if iter%10 == 0 {
			n = 64 + rng.IntN(8) // around the fitted tables' threshold
		}
		for range n {
			lit := skewed(1+iter%20, 3000)
			ml := 3 + skewed(1+iter%40, 2000)
			if len(want)+lit+ml > lz.MaxBlock-200 {
				break
			}
			for range lit {
				b := byte('a' + rng.IntN(1+iter%26))
				lits = append(lits, b)
				want = append(want, b)
			}
			if len(want) == 0 {
				lits = append(lits, 'x')
				want = append(want, 'x')
				lit++
			}
			off := 1 + rng.IntN(len(want))
			for range ml {
				want = append(want, want[len(want)-off])
			}
			seqs = append(seqs, lz.Sequence{LitLen: uint32(lit), MLBase: uint32(ml - 3), OffBase: uint32(off + 3)})
		}
		tail := rng.IntN(100)
		for range tail {
			b := byte('A' + rng.IntN(26))
			lits = append(lits, b)
			want = append(want, b)
		}
		j := &lz.Block{Head: lz.FrameHeader(nil, 20), Lits: lits, Seqs: seqs, Last: true}
		frame := c.code(bytes.Clone(j.Head), j)
		if got := zstdtest.Decode(t, frame); !bytes.Equal(got, want) {
			t.Fatalf("iteration %d (%d sequences): decoded %d bytes differ from the %d described", iter, len(seqs), len(got), len(want))
		}
	}
}

// TestWriterFrame writes a frame of three blocks through a Writer: a raw
// block, a block of literals and sequences (one extended), and a last
// block of literals only; it decodes to their content, Sync returns once
// the blocks before it are written, and Close is idempotent.
func TestWriterFrame(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	b := w.NewBlock()
	b.Head = lz.FrameHeader(b.Head, 20)
	b.Raw = append(b.Raw, "Timestamp,Key\n"...)
	w.Send(b)
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if out.Len() == 0 {
		t.Fatal("Sync returned before the first block was written")
	}
	// "0.1,abcd\n" then a match of 9 bytes at offset 9, extended by 9:
	// the row three times in all.
	b = w.NewBlock()
	b.Lits = append(b.Lits, "0.1,abcd\n"...)
	s := lz.Sequence{LitLen: 9, MLBase: 9 - 3, OffBase: 9 + 3}
	s.Extend(9)
	b.Seqs = append(b.Seqs, s)
	w.Send(b)
	b = w.NewBlock()
	b.Lits, b.Last = append(b.Lits, "end\n"...), true
	w.Send(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	want := "Timestamp,Key\n" + "0.1,abcd\n0.1,abcd\n0.1,abcd\n" + "end\n"
	if got := zstdtest.Decode(t, out.Bytes()); string(got) != want {
		t.Fatalf("decoded %q, want %q", got, want)
	}
}

// TestWriterError: the underlying writer's error is Err's, Sync's and
// Close's, and the blocks after it are dropped.
func TestWriterError(t *testing.T) {
	boom := errors.New("disk full")
	w := NewWriter(failWriter{boom})
	b := w.NewBlock()
	b.Head = lz.FrameHeader(b.Head, 20)
	b.Raw = append(b.Raw, "x"...)
	w.Send(b)
	if err := w.Sync(); !errors.Is(err, boom) {
		t.Fatalf("Sync: %v, want %v", err, boom)
	}
	w.Send(w.NewBlock())
	if err := w.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v, want %v", err, boom)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// TestBound: a block of random literals coded with no sequences is never
// larger than Bound says.
func TestBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := NewWriter(io.Discard)
	defer w.Close()
	for _, n := range []int{0, 1, 31, 32, 255, 256, 4095, 4096, 1 << 14, lz.MaxBlock} {
		lits := make([]byte, n)
		for i := range lits {
			lits[i] = byte(rng.IntN(256))
		}
		j := &lz.Block{Lits: lits, Seqs: []lz.Sequence{{OffBase: 4}}}
		if got, bound := len(w.code(nil, j)), 3+lz.Bound(len(lits), 1); got > bound {
			t.Errorf("%d literals: block of %d bytes, Bound %d", n, got, bound)
		}
	}
}
