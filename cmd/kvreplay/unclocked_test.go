package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestFailedBeforeClockWritesResult runs a real kvreplay whose writes of
// a decode-only trace's cold objects, before its clock starts, fail (a
// file size limit, ulimit -f, makes the NVMe tier's allocation of the
// second 8 MiB object fail with EFBIG, as a full disk fails it): it
// writes its result document where the result goes (-o's file, or
// stdout), marked incomplete, the reason naming the phase, nothing
// measured, storage_health FAIL; it removes what it created and exits 1.
// Before, it exited 1 with no document: a launcher or a results pipeline
// found a missing file, not a failed run.
func TestFailedBeforeClockWritesResult(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for ulimit -f")
	}
	for _, where := range []string{"-o", "stdout"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			tr := writeTrace(t, dir, "cold.csv",
				"0.000000,Read,8388608,Tier-2,a,Decode",
				"0.001000,Read,8388608,Tier-2,b,Decode")
			nv, out := filepath.Join(dir, "nvme"), filepath.Join(dir, "r.json")
			args := []string{"--speed", "max", "--mkdir", "--dir", nv, tr}
			if where == "-o" {
				args = append(args, "-o", out)
			}
			// 4096 blocks of 512 bytes (dash) or 1 KiB (bash): 2 or 4 MiB,
			// less than an object, more than the document.
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 4096 && exec "$0" "$@"`, kvreplay}, args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "before the clock: writing the trace's cold objects: ") {
				t.Fatalf("exit %v, want status 1 naming the phase; stderr:\n%s", err, stderr.String())
			}
			doc := stdout.Bytes()
			if where == "-o" {
				if doc, err = os.ReadFile(out); err != nil {
					t.Fatalf("no result document: %v; stderr:\n%s", err, stderr.String())
				}
			}
			var r schema.Result
			if err := json.Unmarshal(doc, &r); err != nil {
				t.Fatalf("the result document: %v\n%s", err, doc)
			}
			if r.Complete || !strings.HasPrefix(r.IncompleteReason, "replay: before the clock: writing the trace's cold objects: preparing cold object ") ||
				!strings.Contains(r.IncompleteReason, "file too large") {
				t.Errorf("complete %v, reason %q", r.Complete, r.IncompleteReason)
			}
			if r.Tool != "kvreplay" || len(r.CommandLine) == 0 || len(r.Traces) != 1 || r.Config == nil {
				t.Errorf("tool %q, command line %q, %d traces, config %v: want the run's identity", r.Tool, r.CommandLine, len(r.Traces), r.Config != nil)
			}
			if r.WallS != 0 || len(r.Cells) != 0 || r.Requests.Count != 0 || r.Replay.RowsDone != 0 || r.Errors.Count == 0 {
				t.Errorf("wall %g s, %d cells, %d requests, %d rows done, %d errors: want nothing measured, the failures counted",
					r.WallS, len(r.Cells), r.Requests.Count, r.Replay.RowsDone, r.Errors.Count)
			}
			if h := r.Summary.StorageHealth.OverallStatus; h != results.HealthFail {
				t.Errorf("storage_health %s, want FAIL", h)
			}
			if entries, err := os.ReadDir(nv); err == nil && len(entries) != 0 {
				t.Errorf("left in --dir: %v", entries)
			}
		})
	}
}
