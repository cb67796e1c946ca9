package replay

import (
	"testing"
	"time"
)

// TestPaceRowsBeforeTheFirst: a row whose trace time is before the first
// row's is due at the run's start, not before it (its lag was its
// earliness: 2 s of lag for a trace whose first row was logged 2 s
// late); rows after the first keep their trace times over Speed.
func TestPaceRowsBeforeTheFirst(t *testing.T) {
	start := time.Unix(1000, 0)
	p := &pace{start: start, speed: func(d time.Duration) time.Duration { return d / 2 }}
	p.see(2 * time.Second) // the first row read
	for _, c := range []struct {
		t    time.Duration
		want time.Time
	}{
		{2 * time.Second, start},
		{0, start},
		{1999 * time.Millisecond, start},
		{3 * time.Second, start.Add(500 * time.Millisecond)},
		{12 * time.Second, start.Add(5 * time.Second)},
	} {
		p.see(c.t)
		if got := p.at(c.t); !got.Equal(c.want) {
			t.Errorf("row at trace time %v: due %v after the start, want %v", c.t, got.Sub(start), c.want.Sub(start))
		}
	}
}
