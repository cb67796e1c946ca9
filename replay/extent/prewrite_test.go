package extent

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unwrittenBytes returns the bytes of path's extents the file system marks
// unwritten (FIEMAP_EXTENT_UNWRITTEN: allocated, reading as zeros, whose
// first write converts them); the test skips where FIEMAP is refused.
func unwrittenBytes(t *testing.T, path string) int64 {
	t.Helper()
	const (
		fsIocFiemap = 0xC020660B // _IOWR('f', 11, struct fiemap)
		flagSync    = 0x1
		unwritten   = 0x800
		extents     = 512
	)
	type extent struct {
		logical, physical, length uint64
		_                         [2]uint64
		flags                     uint32
		_                         [3]uint32
	}
	type fiemap struct {
		start, length           uint64
		flags, mapped, count, _ uint32
		ext                     [extents]extent
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total int64
	for start := uint64(0); ; {
		m := fiemap{start: start, length: ^uint64(0) - start, flags: flagSync, count: extents}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&m))); errno != 0 {
			t.Skipf("FIEMAP on %s: %v", path, errno)
		}
		if m.mapped == 0 {
			return total
		}
		for _, e := range m.ext[:m.mapped] {
			if e.flags&unwritten != 0 {
				total += int64(e.length)
			}
			start = e.logical + e.length
		}
		if m.ext[m.mapped-1].flags&0x1 != 0 { // FIEMAP_EXTENT_LAST
			return total
		}
	}
}

// TestPrewrite: with Prewrite, what New preallocated is written before it
// returns (no unwritten extent is left for the replay's first writes to
// convert), a file's existing bytes are left as they were, and nothing is
// said; without it, the extents stay unwritten and Caps().Warnings says so.
func TestPrewrite(t *testing.T) {
	const size = 24 << 20
	for _, tc := range []struct {
		name     string
		prewrite bool
		existing []byte // bytes in the file before New
	}{
		{"new", true, nil},
		{"new-not-prewritten", false, nil},
		{"extended", true, bytes.Repeat([]byte("user"), 2048)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kvbench.extent")
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err := New(path, Options{Size: size, Direct: true, Keep: true, Prewrite: tc.prewrite})
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(b.Caps().Warnings, func(w string) bool { return strings.Contains(w, "not written before the replay") })
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if warned == tc.prewrite {
				t.Errorf("warned of unwritten extents: %t, with prewrite %t", warned, tc.prewrite)
			}
			u := unwrittenBytes(t, path)
			switch {
			case tc.prewrite && u != 0:
				t.Errorf("%d bytes still unwritten after the prewrite", u)
			case !tc.prewrite && u == 0:
				t.Skip("the file system left no unwritten extent to measure (no fallocate?)")
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != size || !bytes.Equal(got[:len(tc.existing)], tc.existing) {
				t.Errorf("file of %d bytes, its first %d bytes changed: %t", len(got), len(tc.existing), !bytes.Equal(got[:len(tc.existing)], tc.existing))
			}
			if tc.prewrite && bytes.Count(got[len(tc.existing):], []byte{0}) > size/64 {
				t.Errorf("the prewritten range is mostly zeros: compressible, not written data")
			}
		})
	}
}

// TestPrewriteCancel: a cancelled context stops the preallocation or the
// prewrite (here as it starts, from OnPrewrite, and before New) with an
// error that matches context.Canceled; a file New created is gone when it
// returns, and an existing file, extended, keeps its bytes and stays.
func TestPrewriteCancel(t *testing.T) {
	const size = 64 << 20
	user := bytes.Repeat([]byte("user"), 2048)
	for _, tc := range []struct {
		name     string
		existing []byte
		before   bool // cancelled before New
	}{
		{"new", nil, false},
		{"new-cancelled-before", nil, true},
		{"extended", user, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kvbench.extent")
			if tc.existing != nil {
				if err := os.WriteFile(path, tc.existing, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.before {
				cancel()
			}
			var asked int64
			b, err := NewContext(ctx, path, Options{Size: size, Direct: true, Prewrite: true, OnPrewrite: func(n int64) {
				asked = n
				cancel()
			}})
			if err == nil {
				b.Close()
				t.Fatal("New of a cancelled prewrite succeeded")
			}
			if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "extent: ") || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want context.Canceled, naming %s", err, path)
			}
			if !tc.before && asked != size-int64(len(tc.existing)) {
				t.Errorf("OnPrewrite told of %d bytes, want %d", asked, size-len(tc.existing))
			}
			got, err := os.ReadFile(path)
			switch {
			case tc.existing == nil && !errors.Is(err, os.ErrNotExist):
				t.Errorf("the file New created is still there (%v)", err)
			case tc.existing != nil && (err != nil || !bytes.Equal(got[:len(tc.existing)], tc.existing)):
				t.Errorf("the existing file: %v, its bytes kept: %t", err, err == nil && bytes.Equal(got[:len(tc.existing)], tc.existing))
			}
			if tc.existing == nil {
				if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
					t.Errorf("left in the directory: %v", entries)
				}
			}
		})
	}
}

// TestFailedNewForgetsFile: a NewContext that created its file and then
// failed removes the file itself; the context's later end must not remove
// whatever holds the path by then (another backend's file, kept with
// Keep).
func TestFailedNewForgetsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvbench.extent")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if b, err := NewContext(ctx, path, Options{Size: 1 << 60}); err == nil {
		b.Close()
		t.Fatal("New of 1 EiB succeeded")
	}
	b, err := NewContext(context.Background(), path, Options{Size: 1 << 20, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cancel()
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("the end of a failed New's context removed %s, since made by another New: %v", path, err)
		}
	}
}

// TestFailedNewShrinksBack: a NewContext stopped while it prewrote the
// extension of an existing file gives the extension back: the file has
// its size and bytes again (it was left 64 MiB long).
func TestFailedNewShrinksBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kvbench.extent")
	user := bytes.Repeat([]byte("user"), 2048)
	if err := os.WriteFile(path, user, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := NewContext(ctx, path, Options{Size: 64 << 20, Direct: true, Prewrite: true, OnPrewrite: func(int64) { cancel() }})
	if err == nil {
		b.Close()
		t.Fatal("New of a cancelled prewrite succeeded")
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, user) {
		t.Errorf("the existing file after a stopped New: %d bytes (%v), its own %d bytes kept: %t", len(got), err, len(user), err == nil && bytes.HasPrefix(got, user))
	}
}

// TestUsableSpace: a user other than root cannot preallocate the blocks
// the file system reserves for root, so the up-front check counts only
// those available to it: counting the free blocks let a file too large
// for the user fill the file system before failing.
func TestUsableSpace(t *testing.T) {
	st := unix.Statfs_t{Bsize: 4096, Bfree: 1000, Bavail: 500}
	if got, want := usable(&st, true), int64(1000*4096); got != want {
		t.Errorf("root: %d, want %d", got, want)
	}
	if got, want := usable(&st, false), int64(500*4096); got != want {
		t.Errorf("user: %d, want %d", got, want)
	}
	huge := unix.Statfs_t{Bsize: 1 << 20, Bfree: math.MaxUint64, Bavail: math.MaxUint64}
	if got := usable(&huge, false); got <= 0 {
		t.Errorf("huge file system: %d", got)
	}
}
