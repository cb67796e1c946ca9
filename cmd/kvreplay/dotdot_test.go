package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestOutputDotDotNotTheTrace: -o DIR/nodir/../t.csv, nodir missing, is
// no path the kernel can create; kvreplay took it for a new file, wrote
// its result to DIR/t.csv (the trace) and exited 0.
func TestOutputDotDotNotTheTrace(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	before, _ := os.ReadFile(tr)
	sep := string(filepath.Separator)
	out := dir + sep + "nodir" + sep + ".." + sep + "t.csv"
	code, _, stderr := kvreplay("--speed", "max", "--dir", dir, "-o", out, tr)
	if code != 2 {
		t.Errorf("-o %s: exit %d, %q; want 2", out, code, stderr)
	}
	if b, _ := os.ReadFile(tr); !bytes.Equal(b, before) {
		t.Errorf("the trace was replaced: it begins %q", b[:min(len(b), 40)])
	}
}

// TestDeviceDotDotNotTheTrace: --device DIR/nodir/../t.csv, nodir
// missing, names no file the kernel can open: CheckDevice took it for a
// new file (its stat fails), and the extent backend, cleaning it to
// DIR/t.csv, opened the trace and wrote its objects into it, without
// --device-overwrite.
func TestDeviceDotDotNotTheTrace(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	before, _ := os.ReadFile(tr)
	sep := string(filepath.Separator)
	dev := dir + sep + "nodir" + sep + ".." + sep + "t.csv"
	code, _, stderr := kvreplay("--speed", "max", "--dir", dir, "--layout", "extent", "--device", dev, tr)
	if code == 0 {
		t.Errorf("--device %s: exit 0, %q; want a refusal", dev, stderr)
	}
	if b, _ := os.ReadFile(tr); !bytes.Equal(b, before) {
		t.Errorf("the trace was overwritten: %d bytes, it begins %q", len(b), b[:min(len(b), 20)])
	}
}
