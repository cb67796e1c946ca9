package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestRunDir makes run directories in an existing directory and in a
// missing one, and checks that Remove takes away what they made and nothing
// else, and that Keep leaves a leftover later runs see.
func TestRunDir(t *testing.T) {
	for _, tt := range []struct {
		name   string
		parent string // under the test's directory
	}{
		{"existing", "."},
		{"missing", "a/b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			mine := filepath.Join(top, "2_key")
			if err := os.WriteFile(mine, []byte("user data"), 0o644); err != nil {
				t.Fatal(err)
			}
			parent := filepath.Join(top, tt.parent)
			d, err := cli.MakeRunDir(context.Background(), "--dir", parent, "kvreplay")
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Dir(d.Path()) != filepath.Clean(parent) || !strings.HasPrefix(filepath.Base(d.Path()), "kvreplay-") {
				t.Errorf("run directory %s, want kvreplay-PID-RANDOM in %s", d.Path(), parent)
			}
			if fi, err := os.Stat(d.Path()); err != nil || !fi.IsDir() {
				t.Fatalf("run directory: %v", err)
			}
			// A second run beside it sees no leftover: the first holds its
			// directory.
			d2, err := cli.MakeRunDir(context.Background(), "--dir", parent, "kvreplay")
			if err != nil {
				t.Fatal(err)
			}
			if d2.Path() == d.Path() {
				t.Fatal("two runs share a directory")
			}
			if l := cli.LeftoverRunDirs(parent, "kvreplay"); len(l) != 0 {
				t.Errorf("leftovers %v while both runs hold theirs", l)
			}
			if err := d2.Remove(); err != nil {
				t.Fatal(err)
			}
			d.Keep()
			if l := cli.LeftoverRunDirs(parent, "kvreplay"); !slices.Equal(l, []string{d.Path()}) {
				t.Errorf("leftovers %v, want the kept %s", l, d.Path())
			}
			if err := os.Remove(d.Path()); err != nil {
				t.Fatal(err)
			}
			d3, err := cli.MakeRunDir(context.Background(), "--dir", parent, "kvreplay")
			if err != nil {
				t.Fatal(err)
			}
			if err := d3.Remove(); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(mine); err != nil || string(b) != "user data" {
				t.Errorf("the user's file: %q, %v", b, err)
			}
			entries, _ := os.ReadDir(top)
			if tt.parent != "." {
				// d made them and kept its directory in them: they stay
				os.RemoveAll(filepath.Join(top, "a"))
				entries, _ = os.ReadDir(top)
			}
			if len(entries) != 1 {
				t.Errorf("left in %s: %v, want only the user's file", top, entries)
			}
		})
	}
}

// TestRunDirRemoveMade checks that Remove takes away the parents
// MakeRunDir made, and that a parent that is a file is a usage error.
func TestRunDirRemoveMade(t *testing.T) {
	top := t.TempDir()
	d, err := cli.MakeRunDir(context.Background(), "--dir", filepath.Join(top, "a", "b"), "kvreplay")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(top); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	file := filepath.Join(top, "f")
	os.WriteFile(file, nil, 0o644)
	for _, p := range []string{file, filepath.Join(file, "sub")} {
		_, err := cli.MakeRunDir(context.Background(), "--dir", p, "kvreplay")
		if cli.ExitCode(err) != cli.ExitUsage || !strings.Contains(err.Error(), "--dir "+p) || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("--dir %s: %v (exit %d), want a usage error naming it", p, err, cli.ExitCode(err))
		}
	}
}

// TestLeftoverRunDirs reports only directories named as run directories.
func TestLeftoverRunDirs(t *testing.T) {
	top := t.TempDir()
	for _, n := range []string{"kvreplay-12-abc", "kvreplay-x-abc", "kvreplay-12", "other-12-abc", ".new-kvreplay-99"} {
		os.Mkdir(filepath.Join(top, n), 0o755)
	}
	os.WriteFile(filepath.Join(top, "kvreplay-13-file"), nil, 0o644)
	if l := cli.LeftoverRunDirs(top, "kvreplay"); !slices.Equal(l, []string{filepath.Join(top, "kvreplay-12-abc")}) {
		t.Errorf("leftovers %v", l)
	}
}

func TestDeepestExisting(t *testing.T) {
	top := t.TempDir()
	for _, tt := range []struct{ in, want string }{
		{top, top},
		{filepath.Join(top, "a", "b"), top},
		{"/", "/"},
	} {
		if got := cli.DeepestExisting(tt.in); got != tt.want {
			t.Errorf("DeepestExisting(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
