package main

import (
	"bytes"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/cli/clitest"
	"github.com/kvbench/kvbench/trace"
)

// small is a simulation that takes a moment.
var small = []string{"--num-users", "2", "--duration", "5", "--generation-mode", "none", "--gpu-mem-gb", "0"}

func sum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestOutputsNeverInputs: an output that is an input, or another output,
// or under a system directory, is refused with exit 2 before any work,
// every input as it was.
func TestOutputsNeverInputs(t *testing.T) {
	dir := t.TempDir()
	req := filepath.Join(dir, "req.jsonl")
	if err := os.WriteFile(req, []byte(`{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	share := filepath.Join(dir, "share.json")
	if err := os.WriteFile(share, []byte(`[]`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(req, link); err != nil {
		t.Fatal(err)
	}
	x := filepath.Join(dir, "x.csv")
	// A link at the sidecar's path into /etc, to a file that does not
	// exist: the sidecar was written through it.
	sideEtc := filepath.Join(dir, "side.csv")
	if err := os.Symlink("/etc/kvbench-test-sidecar.json", sideEtc+trace.MetaSuffix); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--request-trace", req, "-o", req}, "is --request-trace " + req},
		{[]string{"--request-trace", req, "-o", link}, "is --request-trace " + req},
		{[]string{"--request-trace", req, "--output", req, "-o", x}, "--output " + req + ": is --request-trace"},
		{[]string{"--request-trace", req, "-o", strings.TrimSuffix(req, trace.MetaSuffix) + ".x", "--output", req}, "is --request-trace"},
		{[]string{"--dataset-path", share, "--output", share, "-o", x}, "is --dataset-path " + share},
		{append([]string{"-o", x, "--output", x}, small...), "two outputs cannot share a file"},
		{append([]string{"-o", x, "--output", x + ".meta.json"}, small...), "the sidecar of --io-trace-log " + x + ": is also --output"},
		{append([]string{"-o", "/etc/kvbench-test.csv"}, small...), "system directory /etc"},
		{append([]string{"-o", x, "--output", "/usr/kvbench-test.json"}, small...), "system directory /usr"},
		{[]string{"--request-trace", req, "-o", x, "--latency-dump", req}, "--latency-dump " + req + ": is --request-trace " + req},
		{[]string{"--request-trace", req, "-o", x, "--latency-dump", link}, "--latency-dump " + link + ": is --request-trace " + req},
		{append([]string{"-o", x, "--latency-dump", x}, small...), "two outputs cannot share a file"},
		{append([]string{"-o", x, "--output", filepath.Join(dir, "s.json"), "--latency-dump", filepath.Join(dir, "s.json")}, small...), "two outputs cannot share a file"},
		{append([]string{"-o", x, "--latency-dump", "/etc/kvbench-test.jsonl"}, small...), "--latency-dump /etc/kvbench-test.jsonl: refusing a path under the system directory /etc"},
		{append([]string{"-o", sideEtc}, small...), "the sidecar of --io-trace-log " + sideEtc + ": --io-trace-log " + sideEtc + ".meta.json: refusing a path under the system directory /etc"},
	}
	before := sum(t, req)
	for _, tt := range tests {
		_, stderr, code := runKvtrace(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("kvtrace %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
	if sum(t, req) != before {
		t.Error("the request trace changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("refused runs left files: %v", ents)
	}
	for _, p := range []string{"/etc/kvbench-test.csv", "/usr/kvbench-test.json", "/etc/kvbench-test.jsonl", "/etc/kvbench-test-sidecar.json"} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s written", p)
		}
	}
}

// TestOutputSpecialFiles: a device or FIFO given as -o is written in place
// and stays what it was, with no sidecar beside it, and the run says so.
func TestOutputSpecialFiles(t *testing.T) {
	_, stderr, code := runKvtrace(t, append([]string{"-o", "/dev/null"}, small...)...)
	if code != 0 || !strings.Contains(stderr, "no sidecar written") {
		t.Fatalf("-o /dev/null: exit %d, %q", code, stderr)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is now %v", fi.Mode())
	}
	if _, err := os.Stat("/dev/null" + trace.MetaSuffix); err == nil {
		t.Fatal("a sidecar was written beside /dev/null")
	}

	dir := t.TempDir()
	fifo, got := clitest.FIFO(t)
	want := filepath.Join(dir, "want.csv")
	if _, stderr, code := runKvtrace(t, append([]string{"-o", fifo}, small...)...); code != 0 {
		t.Fatalf("-o FIFO: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runKvtrace(t, append([]string{"-o", want}, small...)...); code != 0 {
		t.Fatalf("-o file: exit %d, %q", code, stderr)
	}
	wantB, _ := os.ReadFile(want)
	if b := <-got; !bytes.Equal(b, wantB) || len(b) == 0 {
		t.Fatalf("the FIFO's reader got %d bytes, want the %d of the trace", len(b), len(wantB))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO is now %v", fi.Mode())
	}
	if _, err := os.Stat(fifo + trace.MetaSuffix); err == nil {
		t.Fatal("a sidecar was written beside the FIFO")
	}
}

// TestSidecarNotClobbered: a user's file at TRACE.meta.json is not
// replaced unless --force; an earlier run's sidecar is.
func TestSidecarNotClobbered(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	side := tr + trace.MetaSuffix
	if err := os.WriteFile(side, []byte(`{"mine": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKvtrace(t, append([]string{"-o", tr}, small...)...)
	if code != 2 || !strings.Contains(stderr, "not a trace's sidecar") || !strings.Contains(stderr, "--force") {
		t.Fatalf("exit %d, %q; want 2 and the refusal", code, stderr)
	}
	if b, _ := os.ReadFile(side); string(b) != `{"mine": true}` {
		t.Fatal("the user's file changed")
	}
	if _, err := os.Stat(tr); err == nil {
		t.Fatal("a refused run wrote its trace")
	}
	for _, args := range [][]string{{"--force"}, nil} { // then its own sidecar is replaced
		if _, stderr, code := runKvtrace(t, append(append([]string{"-o", tr}, args...), small...)...); code != 0 {
			t.Fatalf("%v: exit %d, %q", args, code, stderr)
		}
		if m, err := trace.ReadMeta(tr); err != nil || m.Tool != "kvtrace" {
			t.Fatalf("%v: sidecar %v, %v", args, m, err)
		}
	}
}

// TestTraceToDevNullPipe: kvtrace -o - with stdout on /dev/null (not a
// terminal) writes the trace.
func TestTraceToDevNullPipe(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var errb bytes.Buffer
	if code := cli.Main("kvtrace", append([]string{"-o", "-"}, small...), null, &errb, run); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// TestExportOutputs: export refuses an --output under a system directory,
// and a file it would write that is the trace (a hard link to it in
// --output), the trace unchanged.
func TestExportOutputs(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	if _, stderr, code := runKvtrace(t, append([]string{"-o", tr}, small...)...); code != 0 {
		t.Fatalf("kvtrace: exit %d, %q", code, stderr)
	}
	_, stderr, code := runKvtrace(t, "export", "--to", "sai3", "-o", "/etc/kvbench-test-export", tr)
	if code != 2 || !strings.Contains(stderr, "system directory /etc") {
		t.Fatalf("export -o /etc/...: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat("/etc/kvbench-test-export"); err == nil {
		os.RemoveAll("/etc/kvbench-test-export")
		t.Fatal("export made a directory under /etc")
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(tr, filepath.Join(out, "t.tsv")); err != nil {
		t.Fatal(err)
	}
	before := sum(t, tr)
	_, stderr, code = runKvtrace(t, "export", "--to", "sai3", "-o", out, tr)
	if code != 2 || !strings.Contains(stderr, "refusing to overwrite an input") {
		t.Fatalf("export over the trace: exit %d, %q", code, stderr)
	}
	if sum(t, tr) != before {
		t.Fatal("the trace changed")
	}
}
