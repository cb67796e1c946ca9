package outfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A failed write makes Close discard the temporary file, leave the final
// path alone and report the error with the final path.
func TestAtomicFileWriteError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	a, err := Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	// Make writes fail: replace the temporary file by a read-only handle.
	name := a.tmp.Name()
	if err := a.tmp.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	a.tmp = ro
	_, werr := a.Write([]byte("data"))
	if werr == nil {
		t.Fatal("Write to a read-only file succeeded")
	}
	var pe *fs.PathError
	if !errors.As(werr, &pe) || pe.Path != path || strings.Contains(werr.Error(), ".tmp") {
		t.Fatalf("write error %q does not name the final path", werr)
	}
	if _, err := a.Write([]byte("more")); !errors.Is(err, werr) {
		t.Fatalf("second Write: %v, want the first error again", err)
	}
	if err := a.Close(); !errors.Is(err, werr) {
		t.Fatalf("Close: %v, want the write error", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Close after a write error left %v", ents)
	}
}

// A failed rename (the final path became a directory) removes the
// temporary file.
func TestAtomicFileRenameError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	a, err := Create(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err == nil || !strings.HasPrefix(err.Error(), "rename "+path+": ") {
		t.Fatalf("Close = %v, want a rename error naming %s", err, path)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}
