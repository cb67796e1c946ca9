package extent

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
)

// TestPrewriteUnique: no 512-byte sector of a prewritten file repeats
// another (the prewrite's jobs each write one random buffer at many
// chunks, each chunk's words mixed with their file offset), so a
// deduplicating store writes every byte; the same bytes at two offsets
// differ.
func TestPrewriteUnique(t *testing.T) {
	const size = 40 << 20 // ten chunks: the four jobs reuse their buffers
	path := filepath.Join(t.TempDir(), "kvbench.extent")
	b, err := New(path, Options{Size: size, Direct: true, Keep: true, Prewrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[[32]byte]int, len(got)/512)
	dups := 0
	for i := 0; i+512 <= len(got); i += 512 {
		h := sha256.Sum256(got[i : i+512])
		if _, dup := seen[h]; dup {
			dups++
		}
		seen[h] = i
	}
	if dups != 0 || len(seen) < size/512 {
		t.Errorf("%d duplicate 512-byte sectors in a prewritten file of %d bytes", dups, len(got))
	}

	base := make([]byte, 4096)
	for i := range base {
		base[i] = byte(i * 7)
	}
	p, q := make([]byte, 4096), make([]byte, 4096)
	prewriteBytes(p, base, 0)
	prewriteBytes(q, base, 4<<20)
	for i := 0; i < len(p); i += 512 {
		if string(p[i:i+512]) == string(q[i:i+512]) {
			t.Fatalf("sector %d: the same base bytes at offsets 0 and 4 MiB are equal", i/512)
		}
	}
}
