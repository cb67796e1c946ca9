package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli/clitest"
)

// TestOutputDash: --output - writes the statistics JSON on stdout when the
// trace goes to a file; export, which writes a directory, refuses -o -.
func TestOutputDash(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.csv")
	stdout, stderr, code := runKvtrace(t, "--num-users", "2", "--duration", "5", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "-o", tr, "--output", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var stats map[string]any
	if err := json.Unmarshal([]byte(stdout), &stats); err != nil || stats["requests_completed"] == nil {
		t.Errorf("stdout is not the statistics JSON: %v\n%.200s", err, stdout)
	}
	if _, err := os.Stat(tr); err != nil {
		t.Errorf("no trace: %v", err)
	}
	_, stderr, code = runKvtrace(t, "export", "--to", "fio", "--dir", dir, "-o", "-", tr)
	if code != 2 || !strings.Contains(stderr, "--output -") {
		t.Errorf("export -o -: exit %d, stderr %q", code, stderr)
	}
}

// TestProgressLineOwner: kvtrace rewrites a progress line only on a
// terminal, and not when its trace goes down a pipe to a tool (kvreplay)
// that shows its own progress there.
func TestProgressLineOwner(t *testing.T) {
	tty := clitest.Terminal(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "run.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tt := range []struct {
		name           string
		stdout, stderr io.Writer
		trace          string
		want           bool
	}{
		{"trace in a file", tty, tty, "run.csv", true},
		{"trace on stdout to a file", file, tty, "-", true},
		{"trace down a pipe", w, tty, "-", false},
		{"stderr not a terminal", file, file, "run.csv", false},
		{"stderr a buffer", w, new(strings.Builder), "-", false},
	} {
		if got := ownsProgressLine(tt.stdout, tt.stderr, tt.trace); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
