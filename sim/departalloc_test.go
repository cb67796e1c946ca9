package sim

import "testing"

// TestBlockedArrivalAllocatesNothing: an unpaced generator whose queue is
// full (the queue-cap departure) blocks at nearly every request of a
// saturated run; the note that says so is formatted once, not at every
// blocked arrival (it was: one fmt.Sprintf of ~350 bytes a request,
// doubling the bytes a --trace-speedup 0 BurstGPT run allocates).
func TestBlockedArrivalAllocatesNothing(t *testing.T) {
	e, _ := scriptedEngine(t, nil)
	e.workers, e.genZero = 1, true
	e.pending = &request{context: 100, gen: 10}
	for i := range e.queueCap() {
		e.queue.push(queued{seq: uint64(i), r: &request{}})
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := e.arrival(); err != nil {
			t.Fatal(err)
		}
		if !e.genBlock || e.pending == nil {
			t.Fatal("the arrival did not block on the full queue")
		}
	})
	if allocs != 0 {
		t.Errorf("a blocked arrival allocates %.0f times, want 0", allocs)
	}
	if n := len(e.departures); n != 1 {
		t.Errorf("%d departure notes, want 1: %q", n, e.departures)
	}
}
