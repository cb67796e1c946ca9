package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// copyDoc copies the document at from into dir.
func copyDoc(t *testing.T, from, dir string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(from))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOutputNeverAnInput: -o that is one of the documents read (or a link
// to one) is refused with exit 2, the document unchanged; so is a system
// path, unless --allow-system-path.
func TestOutputNeverAnInput(t *testing.T) {
	dir := t.TempDir()
	a, b := copyDoc(t, docA, dir), copyDoc(t, docB, dir)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(a)
	for _, args := range [][]string{
		{a, "-o", a},
		{a, b, "-o", link},
		{filepath.Join(dir, "*.json"), "-o", b},
		{"merge", a, b, "-o", a},
		{"--format", "html", a, "-o", a},
	} {
		code, _, stderr := kvreport(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
			t.Errorf("kvreport %s: exit %d, %q; want 2 and a refusal", strings.Join(args, " "), code, stderr)
		}
	}
	if after, _ := os.ReadFile(a); !bytes.Equal(after, before) {
		t.Error("a document changed")
	}
	out := "/etc/kvbench-test-" + filepath.Base(dir) + ".json"
	if code, _, stderr := kvreport(t, "", a, "-o", out); code != 2 || !strings.Contains(stderr, "system directory /etc") {
		t.Errorf("-o %s: exit %d, %q; want 2", out, code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		os.Remove(out)
		t.Error("written under /etc")
	}
}

// TestOutputSpecialFiles: /dev/null and a FIFO are written in place.
func TestOutputSpecialFiles(t *testing.T) {
	if code, _, stderr := kvreport(t, "", docA, "-o", "/dev/null"); code != 0 {
		t.Fatalf("-o /dev/null: exit %d, %q", code, stderr)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v", fi.Mode())
	}
	fifo, got := clitest.FIFO(t)
	if code, _, stderr := kvreport(t, "", docA, "--format", "md", "-o", fifo); code != 0 {
		t.Fatalf("-o FIFO: exit %d, %q", code, stderr)
	}
	if s := string(<-got); !strings.Contains(s, "|") {
		t.Fatalf("the FIFO's reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v", fi.Mode())
	}
}
