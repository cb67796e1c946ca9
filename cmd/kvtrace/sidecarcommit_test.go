package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/trace"
)

// fileSizeLimit, set in a child's environment with asProcess, makes the
// test binary run kvtrace under that RLIMIT_FSIZE: a write past it fails
// with EFBIG (Go ignores SIGXFSZ), as on a disk that fills up.
const fileSizeLimit = "KVTRACE_TEST_FSIZE"

// TestSidecarFailureKeepsTrace: a sidecar whose write fails (a file
// size limit between the trace's size and the sidecar's, as a disk that
// fills up after the trace) fails the run with the earlier trace and its
// sidecar both as they were, and nothing else left behind. The trace was
// renamed into place before the sidecar was written: the new trace lay
// beside the earlier run's sidecar, which describes another trace.
func TestSidecarFailureKeepsTrace(t *testing.T) {
	if args := os.Getenv(asProcess); args != "" && os.Getenv(fileSizeLimit) != "" {
		n, err := strconv.ParseUint(os.Getenv(fileSizeLimit), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			t.Fatal(err)
		}
		os.Args = append([]string{"kvtrace"}, strings.Split(args, "\n")...)
		main() // exits
	}
	// One user for two seconds: a trace of a few hundred bytes.
	tiny := []string{"--num-users", "1", "--duration", "2", "--generation-mode", "none", "--gpu-mem-gb", "0"}
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv.zst")
	if _, stderr, code := runKvtrace(t, append([]string{"-o", tr, "--seed", "1"}, tiny...)...); code != 0 {
		t.Fatalf("kvtrace: exit %d, %q", code, stderr)
	}
	oldTrace, oldMeta := sum(t, tr), sum(t, trace.MetaPath(tr))
	fi, err := os.Stat(tr)
	if err != nil {
		t.Fatal(err)
	}
	mi, err := os.Stat(trace.MetaPath(tr))
	if err != nil {
		t.Fatal(err)
	}
	// The limit lets the trace (some hundred bytes) be written, not its sidecar
	// (about 4.5 kB, most of it the configuration).
	if mi.Size() < 2*fi.Size() {
		t.Fatalf("trace of %d bytes, sidecar of %d: no file size limit falls safely between them", fi.Size(), mi.Size())
	}
	limit := (fi.Size() + mi.Size()) / 2
	cmd := exec.Command(os.Args[0], "-test.run=^TestSidecarFailureKeepsTrace$")
	cmd.Env = append(os.Environ(), fileSizeLimit+"="+strconv.FormatInt(limit, 10),
		asProcess+"="+strings.Join(append([]string{"-o", tr, "--seed", "2"}, tiny...), "\n"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("kvtrace under a file size limit: %v, %q; want exit 1", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "meta.json") || !strings.Contains(stderr.String(), "file too large") {
		t.Errorf("stderr %q; want the sidecar's write failure", stderr.String())
	}
	if sum(t, tr) != oldTrace {
		t.Error("the trace was replaced; its sidecar is the earlier run's")
	}
	if sum(t, trace.MetaPath(tr)) != oldMeta {
		t.Error("the sidecar was replaced")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v; want the trace and its sidecar only", names)
	}
}
