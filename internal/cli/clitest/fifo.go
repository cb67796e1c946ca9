package clitest

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO makes a named pipe in a temporary directory of t and starts its
// reader: the channel gets everything written into it, once the writer
// closes it (nil when it could not be opened). A tool given the path as
// an output must write there in place, never rename over it.
func FIFO(t testing.TB) (path string, got <-chan []byte) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	ch := make(chan []byte, 1)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			ch <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		ch <- b
	}()
	return path, ch
}
