package ioengine

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// locatedObj is a fileObj that says where it lies (backend.Locator), as
// the nvme and extent objects do.
type locatedObj struct {
	fileObj
	file string
}

func (o *locatedObj) Where(off int64) string {
	return fmt.Sprintf("%s at offset %d", o.file, o.base+off)
}

// TestUringErrorNames: an I/O the kernel fails (EBADF, a write through a
// read-only descriptor; an end of file inside the block) comes back with
// an error that names the object's key, the offset in it, and the file and
// offset there when the object says (else the descriptor), and still
// matches the errno.
func TestUringErrorNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.img")
	rw, _ := openFile(t, path, 16<<10)
	ro, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(ro) })
	e, _, done := newEngine(t, "uring", 1, 8192)
	for _, tc := range []struct {
		name  string
		op    *Op
		is    error
		where string
	}{
		{"located", &Op{Obj: &locatedObj{fileObj{fd: ro, base: 8192}, path}, Write: true, Off: 4096, N: 4096, Key: "k1"},
			unix.EBADF, fmt.Sprintf(`write "k1" at offset 4096 (%s at offset 12288): bad file descriptor`, path)},
		{"descriptor", &Op{Obj: &fileObj{fd: ro, base: 8192}, Write: true, Off: 4096, N: 4096, Key: "k2"},
			unix.EBADF, fmt.Sprintf(`write "k2" at offset 4096 (fd %d at offset 12288): bad file descriptor`, ro)},
		{"eof", &Op{Obj: &locatedObj{fileObj{fd: rw, base: 8192}, path}, Off: 8192, N: 8192, Key: "k3"},
			io.ErrUnexpectedEOF, fmt.Sprintf(`read "k3" at offset 8192 (%s at offset 16384): unexpected EOF`, path)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.Submit(tc.op)
			op := <-done
			if op.Err == nil || !errors.Is(op.Err, tc.is) || !strings.HasSuffix(op.Err.Error(), tc.where) {
				t.Errorf("error %v; want %v, ending %q", op.Err, tc.is, tc.where)
			}
		})
	}
}
