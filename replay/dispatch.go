package replay

import (
	"time"

	"github.com/kvbench/kvbench/schema"
)

// Dispatch turns a row into a task: the model's effects (evictions, the
// space to reserve), its place after its key's and its request's earlier
// tasks; completion releases what waited for it.

// keyState returns the state of key of trace src, made on first sight;
// src -1 says that key is already the name across the traces (a cold
// object's, from the plan).
func (s *sched) keyState(key []byte, src int) *keyState {
	var (
		ks   *keyState
		name string
	)
	if len(s.srcs) == 1 || src < 0 {
		if ks = s.keys[string(key)]; ks != nil {
			return ks
		}
		name = string(key) // not there: no second lookup
	} else {
		// sourceKey's name, built where a lookup allocates nothing.
		s.keyName = appendSourceKey(s.keyName[:0], src, key)
		if ks = s.keys[string(s.keyName)]; ks != nil {
			return ks
		}
		name = string(s.keyName)
	}
	ks = &keyState{name: name}
	if s.keys == nil {
		// Made on the first object, at its size: a run stopped before
		// any row (a pipe that never opened) allocates nothing.
		s.keys = make(map[string]*keyState, keysHint(s.plan))
	}
	s.keys[name] = ks
	s.objects++
	return ks
}

func (s *sched) newTask() *task {
	return s.freeTask.Get()
}

// ingest dispatches one trace row, due at sched; onTime: a closed loop
// released it at its trace time (intake.ingest).
func (s *sched) ingest(rec *schema.Record, src int, sched time.Time, onTime bool) {
	b := s.tiers[rec.Tier]
	if b == nil {
		s.fail(unmapped(rec.Tier, 1))
		return
	}
	if !s.inSetup {
		s.rows.Add(1)
	}
	ks := s.keyState(rec.Key, src)
	logical, phys := sizes(rec.Size, s.cfg.SizeScale, b.align)
	ef, err := s.model.apply(ks, rec.Op, rec.Tier, phys)
	if err != nil {
		s.fail(err)
		return
	}
	for _, v := range ef.victims {
		s.dispatchEvict(v, sched)
	}
	t := s.newTask()
	*t = task{kind: kindRow, op: rec.Op, tier: rec.Tier, phase: rec.Phase, logical: logical, phys: phys,
		ks: ks, sched: sched, succ: t.succ[:0],
		needB: ef.needB, relB: ef.relB, need: ef.need, rel: ef.rel,
		create: ef.create, cold: ef.cold, remat: ef.remat, setup: s.inSetup, onTime: onTime}
	// A read that finds its object runs beside other reads of it; one
	// that must create it is exclusive like a write.
	shared := rec.Op == schema.OpRead && !ef.create
	s.order(t, shared)
	if rec.Request != 0 {
		id := reqID{src, rec.Request}
		rs := s.lastReq
		if rs == nil || rs.id != id {
			if rs = s.reqs[id]; rs == nil {
				rs = &reqState{id: id, first: sched, qos: rec.QoS, setup: s.inSetup}
				s.reqs[id] = rs
			}
			s.lastReq = rs
		}
		rs.pending++
		t.req = rs
		s.after(t, rs.last)
		rs.last = t
	}
	s.reserve(t)
}

// dispatchEvict dispatches the model's eviction of v: a delete of its
// copy, after the key's earlier tasks.
func (s *sched) dispatchEvict(v *keyState, sched time.Time) {
	t := s.newTask()
	*t = task{kind: kindEvict, op: schema.OpDelete, ks: v, sched: sched, succ: t.succ[:0],
		needB: -1, relB: v.m.b, rel: v.m.phys}
	s.order(t, false)
	s.reserve(t)
}

// dispatchCold dispatches the untimed write of a cold object.
func (s *sched) dispatchCold(c ColdObject) {
	b := s.tiers[c.Tier]
	ks := s.keyState([]byte(c.Key), -1)
	_, phys := sizes(c.Logical, 1, b.align)
	ef, err := s.model.apply(ks, schema.OpRead, c.Tier, phys)
	if err != nil {
		s.fail(err)
		return
	}
	for _, v := range ef.victims {
		s.dispatchEvict(v, s.clock.Now())
	}
	t := s.newTask()
	*t = task{kind: kindCold, op: schema.OpRead, tier: c.Tier, logical: c.Logical, phys: phys, ks: ks,
		sched: s.clock.Now(), succ: t.succ[:0], needB: ef.needB, need: ef.need, relB: -1, create: true, cold: true, leftOut: c.LeftOut}
	s.order(t, false)
	s.reserve(t)
}

// order registers t after its key's earlier tasks.
func (s *sched) order(t *task, shared bool) {
	ks := t.ks
	ks.pending++
	s.inWindow++
	s.dispatched++
	t.seq = s.dispatched
	s.after(t, ks.lastW)
	if shared {
		ks.reads = append(ks.reads, t)
		return
	}
	for _, r := range ks.reads {
		s.after(t, r)
	}
	ks.reads = ks.reads[:0]
	ks.lastW = t
}

// after makes t wait for p, unless p is nil or done.
func (s *sched) after(t, p *task) {
	if p != nil && !p.done {
		p.succ = append(p.succ, t)
		t.deps++
	}
}

// missed counts a row the window closed on without releasing it: late by
// at least the time from when it was due to the window's end.
func (s *sched) missed(due, closed time.Time) {
	lag := max(0, closed.Sub(due))
	s.metrics.lag.Add(lag)
	if l := s.metrics.onTimeLag; l != nil {
		l.Add(lag) // a closed loop misses only rows due at their trace times
	}
}

// closeRequest marks a request as having all its rows.
func (s *sched) closeRequest(id reqID) {
	rs := s.reqs[id]
	if rs == nil {
		return
	}
	rs.closed = true
	if rs.pending == 0 {
		// Its rows are done: it completed when the last of them did, not
		// now (an open loop learns that a request has all its rows when
		// the next request's first row is due).
		end := rs.lastDone
		if end.IsZero() {
			end = s.clock.Now()
		}
		s.requestDone(rs, end)
		s.dropRequest(rs)
	}
}

// dropRequest forgets a request that ended.
func (s *sched) dropRequest(rs *reqState) {
	delete(s.reqs, rs.id)
	if s.lastReq == rs {
		s.lastReq = nil
	}
}

// cutRequest ends a request the window closed on with rows not released
// (none is released after it): once the rows it had complete, it ends,
// counted apart from the completed requests, whose latencies it would
// shorten. Unless zero, at is the window's end, by which a row of it
// left was due: it ran at least until then, however soon the rows it
// had completed (rows waiting for room, or for their object's turn).
func (s *sched) cutRequest(id reqID, at time.Time) {
	s.counted.cut++
	if rs := s.reqs[id]; rs != nil {
		rs.cut, rs.cutAt = true, at
		s.closeRequest(id)
	}
}

// unstarted ends a request of class q the window closed on, at closed,
// before any of its rows was released, though its first was due at due:
// it is cut, and closed-due is a lower bound of its latency, so that,
// as a cut request whose released rows already took longer than its
// target, it counts as missing its class's target, or the SLO's, where
// that already passes it (results.Requests.AddLate). Left out, a run too
// far behind to start its requests looked compliant.
func (s *sched) unstarted(q schema.QoS, due, closed time.Time) {
	s.counted.cut++
	if s.metrics.reqs.AddLate(q, closed.Sub(due)) {
		s.counted.cutLate++
	}
}

// requestDone records a request's completion at end; a cut one is not
// (but as a known miss, results.Requests.AddLate), nor one with a row
// abandoned when the run was stopped (its latency would end at the stop),
// nor one with a row that failed or never ran.
func (s *sched) requestDone(rs *reqState, end time.Time) {
	if rs.abandoned || rs.failed || rs.setup {
		return
	}
	if rs.cut {
		if end.Before(rs.cutAt) {
			end = rs.cutAt
		}
		if s.metrics.requestLate(rs, end) {
			s.counted.cutLate++
		}
		return
	}
	s.metrics.request(rs, end)
	s.rel.requestDone(rs.id, end.Sub(rs.first)-rs.untimed, end)
}

// becomeReady queues t to start once its predecessors are done and its
// space is reserved.
func (s *sched) becomeReady(t *task) {
	if t.deps == 0 && t.reserved {
		s.ready = append(s.ready, t)
	}
}

// startReady starts ready tasks while workers are free; an allocation
// waits, in order, while allocLimit are in flight.
func (s *sched) startReady() {
	n, kept := 0, 0
	for n < len(s.ready) && s.running < s.cfg.Workers {
		t := s.ready[n]
		n++
		if t.isAlloc() && s.allocLimit > 0 {
			if s.allocs >= s.allocLimit {
				s.ready[kept] = t
				kept++
				continue
			}
			s.allocs++
		}
		s.running++
		s.begin(t)
	}
	if n > kept {
		rest := kept + copy(s.ready[kept:], s.ready[n:])
		clear(s.ready[rest:])
		s.ready = s.ready[:rest]
	}
}

// complete ends a task at now: its successors may start, its space is
// released.
func (s *sched) complete(t *task, now time.Time) {
	t.done = true
	s.running--
	if t.isAlloc() && s.allocLimit > 0 {
		s.allocs--
	}
	s.inWindow--
	for _, n := range t.succ {
		n.deps--
		s.becomeReady(n)
	}
	clear(t.succ)
	t.succ = t.succ[:0]
	ks := t.ks
	ks.pending--
	if ks.lastW == t {
		ks.lastW = nil
	}
	if ks.pending == 0 && !ks.exists && !ks.m.exists && !ks.m.evicted {
		// A deleted object leaves no state: memory follows live objects.
		delete(s.keys, ks.name)
	}
	for i, r := range ks.reads {
		if r == t {
			last := len(ks.reads) - 1
			ks.reads[i] = ks.reads[last]
			ks.reads[last] = nil
			ks.reads = ks.reads[:last]
			break
		}
	}
	if rs := t.req; rs != nil {
		rs.pending--
		rs.lastDone = now
		if rs.last == t {
			rs.last = nil
		}
		if rs.closed && rs.pending == 0 {
			s.requestDone(rs, now)
			s.dropRequest(rs)
		}
	}
	s.release(t)
	if t.kind == kindRow && !t.skip && !t.dropped {
		// A row skipped once the run stopped did not run, and one
		// abandoned in flight did not finish: neither is done.
		if t.setup {
			s.counted.setupRows++
		} else {
			s.rowsDone.Add(1)
		}
	}
	succ := t.succ
	*t = task{succ: succ}
	s.freeTask.Put(t)
}
