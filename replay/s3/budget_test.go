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
// once the run's context is done.
func TestPartBudget(t *testing.T) {
	const part = 8 << 20
	newBudget := func() *partBudget {
		p := &partBudget{max: 2 * part}
		p.cond.L = &p.mu
		return p
	}
	// taken reports whether take(n) returns within d: a wait that should
	// end is given seconds, one that should not a short look.
	taken := func(p *partBudget, ctx context.Context, n int64, d time.Duration) (chan struct{}, bool) {
		done := make(chan struct{})
		go func() {
			p.take(ctx, n)
			close(done)
		}()
		select {
		case <-done:
			return done, true
		case <-time.After(d):
			return done, false
		}
	}

	p := newBudget()
	p.take(context.Background(), part)
	p.take(context.Background(), part)
	// Over the budget, nothing going up: no wait.
	if _, ok := taken(p, context.Background(), part, 5*time.Second); !ok {
		t.Fatal("take past the budget with no part going up waited")
	}
	// Over the budget with a part going up: it waits for that part.
	p.sending()
	done, ok := taken(p, context.Background(), part, 50*time.Millisecond)
	if ok {
		t.Fatal("take past the budget while a part goes up did not wait")
	}
	p.give(part, 1) // the part is up; still over the budget, none going up
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("take did not go on once the part going up came back")
	}
	if p.held != 3*part || p.pending != 0 {
		t.Errorf("held %d, %d going up; want %d and 0", p.held, p.pending, 3*part)
	}

	// The run's end wakes a waiter.
	p = newBudget()
	ctx, cancel := context.WithCancel(context.Background())
	p.take(ctx, 2*part)
	p.sending()
	done, ok = taken(p, ctx, part, 50*time.Millisecond)
	if ok {
		t.Fatal("take past the budget while a part goes up did not wait")
	}
	cancel()
	p.give(0, 0) // as New's context.AfterFunc does
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("take went on waiting after the run's end")
	}
}
