package launch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tests written from mutation testing: each pins a rule that a one-token
// change of the code broke without another test failing.

// TestBarrierStartsAfterTheLastReady: the ranks start startBarrierGrace
// after the latest ready file, whichever rank's it is (not the first one
// listed), and a ready file of a rank beyond the run's is ignored.
func TestBarrierStartsAfterTheLastReady(t *testing.T) {
	dir := t.TempDir()
	for r, age := range []time.Duration{20 * time.Second, 10 * time.Second} {
		p := filepath.Join(dir, readyName(r, 3, ""))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// "Rank 3 of 3" is no rank of this run: ignored, not counted.
	if err := os.WriteFile(filepath.Join(dir, readyName(3, 3, "")), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b := NewBarrier(dir, time.Minute)
	b.poll = time.Millisecond
	at, err := b.Wait(t.Context(), Rank{Rank: 2, Ranks: 3})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, readyName(2, 3, "")))
	if err != nil {
		t.Fatal(err)
	}
	if want := info.ModTime().Add(startBarrierGrace); !at.Equal(want) {
		t.Errorf("start instant %v, want %v: a grace second after the last ready file (this rank's)", at, want)
	}
}

// TestBarrierKeepsAnEarlierRunsFile: a rank that finds its own ready file
// there refuses, and leaves that file (an earlier run's) where it is.
func TestBarrierKeepsAnEarlierRunsFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, readyName(1, 2, ""))
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewBarrier(dir, time.Minute).Wait(t.Context(), Rank{Rank: 1, Ranks: 2}); err == nil {
		t.Fatal("no error for an earlier run's ready file of this rank")
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the earlier run's ready file after the refusal: %v; want it left", err)
	}
}

// TestBarrierStaleSlack: a peer's ready file older than the timeout but
// within the minute of slack (hosts' clocks differ) is a peer, not stale.
func TestBarrierStaleSlack(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, readyName(1, 2, ""))
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10*time.Minute - 30*time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	b := NewBarrier(dir, 10*time.Minute)
	b.poll = time.Millisecond
	if _, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2}); err != nil {
		t.Errorf("a peer's file 30 s past the timeout, within the slack: %v", err)
	}
}

// TestStartAtEdges: the bounds of --start-at hold to the second for RFC
// 3339 instants (Unix seconds are checked before the conversion too), and
// a start between 5 and 6 seconds late warns.
func TestStartAtEdges(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 500_000_000, time.UTC)
	rfc := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	for _, c := range []struct {
		in       string
		wantErr  string
		wantWarn bool
	}{
		{rfc(startAtFuture + 500*time.Millisecond), "after now", false},
		{rfc(-startAtPast - 500*time.Millisecond), "before now", false},
		{rfc(-startAtLate - 500*time.Millisecond), "", true},
		{rfc(-startAtLate + 500*time.Millisecond), "", false},
	} {
		_, warn, err := ParseStartAt(c.in, now)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want an error with %q", c.in, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", c.in, err)
		case (warn != "") != c.wantWarn:
			t.Errorf("%s: warning %q, want one: %v", c.in, warn, c.wantWarn)
		}
	}
	s, err := ParseStart(rfc(10*time.Second), "", time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	if w := s.lateAt(s.At.Add(lateBound + 500*time.Millisecond)); w == "" {
		t.Error("a start 1.5 s after the instant: no late warning")
	}
}

// TestBarrierDirThroughALink: a --start-barrier that is a link into a
// system directory is refused as the directory itself is.
func TestBarrierDirThroughALink(t *testing.T) {
	link := filepath.Join(t.TempDir(), "b")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseStart("", filepath.Join(link, "kvbench-barrier"), time.Minute, time.Now()); err == nil || !strings.Contains(err.Error(), "system directory /etc") {
		t.Errorf("a barrier through a link to /etc: %v, want refused", err)
	}
}

// TestRanksMPIAndPods: --rank that an MPI launcher's rank contradicts is
// refused even when --ranks agrees; mpirun's rank in a pod wins over the
// pod's index with --ranks too; two ranks may not share an output path.
func TestRanksMPIAndPods(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := Find(0, 4, env(map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"})); err == nil {
		t.Error("--rank 0 --ranks 4 as rank 2 of mpirun's 4: no error (every process would be rank 0)")
	}
	r, err := Find(-1, 8, env(map[string]string{"JOB_COMPLETION_INDEX": "0", "OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8"}))
	if err == nil && r.Source == k8sIndex {
		t.Errorf("mpirun's rank 5 in a pod of index 0, --ranks 8: %+v, took the pod's index", r)
	}
	if _, err := Template("-o", "out.json", Rank{Rank: 1, Ranks: 2}); err == nil {
		t.Error("-o out.json under 2 ranks: no error (both ranks would write it)")
	}
}
