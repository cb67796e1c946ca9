package replay

import (
	"github.com/kvbench/kvbench/replay/backend"
)

// Space is a resource of the engine. The model (model.go) decides, in
// trace order, what each row reserves on a backend before it starts and
// releases when it completes, and evicts so that the trace in its own
// order fits every bounded backend. Reservations are granted strictly in
// dispatch order, per backend, as releases make room: a write waits for
// the frees that precede it in the trace, and never for one after it. The
// earliest task not yet complete can therefore always get its space once
// the tasks before it completed (their releases bring the backend back to
// the model's bytes before it, which the model kept within the limit),
// and those need nothing from any later task: no deadlock, and no write
// fails for space while the trace fits.
//
// A backend whose space can fragment (the extent layout's file) may still
// refuse an object that the byte count admits: the task is then parked,
// holding its reservation, and tried again after the next release on that
// backend; it fails only when nothing that could release is in flight.

// A bounded backend of a run whose traces were not read before it (a
// pipe, --no-prescan) is sized without the trace's peak: the RAM arena at
// half the memory available. Held to that alone, writes never waited for
// the frees before them, and the replay ran ahead of the trace's order,
// keeping several times the trace's live bytes (0.9-1.04 GiB of arena in
// use at 1/16 where the same trace from a file, its arena at the trace's
// 204 MiB peak, ran in 401 MiB of RSS). Such a backend (followPeak) grants
// reservations up to the model's running peak too: the most the trace, in
// dispatch order, has held there so far, its own row included. The
// argument above holds with the running peak as the limit: once the tasks
// before the earliest waiting one complete, the backend holds the model's
// bytes before it, and its need brings them to at most the peak. A pipe
// replays as the same trace from a file does, whose arena is its peak.

// tierBackend is one backend of the run with its space.
type tierBackend struct {
	idx   int8
	name  string
	b     backend.Backend
	caps  backend.Caps
	align int64
	limit int64 // bytes that may be reserved; unbounded for none
	// followPeak holds reservations to the model's running peak too
	// (limitNow): a bounded backend of a run whose traces were not read
	// before it.
	followPeak bool
	used       int64 // bytes reserved now
	// waiting are the tasks whose reservation waits, in dispatch order.
	waiting []*task
	// parked are started tasks whose create the backend refused for
	// space despite the reservation (fragmentation).
	parked []*task
	// releasing counts the running tasks that will release space here.
	releasing int
}

// limitNow is what b may hold now: its limit, and for a followPeak
// backend at most the model's peak there so far.
func (s *sched) limitNow(b *tierBackend) int64 {
	if b.followPeak {
		return min(b.limit, s.model.peak[b.idx])
	}
	return b.limit
}

// reserve takes t's space on its backend, or queues t for it.
func (s *sched) reserve(t *task) {
	if t.needB < 0 || t.need == 0 {
		t.reserved = true
		s.becomeReady(t)
		return
	}
	b := s.backends[t.needB]
	if len(b.waiting) == 0 && b.used+t.need <= s.limitNow(b) {
		b.used += t.need
		t.reserved = true
		s.becomeReady(t)
		return
	}
	b.waiting = append(b.waiting, t)
}

// release gives back what t releases, then grants the waiting
// reservations that now fit, in order, and retries parked creates.
func (s *sched) release(t *task) {
	if t.relB < 0 || t.rel == 0 {
		return
	}
	b := s.backends[t.relB]
	b.used -= t.rel
	if t.started {
		b.releasing--
	}
	n := 0
	limit := s.limitNow(b)
	for n < len(b.waiting) && b.used+b.waiting[n].need <= limit {
		w := b.waiting[n]
		b.used += w.need
		w.reserved = true
		s.becomeReady(w)
		n++
	}
	if n > 0 {
		rest := copy(b.waiting, b.waiting[n:])
		clear(b.waiting[rest:])
		b.waiting = b.waiting[:rest]
	}
	if len(b.parked) > 0 {
		parked := b.parked
		b.parked = nil
		for _, p := range parked {
			p.parked = false
			s.advance(p)
		}
	}
}
