package replay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/freelist"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/schema"
)

// The scheduler is one goroutine, an event loop that owns every piece of
// a run's state: it takes rows from the reader and hands them to its
// releaser (release.go: the open loop paces them, the closed loop waits
// for users' requests), which ingests those due; it orders them
// (dispatch.go: rows of one key in trace order, reads of one key side by
// side, rows of one request in sequence), reserves their space
// (reserve.go), starts them (exec.go), and takes back completed blocks
// from the I/O engines and completed metadata calls from its pool. Its
// time is its Clock's (clock.go). Nothing is locked; the only
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
	// Ready, when set, is called once the untimed preparation (the cold
	// objects written, the setup rows run: runSetup) is done, just before the clock starts: a rank's
	// wait for the others (--start-at, --start-barrier), so that ranks
	// start their timed replays together whatever each prepared. Its
	// error stops the run before it starts.
	Ready func() error
}

// Progress is a run's state for a live progress line.
type Progress struct {
	Elapsed  time.Duration
	Rows     int64 // rows dispatched
	RowsDone int64 // rows completed
	Bytes    int64 // logical bytes moved
	Lag      time.Duration
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

	// rel releases the rows: the open loop's or the closed loop's
	// (release.go), noRows while the cold objects are written.
	rel  releaser
	keys map[string]*keyState
	// keyName is the name of the key keyState looks up, built here
	// (sourceKey's, for several traces) so that a lookup allocates nothing.
	keyName []byte
	reqs    map[reqID]*reqState
	// lastReq is the request of the last row ingested, while reqs holds
	// it: a request's rows come one after another, each found without a
	// lookup.
	lastReq *reqState

	objects  int64   // distinct objects seen
	ready    []*task // deps done and space reserved, waiting for a worker
	running  int     // tasks started, not complete
	inWindow int     // tasks dispatched, not complete
	metaBusy int
	// dispatched counts the tasks dispatched: a task's seq, the
	// version of the contents it writes (task.seq).
	dispatched uint64

	// allocs are the allocations started, not complete, at most
	// allocLimit (0: unbounded).
	allocs, allocLimit int

	start time.Time
	err   error // the first error: the run stops

	// setupAt is where the measured run starts in trace time (setupFrom),
	// 0 when every row is measured. inSetup is set while the rows before
	// it run (runSetup), by setupRel.
	setupAt  time.Duration
	inSetup  bool
	setupRel *openLoop

	rows, rowsDone, bytesDone atomic.Int64
	lag                       atomic.Int64
	counted                   struct {
		cold, coldBytes, evictions, remat, mismatch, syncs, cut, cutLate, abandoned int64
		// leftOut and leftOutBytes are the objects prepared for a --users
		// sample (ColdObject.LeftOut) written before the clock.
		leftOut, leftOutBytes int64
		// coldLate and coldLateBytes are the cold objects made when
		// first read, inside the measured window (not before the clock).
		coldLate, coldLateBytes int64
		// tier2Evictions are those of evictions made by Tier-2's
		// backend, which Config.Capacity bounds (CapacityWhy says why).
		tier2Evictions int64
		// setupRows are the rows run as setup (runSetup);
		// setupEvictions the capacity evictions made while they ran,
		// which evictions leaves out (resetSetupCounts), as it leaves
		// out coldEvictions, those made while the cold objects were
		// written (writeCold): all before the clock.
		setupRows, setupEvictions, coldEvictions int64
	}
	warnings []string
	infos    []schema.TraceInfo
}

// window is how many tasks may be dispatched and not complete: enough
// to look past a slow row, bounded so memory is.
func (s *sched) window() int { return 4 * s.cfg.Workers }

// room reports that the run goes on and the window has room for a task.
func (s *sched) room() bool { return s.err == nil && s.inWindow < s.window() }

// fail stops the run at its first error.
func (s *sched) fail(err error) {
	if s.err == nil {
		s.err = err
	}
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

// loopState is what the loop keeps from one pass to the next.
type loopState struct {
	rows *rowReader
	// rowsCh is the reader's channel; nil once it is closed, or the
	// loop reads no more.
	rowsCh <-chan *batch
	// deadline is the window's end (--duration); zero when there is none
	// or it passed.
	deadline time.Time
	// timer wakes the loop when the releaser's next row is due; timerAt
	// is when it fires, zero when it is not armed.
	timer   Timer
	timerAt time.Time
	ctxSeen bool
}

// loop runs the event loop until the rows are read and released (rows
// nil: none are read) and every task completed, or the run stops and what
// runs completed. It never blocks while a row is due and the window has
// room: it sleeps until a completion, a batch of rows, the releaser's next
// row's time, the window's end or the context.
func (s *sched) loop(rows *rowReader) {
	l := &loopState{rows: rows}
	if rows != nil {
		l.rowsCh = rows.out
		if s.cfg.Duration > 0 && !s.inSetup {
			// The top of the loop closes the window; the timer wakes it.
			l.deadline = s.start.Add(s.cfg.Duration)
			wt := s.clock.AfterFunc(l.deadline.Sub(s.clock.Now()), s.kickLoop)
			defer wt.Stop()
		}
	}
	// Timers and the context set flags and kick the loop, so that a loop
	// asleep in the poller's Wait wakes for them too.
	stopCtx := context.AfterFunc(s.ctx, s.kickLoop)
	defer stopCtx()
	defer func() {
		if l.timer != nil {
			l.timer.Stop()
		}
	}()
	for {
		now := s.clock.Now() // rows released in one pass share their dispatch time
		s.closeWindow(l, now)
		s.rel.release(now)
		s.startReady()
		if s.err != nil && (l.rowsCh != nil || !s.rel.drained()) {
			// Stop reading; what was dispatched finishes or is dropped.
			s.rel.stop()
			l.rowsCh = nil
			s.abandon()
		}
		if (l.rowsCh == nil || (s.setupRel != nil && s.setupRel.reached)) && s.rel.drained() && s.idle() {
			return
		}
		if s.dueNow(l) {
			continue // tasks completed on the loop itself: rows are due and there is room
		}
		s.wait(l)
	}
}

// closeWindow ends the window once its deadline passed: nothing more is
// released; what was released completes, and the requests it cut (rows
// left) end with the rows they had, not counted as completed.
func (s *sched) closeWindow(l *loopState, now time.Time) {
	if l.deadline.IsZero() || now.Before(l.deadline) {
		return
	}
	s.rel.closeWindow(l.deadline)
	l.deadline = time.Time{}
	l.rowsCh = nil
}

// dueNow reports whether the releaser holds a row due now that the window
// has room for; otherwise it arms the timer for the releaser's next row.
// Asked after the pass's tasks ran, since tasks that complete on the loop
// itself (in-memory metadata, no data) release rows: a closed loop's next
// requests, due at their completion.
func (s *sched) dueNow(l *loopState) bool {
	at := s.rel.next()
	if at.IsZero() {
		return false
	}
	now := s.clock.Now()
	if !at.After(now) {
		return s.room() // no room: a completion wakes the loop
	}
	if l.timerAt.IsZero() || l.timerAt.After(at) {
		d := at.Sub(now)
		if l.timer == nil {
			l.timer = s.clock.AfterFunc(d, s.timerFired)
		} else {
			l.timer.Reset(d) // a firing of the old deadline, too late to stop, only costs a pass
		}
		l.timerAt = at
	}
	return false
}

// timerFired is the pacing timer's call.
func (s *sched) timerFired() {
	s.timerDue.Store(true)
	s.kickLoop()
}

// wait sleeps until the loop has something to do, and does it: a block
// or a metadata call back, a batch of rows, a kick (the timer, the
// window's end, the context).
func (s *sched) wait(l *loopState) {
	wantRows := l.rowsCh
	if !s.rel.wantRows() {
		wantRows = nil
	}
	if p := s.poller; p != nil && p.Busy() {
		// Completions come from the poller only when the loop asks:
		// sleep in it unless the loop was handed something, take what
		// completed, and never block in the select below.
		p.Poll()
		if !s.hasWork() {
			s.wantRows, s.reader = wantRows, l.rows
			p.Wait(s.hasWorkF)
			s.wantRows = nil
		}
		if s.drainDone() {
			return
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
			// The reader stopped for ctx, maybe before the traces
			// ended and without a word: the run is not complete.
			l.rowsCh = nil
			s.checkCtx(l)
			return
		}
		s.rel.absorb(b)
	case <-s.kick:
		if s.timerDue.Swap(false) {
			l.timerAt = time.Time{}
		}
		s.checkCtx(l)
	}
}

// checkCtx stops the run, once, when its context is done.
func (s *sched) checkCtx(l *loopState) {
	if !l.ctxSeen && s.ctx.Err() != nil {
		l.ctxSeen = true
		s.fail(context.Cause(s.ctx))
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
