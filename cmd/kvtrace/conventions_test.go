package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
