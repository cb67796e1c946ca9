package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestSIGHUPWritesPartialResult: a real kvreplay whose terminal or ssh
// session goes away (SIGHUP) in the middle of a replay stops as for
// SIGINT: it writes its result marked incomplete, naming the signal, exits
// 1 and removes its run directory and its output's temporary (SIGHUP's
// default action killed it and left both). Started with SIGHUP ignored
// (nohup), it keeps ignoring it: a later SIGINT is what stops it.
func TestSIGHUPWritesPartialResult(t *testing.T) {
	t.Parallel()
	_, bin := buildTools(t)
	for _, tc := range []struct {
		name    string
		ignored bool   // started with SIGHUP ignored
		reason  string // the signal the result names
	}{{"hangup", false, "hangup"}, {"nohup", true, "interrupt"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// A write, then a read a minute later: the replay waits between.
			tr := writeTrace(t, dir, "t.csv",
				"0.000000,Write,8192,Tier-2,a,Prefill",
				"60.000000,Read,8192,Tier-2,a,Decode")
			nv, out := filepath.Join(dir, "nvme"), filepath.Join(dir, "r.json")
			if err := os.Mkdir(nv, 0o755); err != nil {
				t.Fatal(err)
			}
			args := []string{"--speed", "1", "--dir", nv, "-o", out, tr}
			cmd := exec.Command(bin, args...)
			if tc.ignored {
				cmd = exec.Command("/bin/sh", append([]string{"-c", `trap "" HUP; exec "$0" "$@"`, bin}, args...)...)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			waitFirstWrite(t, filepath.Join(nv, "kvreplay-*", "2_a"), exited, &stderr)
			signals := []syscall.Signal{syscall.SIGHUP}
			if tc.ignored {
				signals = append(signals, syscall.SIGINT)
			}
			for _, s := range signals {
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("kvreplay still runs 30 s after %v: %s", signals, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), tc.reason+" signal received") {
				t.Errorf("exit %v, want status 1 naming the %s signal; stderr:\n%s", err, tc.reason, stderr.String())
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("no result document: %v", err)
			}
			r := readResult(t, out)
			if r.Complete || !strings.Contains(r.IncompleteReason, tc.reason) || r.Summary.StorageHealth.OverallStatus == schema.HealthPass {
				t.Errorf("complete %v, reason %q, health %v; want incomplete, naming the %s signal, not PASS",
					r.Complete, r.IncompleteReason, r.Summary.StorageHealth.OverallStatus, tc.reason)
			}
			if ents, _ := os.ReadDir(nv); len(ents) != 0 {
				t.Errorf("left in --dir: %v", ents)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if n := e.Name(); n != "t.csv" && n != "r.json" && n != "nvme" {
					t.Errorf("%s left beside the result", n)
				}
			}
		})
	}
}
