package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequestTraceSaid runs kvtrace on an untimed request trace (ShareGPT
// as --request-trace, no --request-rate) and on an empty one: the default
// rate is said on stderr and in the sidecar's notes, and the empty file is
// an error naming it, exit 2.
func TestRequestTraceSaid(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sg.csv")
	sg := filepath.Join("..", "..", "sim", "reqtrace", "testdata", "sharegpt_sample50.json")
	_, stderr, code := runKvtrace(t, "--request-trace", sg, "--duration", "10", "--generation-mode", "none", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	const said = "its requests arrive at 20 requests/s, the default for an untimed trace (--request-rate sets it)"
	if !strings.Contains(stderr, "kvtrace: warning: "+sg+" is ShareGPT") || !strings.Contains(stderr, said) {
		t.Errorf("stderr %q: want the default rate said", stderr)
	}
	meta, err := os.ReadFile(out + ".meta.json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta), said) {
		t.Errorf("sidecar without the default rate:\n%s", meta)
	}

	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runKvtrace(t, "--dataset-path", empty, "--duration", "10", "-o", filepath.Join(dir, "e.csv"))
	if code != 2 || !strings.Contains(stderr, "--dataset-path "+empty+": no requests in it") {
		t.Errorf("an empty ShareGPT file: exit %d, %q; want 2 and the file named", code, stderr)
	}
}
