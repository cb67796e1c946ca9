package launch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBarrierClockSkew: the ready files are stamped by the file system's
// clock (a shared file system's server), the start is waited for on this
// host's: a file system whose clock is an hour off the host's moves the
// start instant by that hour, into the host's clock, where the ranks had
// waited an hour (server ahead) or started at once, not in step (server
// behind). A peer ready 3 s after this rank, by the file system's clock,
// starts them 3 s and the grace after this rank was ready, by the host's.
func TestBarrierClockSkew(t *testing.T) {
	for _, off := range []time.Duration{-time.Hour, time.Hour} {
		dir := t.TempDir()
		host := time.Now().Add(off).Truncate(time.Second) // this host's clock, off the file system's
		b := NewBarrier(dir, time.Minute)
		b.now = func() time.Time { return host }
		b.readDir = func(d string) ([]os.DirEntry, error) {
			// The peer is made once this rank's file is there, 3 s
			// after it by the file system's clock.
			mine, err := os.Stat(filepath.Join(d, readyName(0, 2, "")))
			if err != nil {
				return nil, err
			}
			peer := filepath.Join(d, readyName(1, 2, ""))
			if err := os.WriteFile(peer, nil, 0o644); err != nil {
				return nil, err
			}
			at := mine.ModTime().Add(3 * time.Second)
			if err := os.Chtimes(peer, at, at); err != nil {
				return nil, err
			}
			return os.ReadDir(d)
		}
		at, err := b.Wait(t.Context(), Rank{Rank: 0, Ranks: 2})
		if err != nil {
			t.Fatal(err)
		}
		if want := host.Add(3*time.Second + startBarrierGrace); !at.Equal(want) {
			t.Errorf("host clock %v off the file system's: start %v, want %v (the host's clock when this rank was ready, the peer's 3 s later and the grace)",
				off, at, want)
		}
	}
}

// TestClockSkewWithinGrace: a skew the grace absorbs is none (a file
// system of whole seconds stamps a file up to a second early).
func TestClockSkewWithinGrace(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		mtime time.Time
		want  time.Duration
	}{
		{t0.Add(-900 * time.Millisecond), 0},
		{t0.Add(time.Second), 0},
		{t0.Add(-2 * time.Second), -2 * time.Second},
		{t0.Add(time.Hour), time.Hour},
	} {
		if got := clockSkew(tt.mtime, t0.Add(-time.Millisecond), t0.Add(time.Millisecond)); got != tt.want {
			t.Errorf("clockSkew(%v after the host's reading) = %v, want %v", tt.mtime.Sub(t0), got, tt.want)
		}
	}
}
