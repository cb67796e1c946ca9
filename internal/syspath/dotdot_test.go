package syspath_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/syspath"
)

// TestResolveDotDot: ".." is read as the kernel reads it, after the links
// before it, and after a missing directory it names nothing.
func TestResolveDotDot(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "other", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("other", "dir"), filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/../x", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ p, want string }{
		{dir + "/sub/../a.json", filepath.Join(dir, "other", "a.json")},
		{dir + "/sub/../dir/../../a.json", filepath.Join(dir, "a.json")},
		{dir + "/./sub/b", filepath.Join(dir, "other", "dir", "b")},
		{dir + "/dangling", filepath.Join(dir, "other", "x")},
		{dir + "/nodir/x", filepath.Join(dir, "nodir", "x")},
	} {
		if got, err := syspath.Resolve(c.p); err != nil || got != c.want {
			t.Errorf("Resolve(%s) = %q, %v; want %s", c.p, got, err, c.want)
		}
	}
	for _, p := range []string{dir + "/nodir/../a.json", dir + "/nodir/./a.json", dir + "/nodir/.."} {
		if got, err := syspath.Resolve(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Resolve(%s) = %q, %v; want not exist", p, got, err)
		}
	}
}
