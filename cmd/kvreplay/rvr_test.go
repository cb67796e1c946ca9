package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/setup"
	"github.com/kvbench/kvbench/schema"
)

// TestSearchOfAPipe: a search of a trace on a pipe (here a named pipe,
// as stdin is) is refused before any probe, exit 2, no document: each
// probe replays the traces from their start, which a pipe gives once.
// Before, a capacity search's first probe read the pipe and measured, its
// second read what was left ("not a measurement: bad header"), and the
// search ended incomplete with exit 1, as if a probe had failed.
func TestSearchOfAPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir)
	src, err := os.ReadFile(nvmeTrace(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	// A writer that never blocks and holds the pipe open: the search must
	// not need it.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(src); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"capacity", "users"} {
		out := filepath.Join(dir, kind+".json")
		done := make(chan struct{})
		var code int
		var stderr string
		go func() {
			defer close(done)
			code, _, stderr = kvreplay("--search", kind, "--duration", "1s", "--search-probes", "3", "--dir", dir, "-q", "-o", out, fifo)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("--search %s of a named pipe still runs", kind)
		}
		if code != 2 || !strings.Contains(stderr, "--search "+kind+": trace "+fifo+" is a pipe: each probe replays the traces from their start") {
			t.Errorf("--search %s of a named pipe: exit %d, stderr %q; want 2, naming the pipe", kind, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--search %s of a named pipe wrote %s", kind, out)
		}
	}
}

// TestSearchKeepRefused: --keep with --search is refused before any probe
// (exit 2), and --dir is left as it was: each probe replays on fresh
// tiers, so each kept its objects, the probes after it ran beside them on
// a fuller disk, and each was warned of the one before as of a killed
// run ("left by an earlier run (killed, or run with --keep)").
func TestSearchKeepRefused(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, t.TempDir())
	for _, kind := range []string{"capacity", "users"} {
		code, _, stderr := kvreplay("--search", kind, "--keep", "--duration", "1s", "--search-probes", "3", "--dir", dir, "-q", "-o", "-", tr)
		if code != 2 || !strings.Contains(stderr, "--keep with --search "+kind+": each probe would leave its objects in --dir") {
			t.Errorf("--search %s --keep: exit %d, stderr %q; want 2, naming --keep", kind, code, stderr)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("--dir holds %d entries after the refused searches", len(ents))
	}
}

// TestSearchUnderRanksRefused: a search under several ranks is refused
// (exit 2): nothing coordinates the ranks' probes, so each rank searched
// its own shard at its own speeds and times, beside the others' unrelated
// loads, and wrote its own answer (exit 0). The error says where the
// ranks came from and that --rank 0 --ranks 1 searches on one host
// (replay/setup's TestSearchUnderRanksSaysWhence: a launcher's).
func TestSearchUnderRanksRefused(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, t.TempDir())
	out := filepath.Join(dir, "o.{rank}.json")
	code, _, stderr := kvreplay("--search", "capacity", "--rank", "0", "--ranks", "2", "--duration", "1s", "--search-probes", "3", "--mkdir", "--dir", filepath.Join(dir, "r{rank}"), "-q", "-o", out, tr)
	if code != 2 || !strings.Contains(stderr, "--search capacity under 2 ranks: each rank would choose its own probes") ||
		!strings.Contains(stderr, "(the 2 ranks: --ranks 2): to search on one host, give --rank 0 --ranks 1") {
		t.Errorf("--search capacity under 2 ranks: exit %d, stderr %q; want 2", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("--dir holds %d entries after the refused search", len(ents))
	}
}

// TestSearchNotWrittenSaysSo: a search whose stdout is a terminal and
// that has no -o writes its document nowhere, and says so on stderr, as a
// replay does ("result: not written"); it said nothing, and minutes of
// probes left only their progress lines.
func TestSearchNotWrittenSaysSo(t *testing.T) {
	once := func(cfg *replay.Config, _ func(replay.Progress)) (*schema.Result, error) {
		res := &schema.Result{Complete: true, WallS: 30}
		res.Summary.StorageHealth.OverallStatus = "PASS"
		res.Requests.ByQoS = []schema.QoSStats{{QoS: "batch", Count: 100, TargetP95MS: 1000, Compliance: 1, WithinTarget: 100, Met: true}}
		return res, nil
	}
	for _, toStdout := range []bool{false, true} {
		var stdout, stderr bytes.Buffer
		prog := &setup.SearchProgress{W: &stderr, Now: time.Now, Max: 3}
		o := &options{cfg: replay.DefaultConfig(), search: setup.SearchOptions{Kind: "users", Probes: 3, Repeats: 1}}
		if err := searchWith(o, &replay.Plan{Scanned: true, Users: []replay.User{{ID: 1, QoS: schema.QoSBatch}}}, 1, once, prog, nil, toStdout, &stdout); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(stderr.String(), "kvreplay: search: document not written (the lines above are all there is; give -o FILE to keep it)")
		if said == toStdout || (stdout.Len() > 0) != toStdout {
			t.Errorf("to stdout %v: %d bytes on stdout, stderr:\n%s", toStdout, stdout.Len(), stderr.String())
		}
	}
}
