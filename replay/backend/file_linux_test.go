package backend

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFdatasync(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("kv")); err != nil {
		t.Fatal(err)
	}
	if err := Fdatasync(f.Fd()); err != nil {
		t.Errorf("Fdatasync of a written file: %v", err)
	}
	f.Close()
	// Past any descriptor limit: never open.
	if err := Fdatasync(1 << 30); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Fdatasync of a descriptor that is not open: %v, want EBADF", err)
	}
}
