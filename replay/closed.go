package replay

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// A closed-loop replay (Config.ClosedLoop) issues each user's requests one
// after another, as the reference's users wait for their storage: a
// user's next request is released when its previous one completed, plus
// the think time the trace recorded between them (the gap from the
// previous request's last row to the next one's first, in trace time,
// scaled by Speed). The rows of a request keep their offsets from its
// first row, scaled the same way. Requests no user waits on (rows without
// a User: preconditioning, RAG ingestion, requests of request traces) are
// released at their trace times, as in an open-loop replay: they keep the
// trace's schedule, and their lag is kept apart from the users' rows'
// (task.onTime, ClosedLoopStats.ScheduledLag), for storage_health's
// schedule criterion; a user's rows keep none.
//
// The loop reads rows ahead into per-user queues, up to closedBuffer rows;
// what it does with them is driven by completions, so a slow system
// releases fewer requests per second, and its result shows that in
// throughput rather than in a lag that grows without bound.
//
// The rows of one object are ingested in trace order whichever request
// carries them: an Evict pair rides in the request whose write caused
// it, another user's, and a prefix object one user writes another reads.
// A row due before an earlier row of its object was ingested waits for
// it (keyq), so the model and the backends see each object's rows as the
// trace has them: the object is where the trace put it, never prepared
// cold or read on the wrong tier for the loop's order. Reads are the
// exception among themselves: a read (not a demotion's) whose earlier
// rows of its object are all such reads goes before them, as the
// scheduler runs reads of one object side by side. They find the object
// where the rows before them all put it, and a user does not wait for
// another, still thinking or slower, who read a shared object (a RAG
// document, a pre-populated context, a prefix block) earlier in the
// trace: its request's latency, measured from its release, would have
// held the other user's think time.

// closedBuffer bounds the rows read ahead and not yet dispatched. When a
// slow user holds the buffer full, the others wait for the reader too; a
// run with more than this in flight would need the trace in memory.
const closedBuffer = 1 << 18

// userKey is a user: its trace and its User value.
type userKey struct {
	src  int32
	user uint64
}

// clRequest is a request read into the loop.
type clRequest struct {
	src         int32
	id          uint64  // the trace's Request; 0 for a row outside requests
	user        *clUser // nil when no user waits on it
	skip        bool    // its user is outside --users: its rows are dropped
	qos         schema.QoS
	recs        []schema.Record
	first, last time.Duration // trace times of its first and last rows
	release     time.Time
	released    bool
	next        int  // rows dispatched
	whole       bool // every row of it has been read
	tokens      int64
	// waiting: its next row waits for an earlier row of its object, to
	// be due at waitAt once that row was ingested.
	waiting bool
	waitAt  time.Time
	// sent: every row of it was released (dispatched).
	sent bool
}

// clUser is a user's queue of requests and figures.
type clUser struct {
	key      userKey
	qos      schema.QoS
	queue    []*clRequest // read, not released
	active   *clRequest   // released, not complete
	started  bool
	prevDone time.Time
	lastEnd  time.Duration
	lat      results.Latency
	requests int64
	tokens   int64
	cut      int64 // requests the window cut
}

type clItem struct {
	at  time.Time
	seq uint64
	req *clRequest
}

// clHeap is the rows due, earliest first (by seq on a tie: no two items
// are equal, so the order is the items', whatever the heap's shape). Its
// push and pop are its own: container/heap's take and return an any, a
// clItem boxed on the heap twice for each row released.
type clHeap []clItem

func (h clHeap) less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}

// push adds it.
func (h *clHeap) push(it clItem) {
	*h = append(*h, it)
	q := *h
	for i := len(q) - 1; i > 0; {
		up := (i - 1) / 2
		if !q.less(i, up) {
			break
		}
		q[i], q[up] = q[up], q[i]
		i = up
	}
}

// pop removes the first item, h[0].
func (h *clHeap) pop() {
	q := *h
	n := len(q) - 1
	q[0] = q[n]
	q[n] = clItem{} // its request not held
	q = q[:n]
	*h = q
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			return
		}
		if r := j + 1; r < n && q.less(r, j) {
			j = r
		}
		if !q.less(j, i) {
			return
		}
		q[i], q[j] = q[j], q[i]
		i = j
	}
}

// closedInputs are what a closed loop is built from.
type closedInputs struct {
	in    intake
	rr    *rowReader
	pace  *pace
	speed func(time.Duration) time.Duration
	// names are the traces' names, for errors.
	names []string
	// userLimit is --users (0: all); plan says which users to replay
	// and how many requests each has, when it read the traces.
	userLimit int
	plan      *Plan
	// window is --duration (0: none), for the result.
	window time.Duration
	// paced: rows are due at their trace times (--speed is not max).
	paced bool
	// done is the run's context's: a run stopped waits for no row.
	done <-chan struct{}
}

// closedLoop is the releaser of a closed-loop replay.
type closedLoop struct {
	closedInputs
	users    map[userKey]*clUser
	order    []*clUser
	bySrc    []*clRequest // the last request read of each trace
	inflight map[reqID]*clRequest
	due      clHeap
	seq      uint64
	buffered int

	// keyq are the rows read and not ingested of each object, in trace
	// order, by trace and key (a map per trace: a lookup then builds no
	// name); waiting are the requests whose next row waits for its turn.
	keyq    []map[string]*keyRows
	waiting []*clRequest

	// stopped: the window closed (--duration passed) or the run stopped
	// (stop): no request is released.
	stopped bool

	// chosen are the users --users replays, from the plan (SelectUsers);
	// nil when every user is replayed or the plan does not know the users
	// (a pipe: then the first --users users to appear are replayed).
	chosen map[userKey]bool
	// ownKeys are the objects the replayed users' rows touched, when
	// --users leaves users out: an Evict or Delete row of one that a
	// left-out user's request carries (the trace's LRU demoting a
	// replayed user's object during another's request) is replayed at its
	// trace time as a row outside requests, so that the object is on the
	// tier where the trace has it when its user reads it again. The
	// left-out users' reads of it are not: they are those users' load.
	// A keyTable per trace: it holds every object the replayed users
	// touch, and a row marks its object without building its name (a
	// map[string]bool took a string of each row).
	ownKeys []keyTable

	released, completed, tokens int64
	ioTime                      time.Duration
	// unordered counts rows released before an earlier row of their
	// object, where waiting would have stopped the run (users whose
	// requests overlap in trace time).
	unordered int64
	// unstarted counts the requests released by the window's end of
	// which it released no row (closeWindow).
	unstarted int64
	// missed counts the rows of no user (released at their trace times,
	// as an open loop's) due by the window's end that it never released;
	// missedAtLeast is set where rows not read may be more of them (the
	// run was stopped, or a trace failed to read, before the first row
	// due after the window's end). closed is the window's end (zero while
	// it is open), and counting is set while rows not read may be due by
	// then (countRest).
	missed        int64
	missedAtLeast bool
	closed        time.Time
	counting      bool
	warnings      []string
}

// rowRef is a row of a request.
type rowRef struct {
	req *clRequest
	i   int
}

// keyRows is an object's rows read and not yet ingested, in trace order,
// and its key: the rows' Key, one copy for them all (a copy of each row's
// was an allocation per row), which nothing writes to.
type keyRows struct {
	name string
	key  []byte
	rows []rowRef
}

func newClosedLoop(ci closedInputs) *closedLoop {
	c := &closedLoop{closedInputs: ci, users: map[userKey]*clUser{}, bySrc: make([]*clRequest, len(ci.names)),
		inflight: map[reqID]*clRequest{}, keyq: make([]map[string]*keyRows, len(ci.names))}
	for i := range c.keyq {
		c.keyq[i] = map[string]*keyRows{}
	}
	if n := ci.userLimit; n > 0 {
		c.ownKeys = make([]keyTable, len(ci.names))
		if ci.plan != nil && len(ci.plan.Users) > 0 {
			c.chosen = chooseUsers(ci.plan.Users, n)
			if m := len(ci.plan.Users); m < n {
				// More than there are: a result of "--users 500" that
				// replayed 10 must say so, not only in closed_loop.users.
				users := fmt.Sprintf("%d users: all %d were", m, m)
				if m == 1 {
					users = "1 user: it was"
				}
				c.warnings = append(c.warnings, fmt.Sprintf("--users %d: the traces have %s replayed, not %d (under several ranks, this rank's share of the users)", n, users, n))
			}
		} else {
			c.warnings = append(c.warnings, fmt.Sprintf("--users %d: the trace was not read before the run (a pipe, or --no-prescan), "+
				"so its users' QoS classes were unknown: the first %d users to appear were replayed, not a sample that keeps the trace's QoS mix", n, n))
		}
	}
	return c
}

// wantRows reports whether the loop takes another batch of rows now.
func (c *closedLoop) wantRows() bool {
	if c.stopped {
		return false
	}
	// Past the buffer's bound, read on only when nothing else can move:
	// the requests in flight may need rows not read yet to complete.
	return c.buffered < closedBuffer || (len(c.due) == 0 && c.in.idle())
}

// drained reports that nothing read waits to be dispatched.
func (c *closedLoop) drained() bool { return len(c.due) == 0 && len(c.waiting) == 0 }

// absorb takes a batch of rows into the users' queues.
func (c *closedLoop) absorb(b *batch) {
	defer c.rr.recycle(b)
	if b.hasOrigin {
		c.pace.see(b.origin)
	}
	for i := range b.recs {
		rec := &b.recs[i]
		src := b.src[i]
		if !c.rr.hasUser[src] {
			c.in.fail(noUsers(c.names[src]))
			return
		}
		r := c.bySrc[src]
		if r != nil && r.id != 0 && rec.Request == r.id && (r.skip || (r.user == nil) == (rec.User == 0)) {
			c.add(r, rec)
			continue
		}
		if r != nil {
			c.whole(r)
		}
		c.bySrc[src] = c.open(rec, src)
	}
	if b.ended >= 0 {
		if r := c.bySrc[b.ended]; r != nil {
			c.whole(r)
			c.bySrc[b.ended] = nil
		}
	}
	if b.err != nil {
		c.in.fail(b.err)
	}
}

// open starts the request rec's row begins.
func (c *closedLoop) open(rec *schema.Record, src int32) *clRequest {
	r := &clRequest{src: src, id: rec.Request, first: rec.Time, tokens: rec.Tokens, qos: rec.QoS}
	if rec.User != 0 && rec.Request != 0 {
		k := userKey{src, rec.User}
		u := c.users[k]
		if u == nil {
			if !c.replays(k) {
				r.skip = true
				c.add(r, rec)
				return r
			}
			u = &clUser{key: k, qos: rec.QoS}
			c.users[k] = u
			c.order = append(c.order, u)
		}
		r.user = u
	}
	c.add(r, rec)
	if r.user != nil {
		r.user.queue = append(r.user.queue, r)
		c.nextRequest(r.user)
	} else {
		c.releaseAt(r, c.pace.at(rec.Time))
	}
	if rec.Request == 0 {
		c.whole(r) // a row outside requests is its own
		return nil
	}
	return r
}

// replays reports whether the user k, not seen before, is one --users
// replays.
func (c *closedLoop) replays(k userKey) bool {
	if c.chosen != nil {
		return c.chosen[k]
	}
	return c.userLimit <= 0 || len(c.order) < c.userLimit
}

// keyRowsOf returns the rows of the object key of trace src; make
// makes them when there are none.
func (c *closedLoop) keyRowsOf(src int32, key []byte, make bool) *keyRows {
	kq := c.keyq[src][string(key)] // no allocation
	if kq == nil && make {
		kq = &keyRows{name: string(key), key: slices.Clip(bytes.Clone(key))}
		c.keyq[src][kq.name] = kq
	}
	return kq
}

// add appends rec to r, and to its object's rows.
func (c *closedLoop) add(r *clRequest, rec *schema.Record) {
	if r.skip {
		if (rec.Phase == schema.PhaseEvict || rec.Op == schema.OpDelete) && c.owns(r.src, rec.Key) {
			loose := *rec
			loose.Request, loose.User = 0, 0
			c.open(&loose, r.src)
		}
		return
	}
	if c.ownKeys != nil && r.user != nil {
		c.ownKeys[r.src].add(rec.Key, true)
	}
	// The pace's origin is the first row the loop replays, as the plan's
	// window is (traceScan.inWindow): a --users sample whose users first
	// appear late in the trace starts with them, not idle until the rows
	// of users it leaves out have gone by. A rank of several has seen the
	// traces' first row before (absorb): the ranks replay in step.
	c.pace.see(rec.Time)
	kq := c.keyRowsOf(r.src, rec.Key, true)
	cp := *rec
	cp.Key = kq.key // the batch's bytes are the reader's again after absorb
	r.recs = append(r.recs, cp)
	r.last = rec.Time
	c.buffered++
	kq.rows = append(kq.rows, rowRef{r, len(r.recs) - 1})
	if r.released && r.next == len(r.recs)-1 && !r.waiting {
		// Its earlier rows are dispatched: this one is due at its offset.
		c.push(r, r.release.Add(c.speed(rec.Time-r.first)))
	}
}

// whole marks r as read to its last row.
func (c *closedLoop) whole(r *clRequest) {
	if r.whole {
		return
	}
	r.whole = true
	if r.released && r.next == len(r.recs) {
		c.dispatched(r)
	}
}

// nextRequest releases u's next request once its previous one completed.
func (c *closedLoop) nextRequest(u *clUser) {
	if u.active != nil || len(u.queue) == 0 || c.stopped {
		return
	}
	r := u.queue[0]
	u.queue[0] = nil
	u.queue = u.queue[1:]
	var at time.Time
	if !u.started {
		at = c.pace.at(r.first)
	} else {
		at = u.prevDone.Add(c.speed(max(0, r.first-u.lastEnd)))
	}
	u.started = true
	u.active = r
	c.releaseAt(r, at)
}

// releaseAt makes r's rows due from at on.
func (c *closedLoop) releaseAt(r *clRequest, at time.Time) {
	r.release, r.released = at, true
	if r.id != 0 {
		c.released++
		c.inflight[reqID{int(r.src), r.id}] = r
	}
	c.push(r, at)
}

func (c *closedLoop) push(r *clRequest, at time.Time) {
	c.seq++
	c.due.push(clItem{at: at, seq: c.seq, req: r})
}

// release ingests the rows due by now, each once its object's earlier
// rows were, while the run has room.
func (c *closedLoop) release(now time.Time) {
	for c.in.room() && len(c.due) > 0 {
		it := c.due[0]
		if it.at.After(now) {
			return
		}
		c.due.pop()
		r := it.req
		kq, turn := c.turn(r)
		if !turn {
			// An earlier row of its object is not ingested yet: the
			// request waits for it (unwait pushes it again).
			r.waiting, r.waitAt = true, it.at
			c.waiting = append(c.waiting, r)
			continue
		}
		c.ingestNext(r, kq, it.at)
	}
}

// turn returns the rows of r's next row's object, and whether that row
// may go: it is the first of them, or a plain read (plainRead) with only
// plain reads before it.
func (c *closedLoop) turn(r *clRequest) (*keyRows, bool) {
	kq := c.keyRowsOf(r.src, r.recs[r.next].Key, false)
	ref := rowRef{r, r.next}
	for i, x := range kq.rows {
		if x == ref {
			return kq, true
		}
		if i == 0 && !plainRead(ref) || !plainRead(x) {
			break
		}
	}
	return kq, false
}

// plainRead reports whether row ref is a read that leaves its object as
// it was: not an Evict read, whose Evict write moves the object on.
func plainRead(ref rowRef) bool {
	rec := &ref.req.recs[ref.i]
	return rec.Op == schema.OpRead && rec.Phase != schema.PhaseEvict
}

// ingestNext ingests r's next row, due at at, and releases the row of
// its object that waited for it.
func (c *closedLoop) ingestNext(r *clRequest, kq *keyRows, at time.Time) {
	rec := &r.recs[r.next]
	plain := plainRead(rowRef{r, r.next})
	c.forget(kq, rowRef{r, r.next})
	r.next++
	c.buffered--
	c.in.ingest(rec, int(r.src), at, r.user == nil)
	rec.Key = nil
	switch {
	case r.next < len(r.recs):
		c.push(r, r.release.Add(c.speed(r.recs[r.next].Time-r.first)))
	case r.whole:
		c.dispatched(r)
	}
	c.headTurn(kq, plain)
}

// forget removes row ref from its object's rows (the first, but for a row
// released out of order).
func (c *closedLoop) forget(kq *keyRows, ref rowRef) {
	for i, x := range kq.rows {
		if x != ref {
			continue
		}
		if i == 0 {
			kq.rows = kq.rows[1:]
		} else {
			kq.rows = append(kq.rows[:i], kq.rows[i+1:]...)
		}
		break
	}
	if len(kq.rows) == 0 {
		delete(c.keyq[ref.req.src], kq.name)
	}
}

// headTurn releases the requests whose next rows may now go (turn), once
// a row of kq was ingested, a plain read (plain) or not: the object's
// first row, and, after a row that was not a plain read, the plain reads
// that follow the first while it and they are plain reads. (A plain read
// ingested lets no other row go but the first: those after it waited for
// an earlier row that is still there.)
func (c *closedLoop) headTurn(kq *keyRows, plain bool) {
	for i, h := range kq.rows {
		if h.req.waiting && h.req.next == h.i {
			c.unwait(h.req)
		}
		if plain && i == 0 || !plainRead(h) {
			return
		}
	}
}

// unwait makes a waiting request due again, at the time its row was due.
func (c *closedLoop) unwait(r *clRequest) {
	r.waiting = false
	for i, w := range c.waiting {
		if w == r {
			c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
			break
		}
	}
	c.push(r, r.waitAt)
}

// next is when the first row due is; zero when none is. When rows wait
// for their objects' turns with nothing else to come (the run idle,
// nothing due, no row left to read), they would wait forever (which
// trace order rules out, each user's requests being read in order): the
// oldest waiting row goes, counted in a warning. (Once the window
// closed, nothing waits: closeWindow cut it.)
func (c *closedLoop) next() time.Time {
	if len(c.due) == 0 && len(c.waiting) > 0 && c.in.idle() && c.noMoreRows() {
		c.unstick()
		return c.pace.start // a pass now: start what went, or end
	}
	if len(c.due) == 0 {
		return time.Time{}
	}
	return c.due[0].at
}

// noMoreRows reports that no row read later can release a waiting one:
// the reader sent every row and the loop took them.
func (c *closedLoop) noMoreRows() bool {
	return c.rr.ended.Load() && len(c.rr.out) == 0
}

func (c *closedLoop) unstick() {
	r := c.waiting[0]
	c.unordered++
	kq := c.keyRowsOf(r.src, r.recs[r.next].Key, false)
	r.waiting = false
	c.waiting = c.waiting[1:]
	c.ingestNext(r, kq, r.waitAt)
}

// closeWindow ends the window (--duration) at end: no row is released
// after it. A request whose rows were all released completes; one with
// rows left (due later, waiting for their objects' turns, or not read)
// is cut: it ends with the rows it had, is not a completed request, and
// its user's next request is not released. A request due after end (its
// user thinking) was not released.
//
// A closed loop's request is due at its release: its user's previous
// request completed, plus the think time (a request of no user: its trace
// time). One released by end of which no row was released (the run had
// no room for it, or its first row waited for its object's turn) is cut
// as the open loop's unstarted requests are (intake.unstarted): it took
// at least the time from its release to end, and counts as missing its
// class's target, and the SLO's, where that passes them. Left out, a
// system too slow to start its users' requests looked as fast as the
// requests it did start. A user's rows are not rows_missed, which counts
// rows behind the trace's schedule: a user's requests keep none. The rows
// of no user do: released at their trace times, as an open loop's, each
// one due by end and not released is missed (intake.missed), as the open
// loop counts it, those read here and those countRest reads. They were
// dropped uncounted: the run's rows and rows_missed did not add up to the
// window's rows, and their lag was not in the lag.
func (c *closedLoop) closeWindow(end time.Time) {
	c.stopped = true
	clear(c.bySrc)
	c.closed, c.counting = end, c.paced
	if c.paced {
		seen := map[*clRequest]bool{}
		for _, it := range c.due {
			c.countMissed(it.req, seen)
		}
		for _, r := range c.waiting {
			c.countMissed(r, seen)
		}
		for _, r := range c.inflight {
			c.countMissed(r, seen)
		}
	}
	for id, r := range c.inflight {
		if r.sent {
			continue
		}
		if r.next == 0 && r.release.After(end) {
			c.unrelease(id, r)
			continue
		}
		delete(c.inflight, id)
		u := r.user
		if u != nil {
			u.active = nil
			u.cut++
		}
		if r.next == 0 {
			c.unstarted++
			c.in.unstarted(r.qos, r.release, end)
			continue
		}
		var at time.Time
		if r.next < len(r.recs) && !r.release.Add(c.speed(r.recs[r.next].Time-r.first)).After(end) {
			at = end // its next row was due: it was running at the window's end
		}
		c.in.cutRequest(id, at)
	}
	c.stop()
}

// countMissed counts the rows of r not released that were due by the
// window's end, where r is a request of no user (released at its trace
// time) not counted before (seen).
func (c *closedLoop) countMissed(r *clRequest, seen map[*clRequest]bool) {
	if r.user != nil || r.skip || !r.released || seen[r] {
		return
	}
	seen[r] = true
	for i := r.next; i < len(r.recs); i++ {
		if due := r.release.Add(c.speed(r.recs[i].Time - r.first)); !due.After(c.closed) {
			c.missed++
			c.in.missed(due, c.closed)
		}
	}
}

// countRest counts the rows of no user due by the window's end that the
// loop had not read when it closed: the reader reads on, up to the first
// row due after the window's end, as the open loop's countRest does.
// Those rows are decoded, not run. A user's rows are not counted: a
// user's requests keep no schedule, and requests_left counts those never
// released.
func (c *closedLoop) countRest() {
	for c.counting {
		var b *batch
		ok := false
		select {
		case b, ok = <-c.rr.out:
		case <-c.done:
		}
		if !ok {
			select {
			case <-c.done:
				// The reader stops for the run's context too, its traces
				// not ended.
				c.missedAtLeast = true
			default:
			}
			c.counting = false
			return
		}
		c.countBatch(b)
	}
}

// countBatch counts b's rows of no user due by the window's end, up to
// its first row due after it.
func (c *closedLoop) countBatch(b *batch) {
	defer c.rr.recycle(b)
	if b.hasOrigin {
		c.pace.see(b.origin)
	}
	for i := range b.recs {
		rec := &b.recs[i]
		due := c.pace.at(rec.Time)
		if due.After(c.closed) {
			c.counting = false
			return
		}
		if c.byTraceTime(rec, b.src[i]) {
			c.missed++
			c.in.missed(due, c.closed)
		}
	}
	if b.err != nil {
		// The rows after it are not known.
		c.counting, c.missedAtLeast = false, true
	}
}

// byTraceTime reports whether the loop releases rec, of trace src, at its
// trace time: a row of no user (open), or a demotion or delete of a
// replayed user's object that a left-out user's request carries (add).
func (c *closedLoop) byTraceTime(rec *schema.Record, src int32) bool {
	if rec.User == 0 || rec.Request == 0 {
		return true
	}
	k := userKey{src, rec.User}
	if c.users[k] != nil || c.chosen == nil && c.userLimit <= 0 {
		return false // a replayed user's
	}
	if c.chosen != nil && c.chosen[k] {
		return false
	}
	return (rec.Phase == schema.PhaseEvict || rec.Op == schema.OpDelete) && c.owns(src, rec.Key)
}

// owns reports whether a replayed user's row touched key of trace src
// (ownKeys), when --users leaves users out.
func (c *closedLoop) owns(src int32, key []byte) bool {
	return c.ownKeys != nil && c.ownKeys[src].has(key)
}

// stop drops what waits: the run stopped, or the window closed. A
// request released of which no row was is not: it never ran, and is
// left (RequestsLeft), not released.
func (c *closedLoop) stop() {
	c.stopped = true
	for id, r := range c.inflight {
		if r.next == 0 {
			c.unrelease(id, r)
		}
	}
	c.due = c.due[:0]
	c.waiting = c.waiting[:0]
	for _, q := range c.keyq {
		clear(q)
	}
	c.buffered = 0
}

// unrelease takes back the release of request id, r, none of whose rows
// was released: it goes back to the head of its user's queue.
func (c *closedLoop) unrelease(id reqID, r *clRequest) {
	delete(c.inflight, id)
	c.released--
	if u := r.user; u != nil {
		u.active = nil
		u.queue = append([]*clRequest{r}, u.queue...)
	}
}

// dispatched closes r once its last row is dispatched: its request
// completes when its rows do.
func (c *closedLoop) dispatched(r *clRequest) {
	r.recs, r.sent = nil, true
	if r.id != 0 {
		c.in.closeRequest(reqID{int(r.src), r.id})
	}
}

// requestDone is a request's completion at end: its user's next request
// may go.
func (c *closedLoop) requestDone(id reqID, took time.Duration, end time.Time) {
	r := c.inflight[id]
	if r == nil {
		return
	}
	delete(c.inflight, id)
	c.completed++
	c.tokens += r.tokens
	c.ioTime += took
	u := r.user
	if u == nil {
		return
	}
	u.requests++
	u.tokens += r.tokens
	u.lat.Add(took)
	u.active = nil
	u.prevDone, u.lastEnd = end, r.last
	c.nextRequest(u)
}

// left counts the replayed users' requests never released: those read,
// and, when the plan counted each user's requests, those not read; -1
// when requests may be unread and uncounted.
func (c *closedLoop) left() int64 {
	var n int64
	for _, u := range c.order {
		n += int64(len(u.queue))
	}
	p := c.plan
	if p == nil || !p.Scanned || p.UserRequests == nil {
		if c.stopped {
			return -1
		}
		return n
	}
	n = 0
	for _, u := range c.order {
		n += p.UserRequests[u.key] - u.requests - u.cut
		if u.active != nil {
			n-- // released, not complete
		}
	}
	return max(0, n)
}

// stats are the result's closed_loop block.
func (c *closedLoop) stats(wall time.Duration) *schema.ClosedLoopStats {
	st := &schema.ClosedLoopStats{Users: int64(len(c.order)), UserLimit: c.userLimit,
		WindowS: c.window.Seconds(), RequestsReleased: c.released, RequestsCompleted: c.completed,
		RequestsLeft: c.left(), TokensGenerated: c.tokens, StorageIOS: c.ioTime.Seconds(), TokensKnown: c.tokensKnown()}
	for _, u := range c.order {
		l := u.lat.Finalize()
		us := schema.UserStats{User: u.key.user, Trace: int(u.key.src), QoS: u.qos.String(), Requests: u.requests,
			Tokens: u.tokens, MeanMS: l.MeanUS / 1000, P95MS: l.P95US / 1000, MaxMS: l.MaxUS / 1000}
		if wall > 0 {
			us.RequestsPerSecond = float64(u.requests) / wall.Seconds()
		}
		st.PerUser = append(st.PerUser, us)
	}
	return st
}

// report adds the closed loop's figures and warnings to res.
func (c *closedLoop) report(res *schema.Result, wall time.Duration) {
	res.ClosedLoop = c.stats(wall)
	res.Warnings = append(res.Warnings, c.warnings...)
	if c.missed > 0 {
		res.Replay.RowsMissed = c.missed
		n := strconv.FormatInt(c.missed, 10)
		if c.missedAtLeast {
			n = "at least " + n
		}
		// With --users they are also the demotions and deletes of replayed
		// users' objects that left-out users' requests carry (byTraceTime),
		// which a kvtrace trace has thousands of and no row of no user.
		what := "rows of no user (released at their trace times, as an open loop's: preconditioning, RAG ingestion, request traces' requests)"
		if c.userLimit > 0 {
			what = "rows released at their trace times (rows of no user: preconditioning, RAG ingestion, request traces' requests; " +
				"and demotions and deletes of the replayed users' objects that left-out users' requests carry)"
		}
		res.Warnings = append(res.Warnings, fmt.Sprintf("--closed-loop: %s %s due before the --duration window closed were never released "+
			"(replay.rows_missed; %d rows were released): each counts in the lag of the rows at trace times (closed_loop.scheduled_lag), "+
			"and so in storage_health's schedule criterion, as late by at least the time from when it was due to the window's end",
			n, what, res.Replay.Rows))
	}
	if c.unstarted > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("--closed-loop: %d requests released before the --duration window closed never started "+
			"(the run was too busy to start them): each is cut (replay.requests_cut), and misses its class's target (and the SLO's) "+
			"where it was released longer than that before the window's end", c.unstarted))
	}
	if c.unordered > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("--closed-loop: %d rows ran before an earlier row of their object, which a request of a user "+
			"waiting for them carried (the trace's users overlap their own requests)", c.unordered))
	}
}

// tokensKnown reports that every trace has a Tokens column.
func (c *closedLoop) tokensKnown() bool {
	for _, ok := range c.rr.hasTokens {
		if !ok {
			return false
		}
	}
	return len(c.rr.hasTokens) > 0
}
