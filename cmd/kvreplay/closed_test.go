package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// usersFile writes a trace of users users, each issuing requests requests
// 100 ms apart (a write and a read of its own 1 MiB object on Tier-2).
func usersFile(t *testing.T, users, requests int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users.csv")
	w, err := trace.Create(path, trace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	recs := replaytest.UserRecords(users, requests, 100*time.Millisecond, 1<<20, schema.TierNVMe, schema.QoSBatch)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClosedLoopCommand runs the closed loop and both searches as a user
// types them, and kvreport renders the searches; a kv-cache.py trace is
// refused with exit 2.
func TestClosedLoopCommand(t *testing.T) {
	t.Parallel()
	tr := usersFile(t, 6, 200)
	dir := t.TempDir()
	res, _ := replayDoc(t, "--closed-loop", "--duration", "1s", "--mkdir", "--dir", dir, "-q", "-o", "-", tr)
	if cl := res.ClosedLoop; cl == nil || cl.Users != 6 || cl.RequestsCompleted == 0 || cl.RequestsLeft <= 0 || !res.Complete {
		t.Fatalf("closed_loop %+v, complete %v", res.ClosedLoop, res.Complete)
	}
	if res.Summary.StorageThroughputTokensPerSec <= 0 {
		t.Errorf("no storage throughput in tokens/s: %+v", res.Summary.NotMeasured)
	}

	for _, kind := range []string{"users", "capacity"} {
		out := filepath.Join(t.TempDir(), kind+".json")
		var stdout, stderr bytes.Buffer
		args := []string{"--search", kind, "--duration", "500ms", "--search-probes", "4", "--mkdir", "--dir", dir, "-o", out, tr}
		if code := cli.Main("kvreplay", args, &stdout, &stderr, run); code != 0 {
			t.Fatalf("kvreplay %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var d schema.SearchResult
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		// A capacity search whose first doubling brings nothing stops at
		// 2 probes, saturated from the first. A users search that no
		// count passes (its disk's p95 over storage_health's limit, as
		// on a machine loaded by a -race run of every package) stops at
		// 2 probes, the last of 1 user, and says so.
		noneServed := kind == "users" && d.Users == 0 && len(d.Probes) == 2 && d.Probes[1].Users == 1 &&
			strings.Contains(d.Reason, "no number of users passed")
		if d.Format != schema.SearchFormat || d.Kind != kind || len(d.Probes) < 2 ||
			(len(d.Probes) < 3 && !d.SaturatedFromFirstProbe && !noneServed) ||
			!strings.Contains(stderr.String(), "probe 1 of at most 4") {
			t.Fatalf("%s search: format %q kind %q, %d probes; stderr %s", kind, d.Format, d.Kind, len(d.Probes), stderr.String())
		}
		if kind == "users" && (d.TotalUsers != 6 || (d.Users < 1 && !noneServed)) {
			t.Errorf("users search: %d of %d users: %s", d.Users, d.TotalUsers, d.Reason)
		}
		for _, p := range d.Probes {
			if kind == "users" && (p.Users < 1 || p.Users > 6 || p.Requests == 0) {
				t.Errorf("users probe %+v", p)
			}
			if kind == "capacity" && (p.Speed <= 0 || p.OfferedBps <= 0) {
				t.Errorf("capacity probe %+v", p)
			}
		}
	}

	ref := referenceTraces(t)[0]
	var stdout, stderr bytes.Buffer
	code := cli.Main("kvreplay", []string{"--closed-loop", "--tier-map", "Tier-0=ram", "--size-scale", "1/4096", "-o", "-", ref}, &stdout, &stderr, run)
	if code != 2 || !strings.Contains(stderr.String(), "no User column") {
		t.Errorf("a kv-cache.py trace closed-loop: exit %d: %s", code, stderr.String())
	}
	// A users search of it is refused in the search's words: the closed
	// loop's message told a user who never gave --closed-loop to replay
	// it open-loop; the search that such a trace takes is capacity's.
	for _, plan := range [][]string{nil, {"--fit"}} {
		stdout.Reset()
		stderr.Reset()
		args := append(plan, "--search", "users", "--tier-map", "Tier-0=ram", "--size-scale", "1/4096", "-o", "-", ref)
		code = cli.Main("kvreplay", args, &stdout, &stderr, run)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, "--search users: "+ref+" has no User column, so it has no users to search over") ||
			!strings.Contains(msg, "--search capacity") || strings.Contains(msg, "--closed-loop") || strings.Contains(msg, "replay it open-loop") {
			t.Errorf("%q of a kv-cache.py trace: exit %d: %s", args, code, msg)
		}
	}
}
