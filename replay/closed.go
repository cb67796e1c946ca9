package replay

import (
	"container/heap"
	"errors"
	"fmt"
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
// released at their trace times, as in an open-loop replay.
//
// The loop reads rows ahead into per-user queues, up to closedBuffer rows;
// what it does with them is driven by completions, so a slow system
// releases fewer requests per second, and its result shows that in
// throughput rather than in a lag that grows without bound.

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
	recs        []schema.Record
	first, last time.Duration // trace times of its first and last rows
	release     time.Time
	released    bool
	next        int  // rows dispatched
	whole       bool // every row of it has been read
	tokens      int64
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
}

type clItem struct {
	at  time.Time
	seq uint64
	req *clRequest
}

type clHeap []clItem

func (h clHeap) Len() int { return len(h) }
func (h clHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h clHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *clHeap) Push(x any)   { *h = append(*h, x.(clItem)) }
func (h *clHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// closedLoop is the scheduler's source of rows in a closed-loop replay.
type closedLoop struct {
	s        *sched
	rr       *rowReader
	users    map[userKey]*clUser
	order    []*clUser
	bySrc    []*clRequest // the last request read of each trace
	inflight map[reqID]*clRequest
	due      clHeap
	seq      uint64
	buffered int

	windowClosed bool // --duration passed: no request is released

	// chosen are the users --users replays, from the plan (SelectUsers);
	// nil when every user is replayed or the plan does not know the users
	// (a pipe: then the first --users users to appear are replayed).
	chosen map[userKey]bool

	released, completed, tokens int64
	ioTime                      time.Duration
}

func newClosedLoop(s *sched, rr *rowReader) *closedLoop {
	c := &closedLoop{s: s, rr: rr, users: map[userKey]*clUser{}, bySrc: make([]*clRequest, len(s.srcs)),
		inflight: map[reqID]*clRequest{}}
	if n := s.cfg.Users; n > 0 {
		if s.plan != nil && len(s.plan.Users) > 0 {
			c.chosen = map[userKey]bool{}
			for _, u := range SelectUsers(s.plan.Users, n) {
				c.chosen[userKey{int32(u.Trace), u.ID}] = true
			}
		} else {
			s.warnings = append(s.warnings, fmt.Sprintf("--users %d: the trace was not read before the run (a pipe, or --no-prescan), "+
				"so its users' QoS classes were unknown: the first %d users to appear were replayed, not a sample that keeps the trace's QoS mix", n, n))
		}
	}
	return c
}

// wantRows reports whether the loop takes another batch of rows now.
func (c *closedLoop) wantRows() bool {
	if c.windowClosed {
		return false
	}
	// Past the buffer's bound, read on only when nothing else can move:
	// the requests in flight may need rows not read yet to complete.
	return c.buffered < closedBuffer || (len(c.due) == 0 && c.s.idle())
}

// drained reports that nothing read waits to be dispatched.
func (c *closedLoop) drained() bool { return len(c.due) == 0 }

// absorb takes a batch of rows into the users' queues.
func (c *closedLoop) absorb(b *batch) {
	s := c.s
	for i := range b.recs {
		rec := &b.recs[i]
		src := b.src[i]
		if !c.rr.hasUser[src] {
			s.fail(noUsers(s.srcs[src].Name))
			return
		}
		if !s.haveT0 {
			s.haveT0, s.t0 = true, rec.Time
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
		s.fail(b.err)
	}
}

// open starts the request rec's row begins.
func (c *closedLoop) open(rec *schema.Record, src int32) *clRequest {
	r := &clRequest{src: src, id: rec.Request, first: rec.Time, tokens: rec.Tokens}
	if rec.User != 0 && rec.Request != 0 {
		k := userKey{src, rec.User}
		u := c.users[k]
		if u == nil {
			if !c.replays(k) {
				r.skip = true
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
		c.next(r.user)
	} else {
		c.release(r, c.s.start.Add(c.s.cfg.speedDuration(rec.Time-c.s.t0)))
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
	lim := c.s.cfg.Users
	return lim <= 0 || len(c.order) < lim
}

// add appends rec to r.
func (c *closedLoop) add(r *clRequest, rec *schema.Record) {
	if r.skip {
		return
	}
	cp := *rec
	cp.Key = append([]byte(nil), rec.Key...)
	r.recs = append(r.recs, cp)
	r.last = rec.Time
	c.buffered++
	if r.released && r.next == len(r.recs)-1 {
		// Its earlier rows are dispatched: this one is due at its offset.
		c.push(r, r.release.Add(c.s.cfg.speedDuration(rec.Time-r.first)))
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

// next releases u's next request once its previous one completed.
func (c *closedLoop) next(u *clUser) {
	if u.active != nil || len(u.queue) == 0 || c.windowClosed {
		return
	}
	r := u.queue[0]
	u.queue[0] = nil
	u.queue = u.queue[1:]
	speed := c.s.cfg.speedDuration
	var at time.Time
	if !u.started {
		at = c.s.start.Add(speed(r.first - c.s.t0))
	} else {
		at = u.prevDone.Add(speed(max(0, r.first-u.lastEnd)))
	}
	u.started = true
	u.active = r
	c.release(r, at)
}

// release makes r's rows due from at on.
func (c *closedLoop) release(r *clRequest, at time.Time) {
	r.release, r.released = at, true
	if r.id != 0 {
		c.released++
		c.inflight[reqID{int(r.src), r.id}] = r
	}
	c.push(r, at)
}

func (c *closedLoop) push(r *clRequest, at time.Time) {
	c.seq++
	heap.Push(&c.due, clItem{at: at, seq: c.seq, req: r})
}

// dispatch ingests the rows due by now while the window of tasks has
// room; it returns when the next row is due (zero: none waits).
func (c *closedLoop) dispatch(now time.Time) time.Time {
	s := c.s
	for s.err == nil && len(c.due) > 0 && s.inWindow < s.window() {
		it := c.due[0]
		if it.at.After(now) {
			return it.at
		}
		heap.Pop(&c.due)
		r := it.req
		rec := &r.recs[r.next]
		r.next++
		c.buffered--
		s.ingest(rec, int(r.src), it.at)
		rec.Key = nil
		switch {
		case r.next < len(r.recs):
			c.push(r, r.release.Add(s.cfg.speedDuration(r.recs[r.next].Time-r.first)))
		case r.whole:
			c.dispatched(r)
		}
	}
	return time.Time{}
}

// closeWindow stops releasing requests, at the end of --duration: those
// released run to their end with the rows read so far.
func (c *closedLoop) closeWindow() {
	c.windowClosed = true
	for i, r := range c.bySrc {
		if r != nil {
			c.whole(r)
			c.bySrc[i] = nil
		}
	}
}

// dispatched closes r once its last row is dispatched: its request
// completes when its rows do.
func (c *closedLoop) dispatched(r *clRequest) {
	r.recs = nil
	if r.id != 0 {
		c.s.closeRequest(reqID{int(r.src), r.id})
	}
}

// done is a request's completion at end: its user's next request may go.
func (c *closedLoop) done(id reqID, took time.Duration, end time.Time) {
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
	c.next(u)
}

// left counts the replayed users' requests never released: those read,
// and, when the plan counted each user's requests, those not read; -1
// when requests may be unread and uncounted.
func (c *closedLoop) left() int64 {
	var n int64
	for _, u := range c.order {
		n += int64(len(u.queue))
	}
	p := c.s.plan
	if p == nil || !p.Scanned || p.UserRequests == nil {
		if c.windowClosed {
			return -1
		}
		return n
	}
	n = 0
	for _, u := range c.order {
		n += p.UserRequests[u.key] - u.requests
		if u.active != nil {
			n-- // released, not complete
		}
	}
	return max(0, n)
}

// stats are the result's closed_loop block.
func (c *closedLoop) stats(wall time.Duration) *schema.ClosedLoopStats {
	st := &schema.ClosedLoopStats{Users: int64(len(c.order)), UserLimit: c.s.cfg.Users,
		WindowS: c.s.cfg.Duration.Seconds(), RequestsReleased: c.released, RequestsCompleted: c.completed,
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

// tokensKnown reports that every trace has a Tokens column.
func (c *closedLoop) tokensKnown() bool {
	for _, ok := range c.rr.hasTokens {
		if !ok {
			return false
		}
	}
	return len(c.rr.hasTokens) > 0
}

// ErrNoUsers stops a closed-loop replay of a trace that does not say
// which user each request belongs to.
var ErrNoUsers = errors.New("the trace names no users")

func noUsers(name string) error {
	return fmt.Errorf("replay: --closed-loop: %s has no User column, so which requests wait for which cannot be known "+
		"(kv-cache.py's traces name users in their keys but not which rows make one request, and its worker threads "+
		"interleave them): replay it open-loop, or make the trace with kvtrace, which writes Request and User: %w", name, ErrNoUsers)
}
