package launch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/internal/syspath"
)

// Bounds of --start-at, against the clock when the flags are parsed: an
// instant further in the future is a typo (or milliseconds given as
// seconds), not a start that ranks wait a day for; one further in the past
// is a stale command line. Within startAtPast, a start more than
// startAtLate ago is a rank launched late: the replay starts at once, with
// a warning in the result and on stderr.
const (
	startAtFuture = 24 * time.Hour
	startAtPast   = time.Hour
	startAtLate   = 5 * time.Second
)

// ParseStartAt parses --start-at, RFC 3339 or Unix seconds, and checks it
// against now: an instant more than 24 hours after now, or more than an
// hour before it, is an error; one more than 5 seconds before it comes
// with a warning (a rank launched late starts at once).
func ParseStartAt(s string, now time.Time) (at time.Time, warning string, err error) {
	if at, err = time.Parse(time.RFC3339Nano, s); err != nil {
		f, perr := strconv.ParseFloat(s, 64)
		if perr != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return time.Time{}, "", fmt.Errorf("--start-at %s: want RFC 3339 (2026-11-24T20:00:00Z) or Unix seconds", parsemsg.Arg(s))
		}
		// Checked as seconds before the conversion, which would overflow.
		nowS := float64(now.UnixNano()) / 1e9
		switch {
		case f > nowS+startAtFuture.Seconds():
			return time.Time{}, "", startAtErr(s, "after", startAtFuture, now)
		case f < nowS-startAtPast.Seconds():
			return time.Time{}, "", startAtErr(s, "before", startAtPast, now)
		}
		sec, frac := math.Modf(f)
		at = time.Unix(int64(sec), int64(frac*1e9))
	}
	switch d := at.Sub(now); {
	case d > startAtFuture:
		return time.Time{}, "", startAtErr(s, "after", startAtFuture, now)
	case d < -startAtPast:
		return time.Time{}, "", startAtErr(s, "before", startAtPast, now)
	case d < -startAtLate:
		warning = fmt.Sprintf("--start-at %s: %s ago when kvreplay started: the replay starts at once, not in step with ranks that started on time", s, (-d).Round(time.Millisecond))
	}
	return at, warning, nil
}

func startAtErr(s, rel string, bound time.Duration, now time.Time) error {
	return fmt.Errorf("--start-at %s: more than %s %s now (%s): want an instant within %s before and %s after it",
		s, shortDuration(bound), rel, now.UTC().Format(time.RFC3339), shortDuration(startAtPast), shortDuration(startAtFuture))
}

// shortDuration writes whole hours as "24h", not "24h0m0s".
func shortDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}

// WaitUntil sleeps until t, or until ctx ends (then it returns ctx's
// cause). A t already past returns at once.
func WaitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	return sleepCtx(ctx, d)
}

// Start is when a rank starts its run: when it is ready (the zero Start),
// at an instant (--start-at), or when every rank is ready (--start-barrier).
type Start struct {
	// At is the instant, from --start-at or, once passed, the barrier;
	// zero: none.
	At time.Time
	// Warning, when set, says that At was already past when the flags
	// were parsed: the run starts at once.
	Warning string
	barrier *Barrier // nil once passed
	flag    string   // the flag that set At: --start-at or --start-barrier
	waited  bool     // Wait was called: later starts (probes) start when ready
	late    string   // Late's warning, until asked
}

// lateBound is how long after At a rank may start before its result says
// it was late: the barrier's grace, within which ranks that saw the last
// one ready a poll apart still start in step.
const lateBound = startBarrierGrace

// Late returns, once, the warning of a rank whose first start (Wait) came
// more than lateBound after At: it was not in step with the ranks that
// started on time (one that passed the barrier late, through a slow
// shared file system, or prepared its cold objects past --start-at,
// starts at once). "" when it was in step, when there is no At, or when
// Warning already said At was past.
func (s *Start) Late() string {
	w := s.late
	s.late = ""
	return w
}

// lateAt is Late's warning for a first start at started.
func (s *Start) lateAt(started time.Time) string {
	if s.At.IsZero() || s.Warning != "" {
		return ""
	}
	d := started.Sub(s.At)
	if d <= lateBound {
		return ""
	}
	return fmt.Sprintf("%s: this rank started %s after the ranks' start instant %s: it was late, and its replay is not in step with the ranks that started on time",
		s.flag, d.Round(time.Millisecond), s.At.UTC().Format(time.RFC3339Nano))
}

// ParseStart reads --start-at (at) and --start-barrier (dir, with its
// timeout), which exclude each other, against now.
func ParseStart(at, dir string, timeout time.Duration, now time.Time) (Start, error) {
	var s Start
	switch {
	case dir != "" && at != "":
		return s, errors.New("--start-barrier with --start-at: give one (ranks start at an instant, or when all are ready)")
	case dir != "" && timeout <= 0:
		return s, fmt.Errorf("--start-barrier-timeout %s: must be above 0", timeout)
	case dir != "":
		if err := checkBarrierDir(dir); err != nil {
			return s, err
		}
		s.barrier, s.flag = NewBarrier(dir, timeout), "--start-barrier"
	case at != "":
		s.flag = "--start-at"
		var err error
		if s.At, s.Warning, err = ParseStartAt(at, now); err != nil {
			return s, err
		}
	}
	return s, nil
}

// checkBarrierDir refuses a --start-barrier that kvreplay must not make or
// write ready files into: a path that is or lies under a system directory
// (/etc, /usr, /dev, ...; links resolved), or a file that is not a
// directory.
func checkBarrierDir(dir string) error {
	abs, err := syspath.Reached(dir)
	if err != nil {
		return fmt.Errorf("--start-barrier %s: %w", parsemsg.Arg(dir), err)
	}
	if sys, _ := syspath.System(abs); sys != "" {
		return fmt.Errorf("--start-barrier %s: refusing a path under the system directory %s: give a directory the ranks share, a new one for each run", parsemsg.Arg(dir), sys)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("--start-barrier %s: not a directory (want a directory the ranks share, a new one for each run)", parsemsg.Arg(dir))
	}
	return nil
}

// Waits reports whether the run waits before it starts.
func (s *Start) Waits() bool { return s.barrier != nil || !s.At.IsZero() }

// Wait waits until rank r may start: past the barrier, then until At.
// Once passed, the barrier is not waited for again (a search's later
// probes start when ready) and At is the instant it gave.
func (s *Start) Wait(ctx context.Context, r Rank) error {
	first := !s.waited
	s.waited = true
	if s.barrier != nil {
		at, err := s.barrier.Wait(ctx, r)
		if err != nil {
			return err
		}
		s.barrier, s.At = nil, at
	}
	if err := WaitUntil(ctx, s.At); err != nil {
		return err
	}
	if first {
		s.late = s.lateAt(time.Now())
	}
	return nil
}
