package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeClock puts b on a clock that starts at the host's now and moves only
// when b sleeps; it returns how long b slept.
func fakeClock(b *Barrier) *time.Duration {
	now := time.Now()
	slept := new(time.Duration)
	b.now = func() time.Time { return now.Add(*slept) }
	b.sleep = func(_ context.Context, d time.Duration) error { *slept += d; return nil }
	return slept
}

// TestBarrierTimeoutAsThePeerPasses: rank 1 reaches its timeout with rank
// 0 missing from its last listing, and rank 0 arrives just then, finds
// rank 1's file and passes. Rank 1 removed its file and failed, and rank 0
// started alone; now rank 1 finds rank 0's file as it leaves, takes its
// own back, and starts with rank 0, at the same instant.
func TestBarrierTimeoutAsThePeerPasses(t *testing.T) {
	dir := t.TempDir()
	late := NewBarrier(dir, time.Minute)
	slept := fakeClock(late)
	var peerAt time.Time
	var peerErr error
	arrived := false
	late.readDir = func(d string) ([]os.DirEntry, error) {
		entries, err := os.ReadDir(d)
		if !arrived && *slept >= time.Minute {
			// Rank 1's last listing is taken: rank 0 comes, and goes.
			arrived = true
			peerAt, peerErr = NewBarrier(dir, time.Minute).Wait(t.Context(), Rank{Rank: 0, Ranks: 2})
		}
		return entries, err
	}
	at, err := late.Wait(t.Context(), Rank{Rank: 1, Ranks: 2})
	if !arrived || peerErr != nil {
		t.Fatalf("rank 0: arrived %v, %v", arrived, peerErr)
	}
	if err != nil || !at.Equal(peerAt) {
		t.Errorf("rank 0 passed counting rank 1, to start at %v; rank 1: %v, %v; want it to start with rank 0", peerAt, at, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, leftPrefix+"*")); len(left) != 0 {
		t.Errorf("left files after the start: %v", left)
	}
}

// TestBarrierRejoinBounded: a rank that finds every other rank's file as it
// leaves waits on, but not for ever: rank 0, killed as it left, left its
// file under its left name, so that rank 1 found it there each time; rank
// 1 gives up for good rejoinWait after its timeout, and removes its file.
func TestBarrierRejoinBounded(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, leftPrefix+fileSuffix(0, 2, ""))
	if err := os.WriteFile(dead, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b := NewBarrier(dir, time.Minute)
	slept := fakeClock(b)
	_, err := b.Wait(t.Context(), Rank{Rank: 1, Ranks: 2})
	if err == nil || !strings.Contains(err.Error(), "1 of 2 ranks ready after 1m0s (missing: 0)") {
		t.Errorf("a rank whose peer died as it left: %v", err)
	}
	if *slept < time.Minute+rejoinWait || *slept > time.Minute+rejoinWait+startBarrierPoll {
		t.Errorf("waited %v on the fake clock, want the timeout and rejoinWait", *slept)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(dead) {
		t.Errorf("after giving up %s holds %v, want rank 0's left file alone", dir, entries)
	}
}

// TestBarrierEarlierRunsFiles: ranks with a run id (their launcher's job,
// or KVBENCH_RUN_ID) refuse another run's ready file, however young: a run
// killed two minutes ago left rank 1's, and the next run's rank 0 took it
// for its peer's and started alone. A file of the same run id is a peer's,
// and an id that is no file name is hashed alike in every rank.
func TestBarrierEarlierRunsFiles(t *testing.T) {
	const odd = "prterun-host-12345@1"
	for _, tt := range []struct {
		name, file, run string
		wantErr         string
	}{
		{"an earlier run of no id", readyName(1, 2, ""), "77.3", "kvreplay-ready.1-of-2 is of no run id, and this rank of run 77.3: an earlier run's"},
		{"an earlier run", readyName(1, 2, "77.2"), "77.3", "kvreplay-ready.1-of-2.77.2 is of run 77.2, and this rank of run 77.3: an earlier run's"},
		{"an earlier run, this one of no id", readyName(1, 2, "77.2"), "", "is of run 77.2, and this rank of no run id"},
		{"this run", readyName(1, 2, "77.3"), "77.3", ""},
		{"this run, an id hashed", readyName(1, 2, odd), odd, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tt.file)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			then := time.Now().Add(-2 * time.Minute)
			if err := os.Chtimes(p, then, then); err != nil {
				t.Fatal(err)
			}
			b := NewBarrier(dir, 10*time.Minute)
			fakeClock(b)
			_, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2, Run: tt.run})
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("a peer's file %s: %v", tt.file, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s two minutes old: %v; want %q", tt.file, err, tt.wantErr)
			}
			if _, err := os.Stat(filepath.Join(dir, readyName(0, 2, tt.run))); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("this rank's ready file after the refusal: %v, want it withdrawn", err)
			}
		})
	}
	if tag := runTag(odd); strings.ContainsAny(tag, "@/") || len(tag) != 16 {
		t.Errorf("runTag(%q) = %q: want a hash", odd, tag)
	}
}
