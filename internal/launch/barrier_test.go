package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStartBarrier: 4 ranks sharing a directory each mark themselves ready
// and wait; all pass when all are there, at one start instant.
func TestStartBarrier(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "barrier")
	starts := make([]time.Time, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := NewBarrier(dir, time.Minute)
			b.poll = time.Millisecond
			starts[r], errs[r] = b.Wait(t.Context(), Rank{Rank: r, Ranks: 4})
		}()
	}
	wg.Wait()
	for r := range 4 {
		if errs[r] != nil || !starts[r].Equal(starts[0]) || starts[r].IsZero() {
			t.Errorf("rank %d: start %v, %v; rank 0's %v", r, starts[r], errs[r], starts[0])
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d ready files, want 4", len(entries))
	}
	// The same directory again: the earlier run's files would let the
	// barrier pass at once.
	_, err := NewBarrier(dir, time.Minute).Wait(t.Context(), Rank{Rank: 1, Ranks: 4})
	if err == nil || !strings.Contains(err.Error(), "kvreplay-ready.1-of-4 exists, from an earlier run") {
		t.Errorf("a used barrier directory: %v", err)
	}
}

// TestStartBarrierTimeout: on a fake clock, a rank whose peers never come
// gives up after the timeout, naming the ranks missing, and withdraws: its
// ready file and the directories it made are gone (a rank arriving later
// must not count it ready), what it did not make stays. A rank of another
// --ranks is an error.
func TestStartBarrierTimeout(t *testing.T) {
	fake := func(b *Barrier) *time.Duration {
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		slept := new(time.Duration)
		b.now = func() time.Time { return now.Add(*slept) }
		b.sleep = func(_ context.Context, d time.Duration) error { *slept += d; return nil }
		return slept
	}
	top := t.TempDir()
	dir := filepath.Join(top, "run", "barrier") // made by Wait, parent and all
	b := NewBarrier(dir, 10*time.Minute)
	slept := fake(b)
	_, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 3})
	if err == nil || !strings.Contains(err.Error(), "1 of 3 ranks ready after 10m0s (missing: 1, 2)") {
		t.Errorf("timeout: %v", err)
	}
	if *slept < 10*time.Minute || *slept > 10*time.Minute+startBarrierPoll {
		t.Errorf("waited %v on the fake clock, want the 10 min timeout", *slept)
	}
	if entries, err := os.ReadDir(top); err != nil || len(entries) != 0 {
		t.Errorf("after the timeout %s holds %v (%v), want nothing: the rank withdraws what it made", top, entries, err)
	}

	// A directory that was there, with another rank's ready file: only
	// the rank's own file goes.
	dir = t.TempDir()
	other := filepath.Join(dir, readyName(2, 3, ""))
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b = NewBarrier(dir, time.Minute)
	fake(b)
	if _, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 3}); err == nil || !strings.Contains(err.Error(), "2 of 3 ranks ready after 1m0s (missing: 1)") {
		t.Errorf("timeout with rank 2 there: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != readyName(2, 3, "") {
		t.Errorf("after the timeout %s holds %v, want rank 2's file alone", dir, entries)
	}

	// Cancelled while waiting: the cause, and the rank withdraws too.
	b = NewBarrier(dir, time.Minute)
	fake(b)
	stop := errors.New("terminated")
	b.sleep = func(context.Context, time.Duration) error { return stop }
	if _, err := b.Wait(t.Context(), Rank{Rank: 1, Ranks: 3}); err != stop {
		t.Errorf("cancelled: %v, want %v", err, stop)
	}
	if _, err := os.Stat(filepath.Join(dir, readyName(1, 3, ""))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a cancelled rank's ready file: %v, want it removed", err)
	}

	b = NewBarrier(dir, time.Minute)
	fake(b)
	if _, err := b.Wait(t.Context(), Rank{Rank: 1, Ranks: 2}); err == nil || !strings.Contains(err.Error(), "a rank of a run of 3 ranks, this one has 2") {
		t.Errorf("another --ranks: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after refusing another --ranks %s holds %v, want rank 2's file alone", dir, entries)
	}
}

// TestJoinInts lists at most a few ranks, then how many more.
func TestJoinInts(t *testing.T) {
	tests := []struct {
		v    []int
		most int
		want string
	}{
		{nil, 8, ""},
		{[]int{3}, 8, "3"},
		{[]int{1, 2}, 8, "1, 2"},
		{[]int{0, 1, 2, 3, 4}, 3, "0, 1, 2 and 2 more"},
	}
	for _, tt := range tests {
		if got := joinInts(tt.v, tt.most); got != tt.want {
			t.Errorf("joinInts(%v, %d) = %q, want %q", tt.v, tt.most, got, tt.want)
		}
	}
}

// TestStartBarrierStaleReady: another rank's ready file older than the
// timeout (and a minute) before this rank's is an earlier run's, whose
// rank no longer waits: the rank refuses it and withdraws, where it had
// taken a two-hour-old file for a peer and started alone. One a little
// older than the timeout's minute of slack is a peer still waiting.
func TestStartBarrierStaleReady(t *testing.T) {
	for _, tt := range []struct {
		name  string
		age   time.Duration
		stale bool
	}{
		{"two hours", 2 * time.Hour, true},
		{"just past the timeout and its slack", 10*time.Minute + staleSlack + 5*time.Second, true},
		{"within the timeout", 9 * time.Minute, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			peer := filepath.Join(dir, readyName(1, 2, ""))
			if err := os.WriteFile(peer, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-tt.age)
			if err := os.Chtimes(peer, old, old); err != nil {
				t.Fatal(err)
			}
			b := NewBarrier(dir, 10*time.Minute)
			b.poll = time.Millisecond
			_, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2})
			if stale := err != nil && strings.Contains(err.Error(), "kvreplay-ready.1-of-2 was made at") && strings.Contains(err.Error(), "an earlier run's"); stale != tt.stale || (!tt.stale && err != nil) {
				t.Errorf("a peer's ready file %v old: %v; want stale %v", tt.age, err, tt.stale)
			}
			if _, err := os.Stat(filepath.Join(dir, readyName(0, 2, ""))); tt.stale != errors.Is(err, fs.ErrNotExist) {
				t.Errorf("this rank's ready file after the wait: %v (stale %v: a rank that gives up withdraws it)", err, tt.stale)
			}
		})
	}
}

// TestScanFileWithdrawn: a ready file withdrawn between the directory's
// listing and its stat (its rank gave up at that moment) counts its rank
// missing; it is not an error that ends the wait.
func TestScanFileWithdrawn(t *testing.T) {
	dir := t.TempDir()
	for r := range 2 {
		if err := os.WriteFile(filepath.Join(dir, readyName(r, 3, "")), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBarrier(dir, time.Minute)
	b.readDir = func(d string) ([]os.DirEntry, error) {
		entries, err := os.ReadDir(d)
		if err == nil {
			err = os.Remove(filepath.Join(d, readyName(1, 3, "")))
		}
		return entries, err
	}
	_, missing, err := b.scan(3, "", time.Now().Add(-time.Hour))
	if err != nil || len(missing) != 2 || missing[0] != 1 || missing[1] != 2 {
		t.Errorf("scan with rank 1's file withdrawn after the listing: missing %v, %v; want [1 2], no error", missing, err)
	}
}
