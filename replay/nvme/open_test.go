package nvme

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenFile checks what openFile keeps of os.OpenFile: close-on-exec,
// and errors that name the file and match fs.ErrNotExist.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	f, err := openFile(path, unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Error("the file is not close-on-exec")
	}
	if f.Name() != path {
		t.Errorf("Name() %q, want %q", f.Name(), path)
	}
	missing := filepath.Join(dir, "none")
	_, err = openFile(missing, unix.O_RDWR)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("opening a missing file: %v, want fs.ErrNotExist naming %s", err, missing)
	}
}

// BenchmarkOpen opens and closes an existing object, as a read does, and
// makes one again, as a write does (open with O_TRUNC, fallocate, close;
// the same name, so no new inode): the backend's metadata calls per
// object, beside its I/O.
func BenchmarkOpen(b *testing.B) {
	be := newNVMe(b, b.TempDir(), Options{Direct: true})
	defer be.Close()
	const size = 1 << 20
	b.Run("existing", func(b *testing.B) {
		o, err := be.Open("k", size, true)
		if err != nil {
			b.Fatal(err)
		}
		o.Close()
		for b.Loop() {
			o, err := be.Open("k", size, false)
			if err != nil {
				b.Fatal(err)
			}
			o.Close()
		}
	})
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			o, err := be.Open("c", size, true)
			if err != nil {
				b.Fatal(err)
			}
			o.Close()
		}
	})
}
