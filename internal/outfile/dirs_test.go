package outfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/outfile"
)

// TestMakeDirs: MakeDirs makes the missing directories and returns them
// deepest first; RemoveDirs takes back exactly those, stopping at one that
// holds a file; a file on the way is refused by name; an existing
// directory makes nothing.
func TestMakeDirs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "c")
	made, err := outfile.MakeDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{dir, filepath.Join(root, "a", "b"), filepath.Join(root, "a")}
	if !slices.Equal(made, want) {
		t.Fatalf("made %v, want %v", made, want)
	}
	if again, err := outfile.MakeDirs(dir); err != nil || len(again) != 0 {
		t.Fatalf("again: made %v, %v; want nothing", again, err)
	}
	// A file left in a/b: RemoveDirs removes c, then stops at b.
	if err := os.WriteFile(filepath.Join(root, "a", "b", "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	outfile.RemoveDirs(made)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s not removed: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "b", "keep")); err != nil {
		t.Errorf("the file it did not make: %v", err)
	}
	// A file where a directory should be.
	file := filepath.Join(root, "a", "b", "keep")
	_, err = outfile.MakeDirs(file)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != file || !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("a file: %v, want ENOTDIR naming %s", err, file)
	}
	if _, err = outfile.MakeDirs(filepath.Join(file, "x")); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("under a file: %v, want ENOTDIR", err)
	}
}
