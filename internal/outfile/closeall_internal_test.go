package outfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// closeAllSetup makes three outputs in a fresh directory: a.txt and
// b.txt replace files holding "old", c.txt is new. Each is written
// "new". It returns the directory and the Files.
func closeAllSetup(t *testing.T) (string, []*File) {
	t.Helper()
	dir := t.TempDir()
	var files []*File
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		path := filepath.Join(dir, name)
		if name != "c.txt" {
			if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f, err := Create(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Abort() })
		if _, err := f.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

// dirState lists the directory as name=content, sorted; a file that is
// not regular is name=?.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			s = append(s, e.Name()+"=?")
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			s = append(s, e.Name()+"=?")
			continue
		}
		s = append(s, e.Name()+"="+string(b))
	}
	return strings.Join(s, " ")
}

// CloseAll puts every output in place when all of them can be.
func TestCloseAll(t *testing.T) {
	dir, files := closeAllSetup(t)
	if err := CloseAll(files...); err != nil {
		t.Fatal(err)
	}
	if got, want := dirState(t, dir), "a.txt=new b.txt=new c.txt=new"; got != want {
		t.Fatalf("directory %q, want %q", got, want)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			t.Fatalf("Close after CloseAll: %v", err)
		}
	}
}

// An output that cannot be completed (here the flush of the second one
// fails) leaves every final path as it was, the first one too, and no
// temporary file behind: one export is every output or none.
func TestCloseAllNoneOnFailure(t *testing.T) {
	for _, tt := range []struct {
		name   string
		break_ func(t *testing.T, dir string, f *File)
	}{
		{"flush fails", func(t *testing.T, dir string, f *File) {
			// A closed temporary file fails its Sync.
			if err := f.tmp.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"write failed", func(t *testing.T, dir string, f *File) {
			f.err = f.pathErr("write", syscall.ENOSPC)
		}},
		{"device appeared", func(t *testing.T, dir string, f *File) {
			// c.txt did not exist at Create; a FIFO is never renamed over.
			if err := syscall.Mkfifo(f.target.Path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, files := closeAllSetup(t)
			victim := files[1]
			if tt.name == "device appeared" {
				victim = files[2]
			}
			tt.break_(t, dir, victim)
			err := CloseAll(files...)
			if err == nil {
				t.Fatal("CloseAll succeeded")
			}
			want := "a.txt=old b.txt=old"
			if tt.name == "device appeared" {
				want += " c.txt=?"
			}
			if got := dirState(t, dir); got != want {
				t.Fatalf("directory %q after %v, want %q", got, err, want)
			}
			for _, f := range files {
				if f.Close() == nil {
					t.Fatalf("%s: Close after a failed CloseAll succeeded", f.path)
				}
			}
		})
	}
}

// A rename that fails after others succeeded says which outputs are
// already in place.
func TestCloseAllNamesWhatIsInPlace(t *testing.T) {
	dir, files := closeAllSetup(t)
	// Renaming onto a path whose directory is gone fails; the check before
	// the renames sees nothing there, so the first rename goes through.
	files[1].target.Path = filepath.Join(dir, "gone", "b.txt")
	err := CloseAll(files...)
	if err == nil || !strings.Contains(err.Error(), "already in place: "+files[0].path) {
		t.Fatalf("CloseAll = %v, want it to name %s as in place", err, files[0].path)
	}
	if got, want := dirState(t, dir), "a.txt=new b.txt=old"; got != want {
		t.Fatalf("directory %q, want %q", got, want)
	}
	if !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("CloseAll = %v, want ENOENT", err)
	}
}
