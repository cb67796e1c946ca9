package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// Tests written from mutation testing: each pins a rule that a one-token
// change of the code broke without another test failing.

// TestCheckOutputThroughALink: an output that is a link to a device is
// judged by the device it reaches: one to /dev/urandom is refused as
// /dev/urandom is, one to /dev/null is written as /dev/null is.
func TestCheckOutputThroughALink(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		target string
		refuse bool
	}{
		{"/dev/urandom", true},
		{"/dev/null", false},
	} {
		link := filepath.Join(dir, filepath.Base(c.target))
		if err := os.Symlink(c.target, link); err != nil {
			t.Fatal(err)
		}
		err := cli.CheckOutput("-o", link, false)
		if (err != nil) != c.refuse {
			t.Errorf("-o %s (a link to %s): %v, want refused: %v", link, c.target, err, c.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "under the system directory /dev") {
			t.Errorf("-o %s: %v, want it to name /dev", link, err)
		}
	}
}

// TestCheckPathNamesTheFlag: the error names the flag as given ("-o"),
// and a bare name with "--".
func TestCheckPathNamesTheFlag(t *testing.T) {
	for flag, want := range map[string]string{"-o": "-o /etc/x: ", "dir": "--dir /etc/x: ", "--dir": "--dir /etc/x: "} {
		if err := cli.CheckPath(flag, "/etc/x"); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("CheckPath(%q, /etc/x) = %v, want it to begin %q", flag, err, want)
		}
	}
}

// TestFractionRefusesNaN: 0/0 and a NaN denominator are no scale (NaN
// would pass a range check and size every object NaN bytes).
func TestFractionRefusesNaN(t *testing.T) {
	for _, s := range []string{"0/0", "1/NaN", "0/-0"} {
		if v, err := cli.Fraction("--size-scale", s); err == nil {
			t.Errorf("Fraction(%q) = %v, want an error", s, v)
		}
	}
}

// TestSidecarNote: a regular trace file gets its sidecar (no note); a
// FIFO and stdout do not, and the note says so.
func TestSidecarNote(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := cli.Sidecar(filepath.Join(dir, "t.csv")); n != "" {
		t.Errorf("a new regular file: %q, want no note", n)
	}
	for _, p := range []string{fifo, "-"} {
		if n := cli.Sidecar(p); n == "" {
			t.Errorf("%s: no note, want one (no sidecar written)", p)
		}
	}
	if cli.SameFile("", "") {
		t.Error(`SameFile("", "") = true, want false: an empty path names no file`)
	}
}
