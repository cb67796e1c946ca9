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

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// readUnclocked reads the result document at path (stdout's bytes when
// path is ""), and checks it is a run stopped before its clock: marked
// incomplete, its reason starting with reason and holding cause, nothing
// measured, storage_health INCOMPLETE (no operation failed: not PASS, nor
// NO_DATA), the run's identity and its trace named.
func readUnclocked(t *testing.T, path string, stdout []byte, reason, cause string) *schema.Result {
	t.Helper()
	doc := stdout
	if path != "" {
		var err error
		if doc, err = os.ReadFile(path); err != nil {
			t.Fatalf("no result document: %v", err)
		}
	}
	var r schema.Result
	if err := json.Unmarshal(doc, &r); err != nil {
		t.Fatalf("the result document: %v\n%s", err, doc)
	}
	if r.Complete || !strings.HasPrefix(r.IncompleteReason, reason) || !strings.Contains(r.IncompleteReason, cause) {
		t.Errorf("complete %v, reason %q; want incomplete, %q ... %q", r.Complete, r.IncompleteReason, reason, cause)
	}
	if r.Tool != "kvreplay" || len(r.CommandLine) == 0 || len(r.Traces) != 1 || r.Config == nil || r.Host.Hostname == "" {
		t.Errorf("tool %q, command line %q, %d traces, config %v, host %q: want the run's identity", r.Tool, r.CommandLine, len(r.Traces), r.Config != nil, r.Host.Hostname)
	}
	if r.WallS != 0 || len(r.Cells) != 0 || len(r.Tiers) != 0 || len(r.Timeline) != 0 || r.Requests.Count != 0 || r.Replay.RowsDone != 0 {
		t.Errorf("wall %g s, %d cells, %d tiers, %d seconds, %d requests, %d rows done: want nothing measured",
			r.WallS, len(r.Cells), len(r.Tiers), len(r.Timeline), r.Requests.Count, r.Replay.RowsDone)
	}
	if h := r.Summary.StorageHealth.OverallStatus; h != results.HealthIncomplete {
		t.Errorf("storage_health %s, want INCOMPLETE", h)
	}
	return &r
}

// TestFailedWaitWritesResult: a rank whose wait at --start-barrier fails
// (the other rank never comes, and the timeout passes) writes its result
// document, marked incomplete with the wait named, and exits 1. Before,
// it exited 1 with no document: the launcher found no file for the rank.
func TestFailedWaitWritesResult(t *testing.T) {
	dir := t.TempDir()
	tr := writeTrace(t, dir, "t.csv",
		"0.000000,Write,65536,Tier-1,a,Prefill",
		"0.001000,Read,65536,Tier-1,a,Decode")
	var out, errb bytes.Buffer
	code := cli.Main("kvreplay", []string{"--rank", "0", "--ranks", "2", "--start-barrier", filepath.Join(dir, "barrier"),
		"--start-barrier-timeout", "0.2s", "--speed", "max", "-q", "-o", filepath.Join(dir, "r.{rank}.json"), tr}, &out, &errb, run)
	if code != 1 || !strings.Contains(errb.String(), "run incomplete: replay: before the clock: waiting to start: --start-barrier ") {
		t.Fatalf("exit %d, stderr %q; want 1, naming the wait", code, errb.String())
	}
	r := readUnclocked(t, filepath.Join(dir, "r.0.json"), nil, "replay: before the clock: waiting to start: --start-barrier ", "")
	if r.Rank != 0 || r.Ranks != 2 || len(r.Host.TierPaths) != 1 {
		t.Errorf("rank %d of %d, %d tier paths: want rank 0 of 2, the RAM tier it made", r.Rank, r.Ranks, len(r.Host.TierPaths))
	}
}

// TestFailedPreallocationWritesResult runs a real kvreplay --layout extent
// whose preallocation of the extent file, while it makes the tiers, fails
// (a file size limit, ulimit -f, makes fallocate fail with EFBIG, as a
// full disk makes it fail with ENOSPC): it writes its result document
// where the result goes, marked incomplete with the phase named, nothing
// measured, removes what it made and exits 1. Before, it exited 1 with
// no document.
func TestFailedPreallocationWritesResult(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for ulimit -f")
	}
	for _, where := range []string{"-o", "stdout"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			tr := writeTrace(t, dir, "t.csv",
				"0.000000,Write,8388608,Tier-2,a,Prefill",
				"0.001000,Read,8388608,Tier-2,a,Decode")
			nv, out := filepath.Join(dir, "nvme"), filepath.Join(dir, "r.json")
			args := []string{"--speed", "max", "--layout", "extent", "--mkdir", "--dir", nv, tr}
			if where == "-o" {
				args = append(args, "-o", out)
			} else {
				out = ""
			}
			// 4096 blocks of 512 bytes (dash) or 1 KiB (bash): 2 or 4 MiB,
			// less than the extent file (75 MiB), more than the document.
			cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 4096 && exec "$0" "$@"`, kvreplay}, args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "before the clock: making the tiers: extent: preallocate ") {
				t.Fatalf("exit %v, want status 1 naming the phase; stderr:\n%s", err, stderr.String())
			}
			r := readUnclocked(t, out, stdout.Bytes(), "replay: before the clock: making the tiers: extent: preallocate ", "file too large")
			if r.Replay.ColdPrepared != 0 || len(r.Host.TierPaths) != 0 {
				t.Errorf("%d cold objects, tier paths %v: want none, no tier was made", r.Replay.ColdPrepared, r.Host.TierPaths)
			}
			if entries, err := os.ReadDir(nv); err == nil && len(entries) != 0 {
				t.Errorf("left in --dir: %v", entries)
			}
		})
	}
}
