package datagen

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// fill returns n bytes of object key at version from offset.
func fill(g *Generator, n int, key string, version uint64, offset int64) []byte {
	p := make([]byte, n)
	g.Fill(p, key, version, offset)
	return p
}

func TestDeterministic(t *testing.T) {
	a, b := New(42), New(42)
	for _, c := range []struct {
		key     string
		version uint64
		offset  int64
		n       int
	}{
		{"k", 0, 0, 4096},
		{"user_17_seq_3_layer_all", 5, 1 << 20, 1 << 20},
		{"", 0, 0, 16},
		{"k", 1<<64 - 1, 1 << 40, 4096},
	} {
		if !bytes.Equal(fill(a, c.n, c.key, c.version, c.offset), fill(b, c.n, c.key, c.version, c.offset)) {
			t.Errorf("%+v: two Generators of one seed differ", c)
		}
	}
}

// TestDefinition pins the documented construction: the bytes are built
// here from the package doc alone, word by word, and a golden digest guards
// against any change of the definition, which would break --verify of old
// data.
func TestDefinition(t *testing.T) {
	const seed, key, version = 7, "obj", 3
	var in []byte
	in = append(in, "kvbench datagen v2\x00"...)
	in = binary.LittleEndian.AppendUint64(in, seed)
	sum := sha256.Sum256(in)
	var k [4]uint64
	for i := range k {
		k[i] = binary.LittleEndian.Uint64(sum[8*i:])
	}
	h := uint64(14695981039346656037)
	for _, c := range append([]byte(key), binary.LittleEndian.AppendUint64(nil, version)...) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	mumRef := func(x, y uint64) uint64 {
		// The 128-bit product by schoolbook halves, not math/bits.
		x0, x1, y0, y1 := x&0xffffffff, x>>32, y&0xffffffff, y>>32
		ll, lh, hl, hh := x0*y0, x0*y1, x1*y0, x1*y1
		mid := ll>>32 + lh&0xffffffff + hl&0xffffffff
		lo := ll&0xffffffff | mid<<32
		hi := hh + lh>>32 + hl>>32 + mid>>32
		return hi ^ lo
	}
	const P0, P1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
	a, b := mumRef(h^k[0], k[1]^P0), mumRef(h^k[2], k[3]^P1)
	for _, offset := range []int64{0, 4096, 1 << 40} {
		want := make([]byte, 256)
		for i := 0; i < len(want); i += 8 {
			step := uint64(P0)
			x := a + uint64((offset+int64(i))/8+1)*step
			binary.LittleEndian.PutUint64(want[i:], mumRef(x, x^b))
		}
		got := fill(New(seed), len(want), key, version, offset)
		if !bytes.Equal(got, want) {
			t.Fatalf("offset %d: Fill differs from the documented construction\n got %x\nwant %x", offset, got[:32], want[:32])
		}
	}
	digest := sha256.Sum256(fill(New(1), 1<<20, "golden", 1, 0))
	if got, want := hex.EncodeToString(digest[:]), goldenDigest; got != want {
		t.Errorf("SHA-256 of the golden object is %s, want %s: the data definition changed", got, want)
	}
}

// goldenDigest is the SHA-256 of 1 MiB of object "golden", version 1, seed 1.
const goldenDigest = "494f905b347a1ce9ab58c74f34b82b0e1d1f3bd0b5b2657d86e52a9531dc5c04"

func TestInputsMatter(t *testing.T) {
	base := fill(New(1), 4096, "key", 1, 0)
	for name, other := range map[string][]byte{
		"seed":    fill(New(2), 4096, "key", 1, 0),
		"key":     fill(New(1), 4096, "kez", 1, 0),
		"prefix":  fill(New(1), 4096, "ke", 1, 0),
		"version": fill(New(1), 4096, "key", 2, 0),
		"offset":  fill(New(1), 4096, "key", 1, 4096),
	} {
		if bytes.Equal(base, other) {
			t.Errorf("changing the %s does not change the bytes", name)
		}
	}
}

func TestRanges(t *testing.T) {
	g := New(9)
	whole := fill(g, 1<<20, "obj", 4, 0)
	for _, r := range []struct{ off, n int }{
		{0, 16}, {16, 16}, {4096, 4096}, {1<<20 - 4096, 4096}, {512 << 10, 256 << 10},
		// Unaligned offsets and lengths are supported too.
		{1, 1}, {3, 100}, {17, 4095}, {1<<20 - 5, 5}, {100_001, 77_777},
	} {
		if got := fill(g, r.n, "obj", 4, int64(r.off)); !bytes.Equal(got, whole[r.off:r.off+r.n]) {
			t.Errorf("range [%d, +%d) differs from the same range of a fill from 0", r.off, r.n)
		}
	}
	// Fill overwrites whatever p held.
	p := bytes.Repeat([]byte{0xa5}, 4096)
	g.Fill(p, "obj", 4, 0)
	if !bytes.Equal(p, whole[:4096]) {
		t.Error("Fill into a dirty buffer differs")
	}
}

// TestIncompressible: zstd at its best cannot shrink 64 MiB of output.
func TestIncompressible(t *testing.T) {
	size := 64 << 20
	if testing.Short() {
		size = 8 << 20
	}
	g := New(3)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var out countWriter
	enc.Reset(&out)
	buf := make([]byte, 1<<20)
	for i := range size / len(buf) {
		// Several objects, as a run writes them.
		g.Fill(buf, fmt.Sprintf("obj%d", i%4), 0, int64(i/4)*int64(len(buf)))
		if _, err := enc.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if ratio := float64(out) / float64(size); ratio < 0.999 {
		t.Errorf("zstd shrank %d bytes to %d (%.4f), want at least 99.9 %%", size, out, ratio)
	}
}

// countWriter counts the bytes written to it.
type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) { *w += countWriter(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// TestUniqueBlocks: no two 4 KiB blocks are equal across 256 MiB of objects
// of many keys and versions.
func TestUniqueBlocks(t *testing.T) {
	size := 256 << 20
	if testing.Short() {
		size = 16 << 20
	}
	const block = 4096
	g := New(5)
	seen := make(map[[sha256.Size]byte]string, size/block)
	buf := make([]byte, 64<<10)
	for obj := 0; obj*len(buf) < size; obj++ {
		key, version := fmt.Sprintf("layer_%d", obj%1000), uint64(obj/1000)
		g.Fill(buf, key, version, 0)
		for i := 0; i < len(buf); i += block {
			d := sha256.Sum256(buf[i : i+block])
			where := fmt.Sprintf("%s v%d @%d", key, version, i)
			if prev, dup := seen[d]; dup {
				t.Fatalf("block %s equals block %s", where, prev)
			}
			seen[d] = where
		}
	}
	if len(seen) != size/block {
		t.Fatalf("hashed %d blocks, want %d", len(seen), size/block)
	}
}

func TestVerify(t *testing.T) {
	g := New(11)
	const n = 3<<20 + 100 // several Verify chunks and a ragged end
	for _, off := range []int64{0, 1 << 30, 7} {
		p := fill(g, n, "obj", 2, off)
		if bad, ok := g.Verify(p, "obj", 2, off); !ok || bad != -1 {
			t.Fatalf("offset %d: Verify of good data = %d, %v", off, bad, ok)
		}
		for _, i := range []int{0, 1, 65535, 65536, 1 << 20, n - 1} {
			p[i] ^= 0x01
			bad, ok := g.Verify(p, "obj", 2, off)
			if ok || bad != off+int64(i) {
				t.Errorf("offset %d: flipped byte %d: Verify = %d, %v; want %d, false", off, i, bad, ok, off+int64(i))
			}
			p[i] ^= 0x01
		}
		// The first of two bad bytes is reported.
		p[5000] ^= 0xff
		p[9] ^= 0xff
		if bad, ok := g.Verify(p, "obj", 2, off); ok || bad != off+9 {
			t.Errorf("offset %d: two flips: Verify = %d, %v; want %d", off, bad, ok, off+9)
		}
	}
	if _, ok := g.Verify(fill(g, 4096, "obj", 2, 0), "obj", 3, 0); ok {
		t.Error("Verify accepts another version's bytes")
	}
	if bad, ok := g.Verify(nil, "obj", 2, 0); !ok || bad != -1 {
		t.Errorf("Verify of nothing = %d, %v", bad, ok)
	}
}

func TestConcurrentUse(t *testing.T) {
	g := New(13)
	want := fill(g, 1<<20, "shared", 0, 0)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := make([]byte, 64<<10)
			for i := range 16 {
				off := int64((w*16+i)%16) * int64(len(p))
				g.Fill(p, "shared", 0, off)
				if !bytes.Equal(p, want[off:off+int64(len(p))]) {
					errs <- fmt.Sprintf("worker %d: block at %d differs", w, off)
					return
				}
				if bad, ok := g.Verify(p, "shared", 0, off); !ok {
					errs <- fmt.Sprintf("worker %d: Verify fails at %d", w, bad)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestNegativeOffsetPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Fill with a negative offset did not panic")
		}
	}()
	New(1).Fill(make([]byte, 16), "k", 0, -16)
}

func TestFillDevice(t *testing.T) {
	g := New(17)
	whole := fill(g, 1<<20, "dev", 2, 0)
	for _, r := range []struct{ off, n int }{
		{0, 4096}, {4096, 1 << 19}, {8, 64}, {16, 100}, {24, 33}, {0, 63}, {3, 4096}, {1<<20 - 40, 40},
	} {
		p := bytes.Repeat([]byte{0x5a}, r.n)
		g.FillDevice(p, "dev", 2, int64(r.off))
		if !bytes.Equal(p, whole[r.off:r.off+r.n]) {
			t.Errorf("FillDevice [%d, +%d) differs from Fill", r.off, r.n)
		}
	}
}
