package replay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/freelist"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/schema"
)

// The scheduler is one goroutine, an event loop that owns every piece of
// a run's state: it takes rows from the reader, paces them, orders them
// (rows of one key in trace order, reads of one key side by side, rows of
// one request in sequence), reserves their space (reserve.go), starts them
// (exec.go), and takes back completed blocks from the I/O engines and
// completed metadata calls from its pool. Nothing is locked; the only
// goroutine handoffs are the batches of rows, metadata calls, and blocks
// of engines with goroutines of their own. An engine that is a Poller
// (uring) runs on the loop itself: while it has ops the loop sleeps in its
// Wait, and everything else that can wake the loop (rows, metadata calls,
// the other engines' blocks, timers, the context) wakes it through the
// Poller's Wake after sending.

// Hooks are optional callbacks of a run.
type Hooks struct {
	// Progress is called about twice a second from its own goroutine.
	Progress func(Progress)
	// Movers make engines that move objects between tiers themselves
	// (ioengine.Mover: --gds's), tried before the built-in engines for
	// the blocks of a move.
	Movers []ioengine.Factory
	// Clock is the run's time (clock.go); nil is the wall clock.
	Clock Clock
}

// Progress is a run's state for a live progress line.
type Progress struct {
	Elapsed  time.Duration
	Rows     int64 // rows dispatched
	RowsDone int64 // rows completed
	Bytes    int64 // logical bytes moved
	Lag      time.Duration
}

// ErrUnmappedTier stops a run whose trace has rows on a tier --tier-map
// maps to no backend.
var ErrUnmappedTier = errors.New("tier mapped to no backend")

// keyState is an object: its state in the model (trace order) and in the
// execution (what the tasks that ran so far made of it). A task owns the
// execution state while it runs: per-key order lets no other task of the
// key run beside it, except reads beside reads, which only read it.
type keyState struct {
	name  string
	names [schema.NumTiers]string // its objects' names, by tier
	// handles are its objects kept open, by tier, on backends with
	// in-memory metadata (exec.go's openObject): reads use them without
	// an Open and a Close each.
	handles [schema.NumTiers]backend.Object
	m       mstate

	exists  bool
	tier    schema.Tier
	logical int64
	phys    int64
	version uint64

	// Ordering: reads wait for the last write-like task (a Write, a
	// Delete, an eviction, a read that creates its object); write-like
	// tasks wait for that and for every read registered since.
	lastW   *task
	reads   []*task
	pending int // tasks of the key not yet complete
}

// reqState tracks one request's rows.
type reqState struct {
	id      reqID
	first   time.Time
	pending int
	closed  bool
	qos     schema.QoS
	last    *task
	// lastDone is when the last of its rows so far completed.
	lastDone time.Time
}

type reqID struct {
	src int
	id  uint64
}

// task kinds besides trace rows.
const (
	kindRow   uint8 = iota
	kindEvict       // the model's capacity eviction of an object
	kindCold        // a cold object written before the clock starts
)

// task is one row, or one of the scheduler's own operations, to execute.
type task struct {
	kind    uint8
	op      schema.Op
	tier    schema.Tier
	phase   schema.Phase
	logical int64
	phys    int64
	ks      *keyState
	req     *reqState
	sched   time.Time

	// Space (reserve.go).
	needB, relB int8
	need, rel   int64
	reserved    bool
	create      bool
	cold, remat bool

	// Ordering.
	deps int32
	succ []*task
	done bool

	// Execution (exec.go).
	stage    uint8
	started  bool
	skip     bool // the run stopped before the task started
	b        *tierBackend
	obj      backend.Object
	eng      *engineSlot
	shared   bool        // obj is its key's kept handle: not closed by the task
	objTier  schema.Tier // the tier of obj
	ioTier   schema.Tier // the copy the blocks move
	write    bool        // the blocks' direction
	nextOff  int64
	inflight int
	err      error
	start    time.Time
	parked   bool
	// Metadata calls off the loop: the call and its arguments.
	meta       uint8
	metaB      backend.Backend
	metaName   string
	metaSize   int64
	metaCreate bool
	// A move's source copy, removed once the new one is written.
	moveFrom schema.Tier
	movePhys int64
	moving   bool
	// from is the key's copy a mover copies a move's bytes from (nil:
	// the bytes are generated).
	from backend.Object
}

// sched is a run.
type sched struct {
	cfg     *Config
	srcs    []Source
	plan    *Plan
	hooks   Hooks
	ctx     context.Context
	clock   Clock
	data    *blockData
	metrics *metrics

	tiers    [schema.NumTiers]*tierBackend
	backends []*tierBackend
	model    *model
	engines  []*engineSlot
	done     chan *ioengine.Op
	metaq    chan *task
	metaDone chan *task
	freeOps  []*ioengine.Op
	freeTask freelist.List[task]

	// poller is the engine that runs on the loop, nil when none does.
	poller ioengine.Poller
	// kick wakes the loop for what sets a flag rather than sending:
	// timerDue (the pacing timer fired), the window's end, the context.
	kick     chan struct{}
	timerDue atomic.Bool
	// wantRows is the loop's row channel while it wants rows, and rows
	// its reader, for ready.
	wantRows <-chan *batch
	reader   *rowReader
	hasWorkF func() bool

	cl      *closedLoop // nil in an open-loop replay
	keys    map[string]*keyState
	reqs    map[reqID]*reqState
	lastReq []uint64

	objects  int64   // distinct objects seen
	ready    []*task // deps done and space reserved, waiting for a worker
	running  int     // tasks started, not complete
	inWindow int     // tasks dispatched, not complete
	metaBusy int

	start  time.Time
	t0     time.Duration
	haveT0 bool
	err    error // the first error: the run stops

	rows, rowsDone, bytesDone atomic.Int64
	lag                       atomic.Int64
	counted                   struct{ cold, coldBytes, evictions, remat, mismatch, syncs int64 }
	warnings                  []string
	infos                     []schema.TraceInfo
}

// window is how many tasks may be dispatched and not complete: enough
// to look past a slow row, bounded so memory is.
func (s *sched) window() int { return 4 * s.cfg.Workers }

// fail stops the run at its first error.
func (s *sched) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

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
		name = sourceKey(src, len(s.srcs), key)
		if ks = s.keys[name]; ks != nil {
			return ks
		}
	}
	ks = &keyState{name: name}
	s.keys[name] = ks
	s.objects++
	return ks
}

func (s *sched) newTask() *task {
	return s.freeTask.Get()
}

// ingest dispatches one trace row, due now.
func (s *sched) ingest(rec *schema.Record, src int, sched time.Time) {
	b := s.tiers[rec.Tier]
	if b == nil {
		s.fail(unmapped(rec.Tier, 1))
		return
	}
	s.rows.Add(1)
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
		create: ef.create, cold: ef.cold, remat: ef.remat}
	// A read that finds its object runs beside other reads of it; one
	// that must create it is exclusive like a write.
	shared := rec.Op == schema.OpRead && !ef.create
	s.order(t, shared)
	if rec.Request != 0 {
		id := reqID{src, rec.Request}
		if s.cl == nil {
			// Open loop: a request ends where the trace moves on to
			// another (a closed loop closes its requests itself).
			if prev := s.lastReq[src]; prev != 0 && prev != rec.Request {
				s.closeRequest(reqID{src, prev})
			}
			s.lastReq[src] = rec.Request
		}
		rs := s.reqs[id]
		if rs == nil {
			rs = &reqState{id: id, first: sched, qos: rec.QoS}
			s.reqs[id] = rs
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
		sched: s.clock.Now(), succ: t.succ[:0], needB: ef.needB, need: ef.need, relB: -1, create: true, cold: true}
	s.order(t, false)
	s.reserve(t)
}

// order registers t after its key's earlier tasks.
func (s *sched) order(t *task, shared bool) {
	ks := t.ks
	ks.pending++
	s.inWindow++
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

// closeRequest marks a request as having all its rows.
func (s *sched) closeRequest(id reqID) {
	rs := s.reqs[id]
	if rs == nil {
		return
	}
	rs.closed = true
	if rs.pending == 0 {
		s.requestDone(rs, s.clock.Now())
		delete(s.reqs, id)
	}
}

// requestDone records a request's completion at end.
func (s *sched) requestDone(rs *reqState, end time.Time) {
	s.metrics.request(rs, end)
	if s.cl != nil {
		s.cl.done(rs.id, end.Sub(rs.first), end)
	}
}

// becomeReady queues t to start once its predecessors are done and its
// space is reserved.
func (s *sched) becomeReady(t *task) {
	if t.deps == 0 && t.reserved {
		s.ready = append(s.ready, t)
	}
}

// startReady starts ready tasks while workers are free.
func (s *sched) startReady() {
	n := 0
	for n < len(s.ready) && s.running < s.cfg.Workers {
		t := s.ready[n]
		n++
		s.running++
		s.begin(t)
	}
	if n > 0 {
		rest := copy(s.ready, s.ready[n:])
		clear(s.ready[rest:])
		s.ready = s.ready[:rest]
	}
}

// complete ends a task at now: its successors may start, its space is
// released.
func (s *sched) complete(t *task, now time.Time) {
	t.done = true
	s.running--
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
			delete(s.reqs, rs.id)
		}
	}
	s.release(t)
	if t.kind == kindRow {
		s.rowsDone.Add(1)
	}
	succ := t.succ
	*t = task{succ: succ}
	s.freeTask.Put(t)
}

// wake wakes the loop if it sleeps in the poller's Wait; whoever sends
// the loop something calls it after sending.
func (s *sched) wake() {
	if s.poller != nil {
		s.poller.Wake()
	}
}

// kickLoop wakes the loop for a flag set outside it.
func (s *sched) kickLoop() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
	s.wake()
}

// hasWork reports, for the poller's Wait, that the loop has been handed
// something: the loop then does not sleep.
func (s *sched) hasWork() bool {
	return len(s.done) > 0 || len(s.metaDone) > 0 || len(s.kick) > 0 || (s.wantRows != nil && (len(s.wantRows) > 0 || s.reader.ended.Load()))
}

// idle reports that nothing is dispatched and not complete.
func (s *sched) idle() bool { return s.inWindow == 0 }

// loop runs the event loop until rows is drained (nil: until idle) and
// every task completed, or the run stops and what runs completed.
func (s *sched) loop(rows *rowReader) {
	var (
		cur      *batch
		next     int
		timer    Timer
		timerSet bool // the timer is running: timerDue tells when it fired
		rowsCh   <-chan *batch
		ctxSeen  bool
	)
	if rows != nil {
		rowsCh = rows.out
	}
	cl := s.cl
	if rows == nil {
		cl = nil // the cold objects, before the clock starts
	}
	var deadline time.Time
	if rows != nil && s.cfg.Duration > 0 {
		// The top of the loop closes the window; the timer wakes it.
		deadline = s.start.Add(s.cfg.Duration)
		wt := s.clock.AfterFunc(deadline.Sub(s.clock.Now()), s.kickLoop)
		defer wt.Stop()
	}
	// Timers and the context set flags and kick the loop, so that a loop
	// asleep in the poller's Wait wakes for them too.
	fire := func() {
		s.timerDue.Store(true)
		s.kickLoop()
	}
	setTimer := func(d time.Duration) {
		if timer == nil {
			timer = s.clock.AfterFunc(d, fire)
		} else {
			timer.Reset(d) // a firing of the old deadline, too late to stop, only costs a pass
		}
		timerSet = true
	}
	stopCtx := context.AfterFunc(s.ctx, s.kickLoop)
	defer stopCtx()
	for {
		now := s.clock.Now() // rows dispatched in one pass share their dispatch time
		if !deadline.IsZero() && !now.Before(deadline) {
			// The window is over: release nothing more; what was released
			// completes, and the requests it cut end with the rows they had.
			deadline = time.Time{}
			if cl != nil {
				cl.closeWindow()
			}
			if cur != nil {
				rows.recycle(cur)
				cur = nil
			}
			rowsCh = nil
			for src, id := range s.lastReq {
				if id != 0 {
					s.lastReq[src] = 0
					s.closeRequest(reqID{src, id})
				}
			}
		}
		moreDue := false
		if cl != nil {
			if at := cl.dispatch(now); !at.IsZero() && !timerSet {
				setTimer(at.Sub(now))
			}
			moreDue = len(cl.due) > 0 && !cl.due[0].at.After(now)
		}
		// Dispatch the rows that are due while the window has room.
		for s.err == nil && cur != nil && s.inWindow < s.window() {
			if next == len(cur.recs) {
				if cur.ended >= 0 {
					if id := s.lastReq[cur.ended]; id != 0 {
						s.closeRequest(reqID{int(cur.ended), id})
					}
				}
				if cur.err != nil {
					s.fail(cur.err)
				}
				rows.recycle(cur)
				cur, next = nil, 0
				break
			}
			rec := &cur.recs[next]
			if !s.haveT0 {
				s.haveT0, s.t0 = true, rec.Time
			}
			due := now
			if s.cfg.Speed > 0 {
				due = s.start.Add(s.cfg.speedDuration(rec.Time - s.t0))
				if d := due.Sub(now); d > 0 {
					setTimer(d)
					break
				}
			}
			s.ingest(rec, int(cur.src[next]), due)
			next++
		}
		s.startReady()
		if s.err != nil && (rowsCh != nil || cur != nil || (cl != nil && len(cl.due) > 0)) {
			// Stop reading; what was dispatched finishes or is dropped.
			if cur != nil {
				rows.recycle(cur)
				cur = nil
			}
			rowsCh = nil
			if cl != nil {
				cl.due = cl.due[:0]
			}
			s.abandon()
		}
		if cur == nil && rowsCh == nil && s.idle() && (cl == nil || cl.drained()) {
			break
		}
		if s.err == nil && s.inWindow < s.window() && !timerSet && (cur != nil || moreDue) {
			continue // tasks completed on the loop itself: there is room for more rows
		}
		wantRows := rowsCh
		if cur != nil || (cl != nil && !cl.wantRows()) {
			wantRows = nil
		}
		if p := s.poller; p != nil && p.Busy() {
			// Completions come from the poller only when the loop asks:
			// sleep in it unless the loop was handed something, take what
			// completed, and never block in the select below.
			p.Poll()
			if !s.hasWork() {
				s.wantRows, s.reader = wantRows, rows
				p.Wait(s.hasWorkF)
				s.wantRows = nil
			}
			if s.drainDone() {
				continue
			}
			select {
			case s.kick <- struct{}{}:
			default:
			}
		}
		select {
		case op := <-s.done:
			s.blockDone(op)
			s.drainDone() // every completion already there, before dispatching more
		case t := <-s.metaDone:
			s.metaBusy--
			s.advance(t) // its metadata call is back from the pool
		case b, ok := <-wantRows:
			if !ok {
				rowsCh = nil
				if !ctxSeen && s.ctx.Err() != nil {
					// The reader stopped for ctx, maybe before the traces
					// ended and without a word: the run is not complete.
					ctxSeen = true
					s.fail(context.Cause(s.ctx))
				}
				continue
			}
			if cl != nil {
				cl.absorb(b)
				rows.recycle(b)
				continue
			}
			cur, next = b, 0
		case <-s.kick:
			if s.timerDue.Swap(false) {
				timerSet = false
			}
			if !ctxSeen && s.ctx.Err() != nil {
				ctxSeen = true
				s.fail(context.Cause(s.ctx))
			}
		}
	}
	if timer != nil {
		timer.Stop()
	}
}

// drainDone takes back every completed block there is, without waiting,
// and reports whether there was one.
func (s *sched) drainDone() bool {
	any := false
	for {
		select {
		case op := <-s.done:
			s.blockDone(op)
			any = true
		default:
			return any
		}
	}
}

// abandon lets every dispatched task that has not started complete
// without running, once the run has stopped.
func (s *sched) abandon() {
	for _, b := range s.backends {
		for _, t := range b.waiting {
			t.reserved, t.skip = true, true
			s.becomeReady(t)
		}
		b.waiting = b.waiting[:0]
	}
}

func unmapped(t schema.Tier, rows int64) error {
	hint := ""
	if t == schema.TierGPU {
		hint = " (or gpu on a machine with a GPU)"
	}
	return fmt.Errorf("replay: the trace has %d %s rows and %s is mapped to no backend: add --tier-map %s=ram%s: %w",
		rows, t, t, t, hint, ErrUnmappedTier)
}
