package datagen

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"testing"
)

// TestVerifyCatches: Verify rejects what a faulty store returns instead of
// a block: another block of the same object, the same block of another
// version (stale data after a rewrite) or key or seed, zeros, and a block
// cut short (the rest left as the buffer held it).
func TestVerifyCatches(t *testing.T) {
	const n, off = 4096, 8192
	g := New(21)
	good := fill(g, n, "k", 3, off)
	short := bytes.Clone(good)
	clear(short[n-512:])
	for _, c := range []struct {
		name string
		p    []byte
	}{
		{"another offset", fill(g, n, "k", 3, off+n)},
		{"another offset, one sector off", fill(g, n, "k", 3, off+512)},
		{"another version", fill(g, n, "k", 2, off)},
		{"another key", fill(g, n, "k2", 3, off)},
		{"another seed", fill(New(22), n, "k", 3, off)},
		{"zeros", make([]byte, n)},
		{"short", short},
	} {
		if _, ok := g.Verify(c.p, "k", 3, off); ok {
			t.Errorf("%s: Verify accepts it", c.name)
		}
	}
	if _, ok := g.Verify(good, "k", 3, off); !ok {
		t.Error("Verify rejects the right bytes")
	}
}

// TestUniqueSectorsAcrossSeeds: no 512-byte sector repeats across seeds
// (the ranks of a run), keys, versions and offsets, and gzip does not
// shrink the bytes either.
func TestUniqueSectorsAcrossSeeds(t *testing.T) {
	seen := map[[sha256.Size]byte]string{}
	var all bytes.Buffer
	p := make([]byte, 16<<10)
	for seed := range uint64(4) {
		g := New(seed)
		for _, key := range []string{"", "k", "k0", "user_1_turn_2"} {
			for version := range uint64(3) {
				for _, off := range []int64{0, 16 << 10, 1 << 30} {
					g.Fill(p, key, version, off)
					all.Write(p)
					for i := 0; i < len(p); i += 512 {
						d := sha256.Sum256(p[i : i+512])
						where := fmt.Sprintf("seed %d %q v%d @%d", seed, key, version, off+int64(i))
						if prev, dup := seen[d]; dup {
							t.Fatalf("sector %s equals sector %s", where, prev)
						}
						seen[d] = where
					}
				}
			}
		}
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write(all.Bytes())
	w.Close()
	if ratio := float64(z.Len()) / float64(all.Len()); ratio < 0.999 {
		t.Errorf("gzip shrank %d bytes to %d (%.4f)", all.Len(), z.Len(), ratio)
	}
}
