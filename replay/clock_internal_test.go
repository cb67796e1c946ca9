package replay

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestWallClock: the wall clock's readings are the monotonic clock's, in
// order with time.Now's around them, and carry a monotonic reading, so
// that durations between them are monotonic; its wall time is time.Now's
// at its start.
func TestWallClock(t *testing.T) {
	before := time.Now()
	c := newWallClock()
	prev := c.Now()
	if d := prev.Sub(before); d < 0 || d > time.Second {
		t.Fatalf("first reading %v after time.Now, want within a second", d)
	}
	if w := prev.Round(0).Sub(before.Round(0)); w < -time.Second || w > time.Second {
		t.Fatalf("wall time %v from time.Now's, want within a second", w)
	}
	for range 1000 {
		a := time.Now()
		n := c.Now()
		b := time.Now()
		if n.Before(a) || b.Before(n) || n.Before(prev) {
			t.Fatalf("reading %v not between time.Now's %v and %v, or before the last %v", n, a, b, prev)
		}
		if !strings.Contains(n.String(), " m=") {
			t.Fatalf("reading %v has no monotonic clock reading", n)
		}
		prev = n
	}
}

// TestWallClockSynctest: inside a testing/synctest bubble the wall clock
// is the bubble's time, as time.Now is.
func TestWallClockSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newWallClock()
		for _, d := range []time.Duration{0, time.Millisecond, time.Hour} {
			time.Sleep(d)
			if n, want := c.Now(), time.Now(); !n.Equal(want) {
				t.Fatalf("after %v: Now %v, want the bubble's %v", d, n, want)
			}
		}
	})
}
