package fault

import (
	"fmt"
	"sync"
	"syscall"

	"github.com/kvbench/kvbench/replay/backend"
)

// Rule says which calls a Fail decorator fails, from when, and with what.
//
// Matching calls (those of an Op in Op, on Key if Key is set) pass to the
// inner backend until a limit is reached: AfterCalls calls, or AfterBytes
// bytes (a read or write carries its length, an open with create its size,
// anything else none; a call that would carry the total past AfterBytes is
// the first to fail, as a write that does not fit on a full disk). Limits
// of 0 are unset; with neither set, every matching call fails. Calls are
// counted as they start, whatever the inner backend answers, so the count
// is exact under concurrency.
//
// From the first failure on, matching calls fail (a full disk stays full),
// Times of them if Times > 0, after which they pass again (a transient
// error). A failed call does not reach the inner backend: a failed open
// creates nothing, a failed remove leaves the Object open.
type Rule struct {
	Op         Op
	Key        string
	AfterCalls int64
	AfterBytes int64
	Times      int64
	// Err is the error a failed call returns, wrapped with the call and
	// ErrInjected; nil means ErrInjected alone.
	Err error
}

// NoSpace returns a Rule failing the op calls with ENOSPC: the error
// matches backend.ErrNoSpace, syscall.ENOSPC and ErrInjected. Set its
// limits to choose when the disk fills.
func NoSpace(op Op) Rule {
	return Rule{Op: op, Err: noSpaceError{syscall.ENOSPC}}
}

// IOError returns a Rule failing the op calls with EIO: the error matches
// syscall.EIO and ErrInjected.
func IOError(op Op) Rule {
	return Rule{Op: op, Err: syscall.EIO}
}

// noSpaceError is ENOSPC that matches backend.ErrNoSpace too, as a real
// backend's does.
type noSpaceError struct{ errno error }

func (e noSpaceError) Error() string        { return e.errno.Error() }
func (e noSpaceError) Unwrap() error        { return e.errno }
func (e noSpaceError) Is(target error) bool { return target == backend.ErrNoSpace }

// Fail returns b with the calls r matches failing as r says. It is safe
// for concurrent use. Its Caps name is b's with "+fail".
func Fail(b backend.Backend, r Rule) backend.Backend {
	f := &failer{rule: r}
	return &decorated{inner: b, suffix: "fail", around: f.around}
}

// failer is the state of one Fail decorator.
type failer struct {
	rule Rule

	mu        sync.Mutex
	calls     int64 // matching calls passed
	bytes     int64 // their bytes
	triggered bool
	failures  int64
}

func (f *failer) around(c *Call, next func() error) error {
	if err := f.decide(c); err != nil {
		return err
	}
	return next()
}

// decide counts the call c and returns its injected error, or nil to let
// it pass.
func (f *failer) decide(c *Call) error {
	r := &f.rule
	if c.Op&r.Op == 0 || r.Key != "" && c.Key != r.Key {
		return nil
	}
	n := c.Len
	if c.Op == OpOpen && !c.Create || c.Op&(OpRemove|OpClose) != 0 {
		n = 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.triggered {
		switch {
		case r.AfterCalls <= 0 && r.AfterBytes <= 0:
			f.triggered = true
		case r.AfterCalls > 0 && f.calls >= r.AfterCalls:
			f.triggered = true
		case r.AfterBytes > 0 && f.bytes+n > r.AfterBytes:
			f.triggered = true
		}
	}
	if !f.triggered || r.Times > 0 && f.failures >= r.Times {
		f.calls++
		f.bytes += n
		return nil
	}
	f.failures++
	where := ""
	if c.Op&(OpRead|OpWrite) != 0 {
		where = fmt.Sprintf(" at offset %d", c.Off)
	}
	if l, ok := c.obj.(backend.Locator); ok {
		where += " (" + l.Where(c.Off) + ")" // the file, and the offset there
	}
	if r.Err == nil {
		return fmt.Errorf("fault: %s %q%s: %w", c.Op, c.Key, where, ErrInjected)
	}
	return fmt.Errorf("fault: %s %q%s: %w: %w", c.Op, c.Key, where, ErrInjected, r.Err)
}
