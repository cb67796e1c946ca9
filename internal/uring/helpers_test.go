package uring

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

const blockSize = 4096

// probeOnce runs Probe once for the whole test binary.
var probeOnce = sync.OnceValue(Probe)

// requireURing skips tb, giving Probe's reason, where io_uring cannot be
// used (a sandbox with io_uring_disabled set or a seccomp policy).
func requireURing(tb testing.TB) {
	tb.Helper()
	if err := probeOnce(); err != nil {
		tb.Skipf("io_uring unavailable: %v", err)
	}
}

// newRing sets up a ring for tb and closes it at cleanup.
func newRing(tb testing.TB, p Params) *Ring {
	tb.Helper()
	requireURing(tb)
	r, err := New(p)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := r.Close(); err != nil && !errors.Is(err, ErrClosed) {
			tb.Errorf("close: %v", err)
		}
	})
	return r
}

// alignedBuf returns n bytes of page-aligned anonymous memory, unmapped at
// cleanup, for O_DIRECT and registered-buffer I/O.
func alignedBuf(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		tb.Fatalf("mmap %d bytes: %v", n, err)
	}
	tb.Cleanup(func() { unix.Munmap(b) })
	return b
}

// openFile opens path with flags (O_CLOEXEC added) and closes it at
// cleanup. With O_DIRECT, a file system that refuses it skips tb.
func openFile(tb testing.TB, path string, flags int) int {
	tb.Helper()
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		if flags&unix.O_DIRECT != 0 && errors.Is(err, unix.EINVAL) {
			tb.Skipf("%s: file system refuses O_DIRECT", path)
		}
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() { unix.Close(fd) })
	return fd
}

// fillBlock writes block number blk's pattern into b: every 8 bytes hold
// blk<<32 | their index, so a block read from the wrong place or a torn
// buffer shows.
func fillBlock(b []byte, blk uint64) {
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], blk<<32|uint64(i/8))
	}
}

// checkBlock reports where b differs from block blk's pattern.
func checkBlock(b []byte, blk uint64) error {
	for i := 0; i+8 <= len(b); i += 8 {
		if got, want := binary.LittleEndian.Uint64(b[i:]), blk<<32|uint64(i/8); got != want {
			return fmt.Errorf("block %d byte %d: got %#x, want %#x", blk, i, got, want)
		}
	}
	return nil
}

// patternFile creates a file of blocks blockSize-byte blocks in dir, each
// filled by fillBlock, and returns its path.
func patternFile(tb testing.TB, dir string, blocks int) string {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("pattern-%d", blocks))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	chunk := make([]byte, 256*blockSize)
	for blk := 0; blk < blocks; {
		n := min(256, blocks-blk)
		for i := range n {
			fillBlock(chunk[i*blockSize:(i+1)*blockSize], uint64(blk+i))
		}
		if _, err := f.Write(chunk[:n*blockSize]); err != nil {
			tb.Fatal(err)
		}
		blk += n
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}
