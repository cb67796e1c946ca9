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

// wallClock is the time package's clock, read through its monotonic
// clock alone: Now is base plus the time since base, whose monotonic
// reading is the one time.Now would return, made with one read of the
// system's clock where time.Now makes two (the wall clock's and the
// monotonic one's). A run reads the clock about four times an operation:
// on the null backend time.Now was 19 % of the engine's CPU profile, one
// read is 12 %. What the run measures (durations, order) comes from
// monotonic readings alone, so it is time.Now's to the nanosecond; a
// reading's wall time is base's plus the time since, which parts from
// time.Now's only when the wall clock is set or slewed after base. Run
// makes one as its clock starts, so that Result.Started is the wall
// clock's. Outside a testing/synctest bubble base has a monotonic
// reading; inside it none, and Now is the bubble's time, as time.Now is.
type wallClock struct{ base time.Time }

func newWallClock() *wallClock { return &wallClock{base: time.Now()} }

func (c *wallClock) Now() time.Time { return c.base.Add(time.Since(c.base)) }

func (*wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// since is the time passed on c since t.
func since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }
