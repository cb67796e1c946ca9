package s3

import (
	"context"
	"testing"
	"time"
)

// TestPartBudget: a writer that needs a part buffer past the budget waits
// while a part is on its way up, and goes on when that part's buffer
// comes back; it never waits with no part on its way up (the buffers out
// then wait for the engine's next blocks, which it would hold back), nor
// once the run's context is done. Whether a take waits is seen through
// the budget's waiting hook, called each time a take is about to wait:
// no window of time decides it.
func TestPartBudget(t *testing.T) {
	const part = 8 << 20
	bg := context.Background()
	// newBudget is a budget of two parts whose waits are told on waits.
	newBudget := func() (p *partBudget, waits chan struct{}) {
		waits = make(chan struct{}, 16)
		p = &partBudget{max: 2 * part, waiting: func() { waits <- struct{}{} }}
		p.cond.L = &p.mu
		return p, waits
	}
	// goTake runs take(n) on its own; done is closed when it returns.
	goTake := func(p *partBudget, ctx context.Context, n int64) (done chan struct{}) {
		done = make(chan struct{})
		go func() {
			p.take(ctx, n)
			close(done)
		}()
		return done
	}
	// waited reports whether the take whose done is given waited: it
	// either calls the hook (and then cannot return until woken) or
	// returns without calling it.
	waited := func(waits, done chan struct{}) bool {
		select {
		case <-waits:
			return true
		case <-done:
			return false
		}
	}
	// returns fails the test unless the take whose done is given returns;
	// the bound is for a test that would hang, not a decision.
	returns := func(done chan struct{}, what string) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("take did not return %s", what)
		}
	}

	p, waits := newBudget()
	p.take(bg, part)
	p.take(bg, part)
	// Over the budget, nothing going up: no wait.
	if waited(waits, goTake(p, bg, part)) {
		t.Fatal("take past the budget with no part going up waited")
	}
	// Over the budget with a part going up: it waits for that part.
	p.sending()
	done := goTake(p, bg, part)
	if !waited(waits, done) {
		t.Fatal("take past the budget while a part goes up did not wait")
	}
	// A wake-up that changes nothing: it waits again.
	p.give(0, 0)
	if !waited(waits, done) {
		t.Fatal("take went on after a wake-up with the part still going up")
	}
	p.give(part, 1) // the part is up; still over the budget, none going up
	returns(done, "once the part going up came back")
	if p.held != 3*part || p.pending != 0 || len(waits) != 0 {
		t.Errorf("held %d, %d going up, %d more waits; want %d, 0 and 0", p.held, p.pending, len(waits), 3*part)
	}

	// The run's end wakes a waiter.
	p, waits = newBudget()
	ctx, cancel := context.WithCancel(bg)
	p.take(ctx, 2*part)
	p.sending()
	done = goTake(p, ctx, part)
	if !waited(waits, done) {
		t.Fatal("take past the budget while a part goes up did not wait")
	}
	cancel()
	p.give(0, 0) // as New's context.AfterFunc does
	returns(done, "after the run's end")
	// Once the run is over, no take waits.
	if waited(waits, goTake(p, ctx, part)) {
		t.Error("take waited after the run's end")
	}
}
