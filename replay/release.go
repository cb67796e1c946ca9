package replay

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// What is released when is the releaser's concern, not the loop's: the
// open loop releases every row at its trace time (openLoop, below); the
// closed loop releases each user's next request when its previous one
// completed, plus the think time (closed.go). The loop (sched.go) hands a
// releaser the rows read and the requests completed, asks it to release
// what is due, and sleeps until the releaser's next row is due or
// something completes. Whatever releases them, the rows of one object are
// ingested in trace order.

// releaser decides which rows are released when.
type releaser interface {
	// wantRows reports whether it takes another batch of rows now.
	wantRows() bool
	// absorb takes a batch of rows read; it recycles the batch.
	absorb(b *batch)
	// release ingests the rows due by now while the run has room.
	release(now time.Time)
	// next is when the first row it holds is due, the past included;
	// zero when it holds none it can release.
	next() time.Time
	// drained reports that it holds no row that waits to be released.
	drained() bool
	// closeWindow stops releasing (--duration passed, at now): no row
	// is released after it; what was released completes, and each
	// request with rows left is cut (intake.cutRequest).
	closeWindow(now time.Time)
	// countRest finishes what closeWindow left to the reader: called
	// once the loop ended and the run's wall time was taken, so that
	// waiting for rows delays no operation's completion.
	countRest()
	// stop drops every row not released: the run stopped.
	stop()
	// requestDone is a request's completion, took after its first row
	// was due, at end.
	requestDone(id reqID, took time.Duration, end time.Time)
	// report adds what the result must say of the releaser.
	report(res *schema.Result, wall time.Duration)
}

// intake is the scheduler as the releasers see it.
type intake interface {
	// ingest dispatches one row, due at due; onTime says that a closed
	// loop released it at its trace time (a row of no user), so that its
	// lag is kept apart from its users' rows' (metrics.onTimeLag).
	ingest(rec *schema.Record, src int, due time.Time, onTime bool)
	// closeRequest marks a request as having all its rows.
	closeRequest(id reqID)
	// cutRequest marks a request the window closed on with rows not
	// released: it ends with the rows it had, and is not completed.
	// Unless zero, at is the window's end, by which a row of it left was
	// due: the request had not completed then, and took at least until
	// it.
	cutRequest(id reqID, at time.Time)
	// room reports that the run goes on and may take another row now.
	room() bool
	// idle reports that nothing dispatched is incomplete.
	idle() bool
	// fail stops the run.
	fail(err error)
	// missed counts a row due at due that the window closed on, at
	// closed, without releasing it: its lag is at least closed-due. A
	// closed loop's missed rows are all released at their trace times.
	missed(due, closed time.Time)
	// unstarted counts a request of class q the window closed on, at
	// closed, with none of its rows released, though its first was due
	// at due: it is cut, and took at least closed-due.
	unstarted(q schema.QoS, due, closed time.Time)
}

// pace maps trace times to the run's clock: the first row read is due at
// start, every other its trace time after that row's, divided by Speed.
// A row whose trace time is before the first row's (a kv-cache.py trace
// whose threads logged out of order) is due at start: the run's clock
// has nothing before it, and its lag is from there, not from a time
// before the replay began.
type pace struct {
	start  time.Time
	speed  func(time.Duration) time.Duration
	t0     time.Duration
	haveT0 bool
}

// see notes a row read: the first sets the trace's origin (a rank of
// several sees the traces' first row first: batch.origin).
func (p *pace) see(t time.Duration) {
	if !p.haveT0 {
		p.haveT0, p.t0 = true, t
	}
}

// at is when a row of trace time t is due.
func (p *pace) at(t time.Duration) time.Time {
	if t < p.t0 {
		return p.start
	}
	return p.start.Add(p.speed(t - p.t0))
}

// noRows releases nothing: the loop that writes the cold objects before
// the clock starts.
type noRows struct{}

func (noRows) wantRows() bool                              { return false }
func (noRows) absorb(*batch)                               {}
func (noRows) release(time.Time)                           {}
func (noRows) next() time.Time                             { return time.Time{} }
func (noRows) drained() bool                               { return true }
func (noRows) closeWindow(time.Time)                       {}
func (noRows) countRest()                                  {}
func (noRows) stop()                                       {}
func (noRows) requestDone(reqID, time.Duration, time.Time) {}
func (noRows) report(*schema.Result, time.Duration)        {}

// openLoop releases rows at their trace times (divided by Speed; at once
// at --speed max), one batch at a time, in the order read: the rows of
// one object are in trace order by construction. A request ends where
// its trace moves on to another.
type openLoop struct {
	in    intake
	rr    *rowReader
	pace  *pace
	speed float64
	cur   *batch // the batch being released, nil when none
	pos   int    // its next row
	// lastReq is each trace's request being read.
	lastReq []uint64
	// held counts the rows due by the window's end that it never
	// released (the run was behind the trace's pace); heldAtLeast is set
	// when rows not read may be more of them (the run was stopped, or
	// the trace failed to read, before the first row not due).
	held        int64
	heldAtLeast bool
	// closed is the window's end, zero while it is open; counting is set
	// while rows not yet read may be due by then (countHeld), and after
	// holds the Request of each trace's first row not released, as far
	// as it read (0: the trace ended there).
	closed   time.Time
	counting bool
	after    map[int]uint64
	// heldReq is each trace's request of the last row counted held, from
	// its request at hand when the window closed (lastReq): a held row of
	// another request is the first of a request never started, and
	// unstarted counts those.
	heldReq   []uint64
	unstarted int64
	// done is the run's context's: a run stopped waits for no row.
	done <-chan struct{}
	// until, when above 0, is the setup's end (runSetup): it releases
	// no row from that trace time on, and reached is set at the first.
	until   time.Duration
	reached bool
	// last is the latest due time so far: rows are released in trace
	// order, so a row stamped before the row before it (a kv-cache.py
	// trace's threads take their clock before the writer's lock) is due
	// with that row, not before it, and its lag is not the backstep.
	last time.Time
}

func newOpenLoop(in intake, rr *rowReader, p *pace, speed float64, traces int) *openLoop {
	return &openLoop{in: in, rr: rr, pace: p, speed: speed, lastReq: make([]uint64, traces)}
}

func (o *openLoop) wantRows() bool { return o.cur == nil && !o.reached }
func (o *openLoop) drained() bool  { return o.cur == nil || o.reached }
func (o *openLoop) absorb(b *batch) {
	if b.hasOrigin {
		o.pace.see(b.origin)
	}
	o.cur, o.pos = b, 0
}

// due is when row i of the current batch is due: now at --speed max.
func (o *openLoop) due(i int, now time.Time) time.Time {
	rec := &o.cur.recs[i]
	o.pace.see(rec.Time)
	if o.speed <= 0 {
		return now
	}
	if due := o.pace.at(rec.Time); due.After(o.last) {
		o.last = due
	}
	return o.last
}

func (o *openLoop) release(now time.Time) {
	for o.cur != nil && o.in.room() {
		if o.pos == len(o.cur.recs) {
			o.endBatch()
			return
		}
		if o.until > 0 && o.cur.recs[o.pos].Time >= o.until {
			o.reached = true // the measured run's first row
			return
		}
		due := o.due(o.pos, now)
		if due.After(now) {
			return
		}
		rec, src := &o.cur.recs[o.pos], int(o.cur.src[o.pos])
		if rec.Request != 0 {
			if prev := o.lastReq[src]; prev != 0 && prev != rec.Request {
				o.in.closeRequest(reqID{src, prev})
			}
			o.lastReq[src] = rec.Request
		}
		o.in.ingest(rec, src, due, false) // the lag is all the open loop's rows'
		o.pos++
	}
}

// endBatch is the end of the current batch: the request of a trace that
// ended there is closed, and a reader's error stops the run.
func (o *openLoop) endBatch() {
	b := o.cur
	if b.ended >= 0 {
		if id := o.lastReq[b.ended]; id != 0 {
			o.lastReq[b.ended] = 0
			o.in.closeRequest(reqID{int(b.ended), id})
		}
	}
	if b.err != nil {
		o.in.fail(b.err)
	}
	o.rr.shard.ran(b.seq + int64(len(b.recs)))
	o.rr.recycle(b)
	o.cur, o.pos = nil, 0
}

func (o *openLoop) next() time.Time {
	if o.cur == nil || o.reached {
		return time.Time{}
	}
	if o.pos == len(o.cur.recs) || o.speed <= 0 {
		return o.pace.start // the batch's end, or a row due at once
	}
	return o.due(o.pos, time.Time{})
}

// closeWindow counts the rows due by the window's end (now) that it did
// not release, as far as the reader has read them, and ends each trace's
// request at hand whose next row it read: closed when that row is of
// another request, cut when it is of the same one. It does not wait for
// the reader: rows not read yet that may be due, and the requests they
// decide, are countRest's, once what was released completed.
func (o *openLoop) closeWindow(now time.Time) {
	if o.cur != nil {
		o.rr.shard.ran(o.cur.seq + int64(o.pos))
	}
	o.rr.shard.ranAll()
	o.closed, o.after, o.heldReq = now, map[int]uint64{}, slices.Clone(o.lastReq)
	// At --speed max every row is due, and none is late.
	o.counting = o.speed > 0
	o.countHeld(false)
	o.endRequests(!o.counting)
}

// countRest counts the rows due by the window's end that closeWindow
// found no batch of: the reader reads on, up to the first row due after
// the window's end, and no further, a trace on a pipe included (rows are
// due in the order read: one stamped before the row before it is due
// with that row, due). Those rows are decoded, not run: the count is
// exact, unless the run was stopped or the trace failed to read first
// (heldAtLeast). A request whose next row was not read is then cut.
func (o *openLoop) countRest() {
	if o.closed.IsZero() {
		return
	}
	if o.counting {
		o.countHeld(true)
	}
	o.endRequests(true)
}

// countHeld counts the rows due by the window's end that were not
// released: those left in the current batch, then those of the batches
// after it, up to the first row not yet due, and notes each trace's first
// row not released (after). A request whose first row is among them was
// due and never started (the run was too far behind to start it): it is
// cut, as one the window closed on with rows left is (intake.unstarted).
// wait says whether it waits for the reader's next batch, or stops at the
// last one read; counting stays set while rows not read may be due.
func (o *openLoop) countHeld(wait bool) {
	for {
		if o.cur == nil && !o.take(wait) {
			return
		}
		b := o.cur
		for i := o.pos; i < len(b.recs); i++ {
			src := int(b.src[i])
			if _, ok := o.after[src]; !ok {
				o.after[src] = b.recs[i].Request
			}
			if !o.counting {
				continue
			}
			if due := o.due(i, o.closed); !due.After(o.closed) {
				o.held++
				o.in.missed(due, o.closed)
				if id := b.recs[i].Request; id != 0 && id != o.heldReq[src] {
					o.heldReq[src] = id
					o.unstarted++
					o.in.unstarted(b.recs[i].QoS, due, o.closed)
				}
				continue
			}
			o.counting = false
		}
		if _, ok := o.after[int(b.ended)]; b.ended >= 0 && !ok {
			o.after[int(b.ended)] = 0
		}
		if b.err != nil && o.counting {
			// The rows after it are not known.
			o.counting, o.heldAtLeast = false, true
		}
		o.stop()
		if !o.counting {
			return
		}
	}
}

// take makes the reader's next batch the current one, waiting for it
// when wait is set. It reports whether there is one; counting ends where
// there is none to wait for: the traces ended, or the run was stopped
// (heldAtLeast).
func (o *openLoop) take(wait bool) bool {
	var b *batch
	ok := false
	if wait {
		select {
		case b, ok = <-o.rr.out:
		case <-o.done:
		}
	} else {
		select {
		case b, ok = <-o.rr.out:
		default:
			return false
		}
	}
	if !ok {
		select {
		case <-o.done:
			// The reader stops for the run's context too, its
			// traces not ended.
			o.heldAtLeast = true
		default:
		}
		o.counting = false
		return false
	}
	o.absorb(b)
	return true
}

// endRequests ends each trace's request at hand whose next row was read:
// closed when that row is of another request (or the trace ended there),
// cut when it is of the same one; with all set, one whose next row was
// not read is cut too.
func (o *openLoop) endRequests(all bool) {
	for src, id := range o.lastReq {
		next, ok := o.after[src]
		if id == 0 || (!ok && !all) {
			continue
		}
		o.lastReq[src] = 0
		if ok && next != id {
			o.in.closeRequest(reqID{src, id})
		} else {
			o.in.cutRequest(reqID{src, id}, time.Time{})
		}
	}
}

func (o *openLoop) stop() {
	if o.cur != nil {
		o.rr.recycle(o.cur)
		o.cur, o.pos = nil, 0
	}
}

func (o *openLoop) requestDone(reqID, time.Duration, time.Time) {}

// report says when the window closed on rows that were due, all of them
// (countRest), or at least those it says, and on how many requests it
// never started. Each such row counted in the lag (missed), late by at
// least the time from when it was due to the window's end; whether the
// run was behind the trace's pace is storage_health's schedule
// criterion's to say (BEHIND SCHEDULE, in result).
func (o *openLoop) report(res *schema.Result, _ time.Duration) {
	if o.held == 0 {
		return
	}
	res.Replay.RowsMissed = o.held
	n := strconv.FormatInt(o.held, 10)
	if o.heldAtLeast {
		n = "at least " + n
	}
	w := fmt.Sprintf("%s rows due before the --duration window closed were never released "+
		"(%d were): each counts in the lag, and so in storage_health's schedule criterion, as late by "+
		"at least the time from when it was due to the window's end", n, res.Replay.Rows)
	if o.unstarted > 0 {
		w += fmt.Sprintf("; of their requests, %d never started: each is cut (replay.requests_cut), "+
			"and misses its class's target (and the SLO's) where it was due longer than that before the window's end", o.unstarted)
	}
	res.Warnings = append(res.Warnings, w)
}
