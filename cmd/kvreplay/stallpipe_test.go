package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestSIGTERMStalledPipe: a real kvreplay replaying a trace piped on its
// stdin by a producer that stalls (a converter still working, an ssh
// stream that hangs) and that no signal reaches (a supervisor or a
// launcher signals kvreplay alone) stops on one SIGTERM: it writes its
// result marked incomplete, removes its run directory and its output's
// temporary file, and exits 1, while the producer still holds the pipe
// open. It waited in its read of the pipe, and then in the drain of it,
// for as long as the producer wrote nothing, so that only a second signal,
// which killed it, ended it.
func TestSIGTERMStalledPipe(t *testing.T) {
	t.Parallel()
	_, bin := buildTools(t)
	dir := t.TempDir()
	nv, out := filepath.Join(dir, "nvme"), filepath.Join(dir, "r.json")
	if err := os.Mkdir(nv, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--speed", "1", "--no-prescan", "--dir", nv, "-o", out, "-")
	producer, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// A batch of rows and a few more (the reader hands rows on in
	// batches), and then nothing: the producer stalls, its end open.
	rows := []byte(traceHeader)
	for i := range 300 {
		rows = fmt.Appendf(rows, "0.000000,Write,4096,Tier-2,k%d,Prefill\n", i)
	}
	if _, err := producer.Write(rows); err != nil {
		t.Fatal(err)
	}
	waitFirstWrite(t, filepath.Join(nv, "kvreplay-*", "2_k0"), exited, &stderr)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A bound short of drainLimit, which the drain of the pipe waited.
	select {
	case err = <-exited:
	case <-time.After(drainLimit - 2*time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("kvreplay still runs %v after SIGTERM, its trace's producer stalled: %s", drainLimit-2*time.Second, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "terminated signal received") {
		t.Errorf("exit %v, want status 1 naming the signal; stderr:\n%s", err, stderr.String())
	}
	r := readResult(t, out)
	if r.Complete || !strings.Contains(r.IncompleteReason, "terminated") || r.Summary.StorageHealth.OverallStatus == schema.HealthPass {
		t.Errorf("complete %v, reason %q, health %v; want incomplete, naming the signal, not PASS",
			r.Complete, r.IncompleteReason, r.Summary.StorageHealth.OverallStatus)
	}
	// The read the signal stopped is no error of the trace's.
	if r.Errors.Count != 0 || strings.Contains(strings.Join(r.Warnings, "\n"), "standard input") {
		t.Errorf("errors %+v, warnings %q: want none of the stopped read", r.Errors, r.Warnings)
	}
	if ents, _ := os.ReadDir(nv); len(ents) != 0 {
		t.Errorf("left in --dir: %v", ents)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("in the directory: %v, want nvme and r.json", ents)
	}
}
