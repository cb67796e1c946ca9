package datagen

import (
	"bytes"
	"testing"
)

// FuzzFillDevice: FillDevice (non-temporal stores on amd64) gives Fill's
// bytes for any offset, length and alignment of the buffer, and writes
// nothing outside it.
func FuzzFillDevice(f *testing.F) {
	for _, c := range []struct {
		off      int64
		n, shift int
		version  uint64
	}{
		{0, 64, 0, 1}, {8, 100, 1, 2}, {3, 4096, 7, 0}, {1 << 40, 1 << 16, 63, 1<<64 - 1}, {16, 63, 33, 5},
	} {
		f.Add(uint64(1), "k", c.version, c.off, c.n, c.shift)
	}
	f.Fuzz(func(t *testing.T, seed uint64, key string, version uint64, off int64, n, shift int) {
		if off < 0 || off > 1<<50 || n < 0 || n > 1<<17 || shift < 0 || shift > 127 {
			t.Skip()
		}
		g := New(seed)
		want := make([]byte, n)
		g.Fill(want, key, version, off)
		const guard = 64
		buf := bytes.Repeat([]byte{0xa5}, guard+shift+n+guard)
		p := buf[guard+shift : guard+shift+n]
		g.FillDevice(p, key, version, off)
		if !bytes.Equal(p, want) {
			t.Fatalf("offset %d, %d bytes at alignment %d: FillDevice differs from Fill", off, n, shift)
		}
		for i, c := range buf {
			if (i < guard+shift || i >= guard+shift+n) && c != 0xa5 {
				t.Fatalf("offset %d, %d bytes at alignment %d: byte %d outside the buffer written", off, n, shift, i-guard-shift)
			}
		}
		if bad, ok := g.Verify(p, key, version, off); !ok {
			t.Fatalf("Verify of FillDevice's bytes fails at %d", bad)
		}
	})
}
