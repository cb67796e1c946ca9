package syspath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheck(t *testing.T) {
	refused := errors.New("refused")
	for _, c := range []struct{ path, want string }{
		{"/etc", "/etc is a system directory: refused"},
		{"/", "/ is a system directory: refused"},
		{"/usr/local/x", "/usr/local/x is under the system directory /usr: refused"},
		{"/dev/nvme0n1", "/dev/nvme0n1 is under the system directory /dev: refused"},
		{"/dev/shm/kv", ""},
		{"/etcetera", ""},
		{"/mnt/nvme", ""},
	} {
		err := Check(c.path, refused)
		if c.want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", c.path, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want || !errors.Is(err, refused) {
			t.Errorf("Check(%q) = %v, want %q wrapping the caller's error", c.path, err, c.want)
		}
	}
}

// TestResolve: links in the existing part of a path are resolved, and a
// dangling link (a write through it creates what it names) is followed to
// what it names, relative or absolute, through a chain of them; a loop of
// links is an error.
func TestResolve(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"to-etc":   "/etc/kvbench-no-such-file.json",
		"to-sub":   "sub",
		"relative": "sub/new.json",
		"chain":    "relative",
		"up":       "../" + filepath.Base(dir) + "/sub/up.json",
		"loop-a":   "loop-b",
		"loop-b":   "loop-a",
		"etc-dir":  "/etc",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../to-etc", filepath.Join(sub, "deeper")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir + "/to-etc", "/etc/kvbench-no-such-file.json"},
		{dir + "/to-sub/x/y", sub + "/x/y"},
		{dir + "/relative", sub + "/new.json"},
		{dir + "/chain", sub + "/new.json"},
		{dir + "/up", sub + "/up.json"},
		{sub + "/deeper", "/etc/kvbench-no-such-file.json"},
		{dir + "/etc-dir/kvbench-no-such-dir/x", "/etc/kvbench-no-such-dir/x"},
		{dir + "/missing/x", dir + "/missing/x"},
	} {
		got, err := Resolve(c.path)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	if got, err := Resolve(dir + "/loop-a"); err == nil {
		t.Errorf("Resolve(a loop of links) = %q; want an error", got)
	}
}
