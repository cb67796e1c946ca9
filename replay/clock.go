package replay

import "time"

// Clock is the time a run reads and waits on: when rows are due, when a
// user's think time ends, when --duration closes the window, and every
// operation's start and end. Hooks.Clock injects one; nil is the wall
// clock. The engine never reads time any other way, so a run on a clock
// that only moves when its test says (or on testing/synctest's virtual
// time, which moves only when every goroutine of the run waits) paces,
// thinks and times out exactly as scheduled, whatever the machine's load.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f on its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's pending call.
type Timer interface {
	// Stop cancels the call; false when it ran or was stopped already.
	Stop() bool
	// Reset makes the call due d from now, whether or not it ran.
	Reset(d time.Duration) bool
}

// wallClock is the time package's clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// since is the time passed on c since t.
func since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }
