package replay

import (
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// maxErrors is how many error messages a result keeps.
const maxErrors = 10

// cellMetrics is one tier x operation x phase: the shared aggregate, and
// the operations in flight for its busy time.
type cellMetrics struct {
	*results.Cell
	busy opBusy
}

// busyTimes are how long a tier was busy with any operation, with reads and
// with writes: the union of the operations' intervals, so that a tier's
// device rate counts concurrent operations once, and the busy times of
// its cells (of different phases, reads beside writes) are not added or
// taken for one another.
type busyTimes struct {
	all, read, write opBusy
}

// opBusy is the busy time of a set of operations: the length of the
// union of their intervals, less what only operations abandoned when the
// run was stopped covered: those are left out of the
// busy time as they are of the bytes, the rows and the requests, whose
// device rate they would lower. An operation is known to be abandoned
// only when it ends, so the union of the intervals of those that finished
// in the busy period under way (operations in flight since it began) is
// kept until the period ends.
type opBusy struct {
	inflight int
	total    time.Duration // of the busy periods that ended
	// spans are the union of the intervals that finished in the busy
	// period under way: disjoint, in order; open is their length.
	spans []span
	open  time.Duration
}

type span struct{ from, to time.Time }

// maxSpans bounds opBusy.spans: past it, its older half becomes one span,
// its gaps counted as busy. They lie in the busy period, covered by
// operations in flight, which only a stop can abandon: a few short
// operations beside a long one open a gap each until it ends.
const maxSpans = 4096

// begin records an operation's start.
func (b *opBusy) begin() { b.inflight++ }

// end records the end at to of an operation that began at from, its
// interval left out when it was abandoned. Operations end in time order.
func (b *opBusy) end(from, to time.Time, abandoned bool) {
	if b.inflight <= 0 {
		return
	}
	b.inflight--
	if b.inflight == 0 && len(b.spans) == 0 {
		// It alone made its busy period (operations that run one at a
		// time): the union is its interval, and no span is kept.
		if !abandoned {
			b.total += to.Sub(from)
		}
		return
	}
	if !abandoned {
		for n := len(b.spans); n > 0 && !b.spans[n-1].to.Before(from); n = len(b.spans) {
			last := b.spans[n-1]
			if last.from.Before(from) {
				from = last.from
			}
			if last.to.After(to) {
				to = last.to
			}
			b.open -= last.to.Sub(last.from)
			b.spans = b.spans[:n-1]
		}
		b.spans = append(b.spans, span{from, to})
		b.open += to.Sub(from)
	}
	switch {
	case b.inflight == 0:
		b.total += b.open
		b.spans, b.open = b.spans[:0], 0
	case len(b.spans) > maxSpans:
		h := len(b.spans) / 2
		b.open += b.spans[h-1].to.Sub(b.spans[0].from)
		for _, sp := range b.spans[:h] {
			b.open -= sp.to.Sub(sp.from)
		}
		b.spans[0].to = b.spans[h-1].to
		b.spans = append(b.spans[:1], b.spans[h:]...)
	}
}

// Total is the busy time of the operations that finished.
func (b *opBusy) Total() time.Duration { return b.total + b.open }

// metrics are a run's measurements, owned by the scheduler's loop. The
// aggregates are results', the ones kvreport merges.
type metrics struct {
	start time.Time
	cells [schema.NumTiers][schema.NumOps][schema.NumPhases]*cellMetrics
	tiers [schema.NumTiers]busyTimes
	lag   *results.Latency
	// onTimeLag is the lag of the rows a closed loop at a pace released
	// at their trace times (task.onTime), and of those it missed: the
	// rows with a schedule, which storage_health judges
	// (schema.ClosedLoopStats.ScheduledLag). Nil in an open loop, whose
	// lag is all such rows', and at --speed max.
	onTimeLag *results.Latency
	lagLast   atomic.Int64 // for the progress line, from another goroutine
	reqs      *results.Requests
	device    results.Device
	timeline  []schema.Second
	secLag    []*results.Latency
	errCount  int64
	errFirst  []string
}

func newMetrics() *metrics {
	return &metrics{lag: results.NewLatency(), reqs: results.NewRequests()}
}

func (m *metrics) cell(t *task) *cellMetrics {
	c := m.cells[t.tier][t.op][t.phase]
	if c == nil {
		c = &cellMetrics{Cell: results.NewCell()}
		m.cells[t.tier][t.op][t.phase] = c
	}
	return c
}

// second returns the timeline entry of t, growing the timeline.
func (m *metrics) second(t time.Time) int {
	s := max(0, int(t.Sub(m.start)/time.Second))
	for len(m.timeline) <= s {
		m.timeline = append(m.timeline, schema.Second{T: len(m.timeline)})
		m.secLag = append(m.secLag, nil)
	}
	return s
}

// begin records an operation's start: its lag behind schedule and the
// cell's busy time.
func (m *metrics) begin(t *task, start time.Time) {
	lag := max(0, start.Sub(t.sched))
	m.lag.Add(lag)
	if t.onTime && m.onTimeLag != nil {
		m.onTimeLag.Add(lag)
	}
	m.lagLast.Store(int64(lag))
	s := m.second(start)
	if m.secLag[s] == nil {
		m.secLag[s] = results.NewLatency()
	}
	m.secLag[s].Add(lag)
	m.cell(t).busy.begin()
	all, op := m.tierBusyOf(t)
	all.begin()
	if op != nil {
		op.begin()
	}
}

// tierBusyOf returns the busy times of t's tier that t counts in: the
// tier's, and its reads' or writes' (nil for a delete).
func (m *metrics) tierBusyOf(t *task) (all, op *opBusy) {
	tb := &m.tiers[t.tier]
	switch t.op {
	case schema.OpRead:
		op = &tb.read
	case schema.OpWrite:
		op = &tb.write
	}
	return &tb.all, op
}

// tierBusy returns the busy time of each tier that was busy.
func (m *metrics) tierBusy() []results.TierBusy {
	var out []results.TierBusy
	for t := range schema.Tier(schema.NumTiers) {
		tb := &m.tiers[t]
		if tb.all.Total() > 0 {
			out = append(out, results.TierBusy{Tier: t.String(), All: tb.all.Total(), Read: tb.read.Total(), Write: tb.write.Total()})
		}
	}
	return out
}

// endBusy records the end of an operation's interval in the busy times,
// left out when it was abandoned when the run was stopped. Operations
// end in time order: a move's ends with its write, before its source
// copy is removed (see succeeded).
func (m *metrics) endBusy(t *task, start, end time.Time, abandoned bool) {
	c := m.cell(t)
	c.busy.end(start, end, abandoned)
	c.Busy = c.busy.Total()
	all, op := m.tierBusyOf(t)
	all.end(start, end, abandoned)
	if op != nil {
		op.end(start, end, abandoned)
	}
}

// succeeded counts an operation that succeeded, over start to end: its
// cell, device span and timeline second. A failed or abandoned one is
// counted in no figure but the busy times (endBusy) and the errors, and a
// failed one in its cell's failed operations (failed).
func (m *metrics) succeeded(t *task, start, end time.Time) {
	c := m.cell(t)
	c.Add(end.Sub(start), end.Sub(t.sched), t.logical, t.phys)
	if !t.firstByte.IsZero() {
		// A part fetched for another block of the object may have come
		// before this operation started: its first byte waited for none.
		c.AddFirstByte(max(0, t.firstByte.Sub(start)))
	}
	if !t.ioStart.IsZero() && !t.ioEnd.IsZero() {
		m.device.Add(t.ioTier, t.op, t.phase, t.ioEnd.Sub(t.ioStart))
	}
	s := &m.timeline[m.second(end)]
	switch t.op {
	case schema.OpRead:
		s.ReadBytes[t.tier] += t.logical
	case schema.OpWrite:
		s.WriteBytes[t.tier] += t.logical
	}
	s.Ops[t.tier]++
}

// failed counts a row of the measured run that failed in its cell, in
// no figure but the failed operations (its time, if it began, is in the
// busy times: endBusy), so that a tier or cell whose operations all
// failed is in the result.
func (m *metrics) failed(t *task) { m.cell(t).AddFailed() }

// request records a finished request's storage latency: from its first
// row's scheduled time to its last row's completion, less the untimed
// writes that delayed it (reqState.untimed).
func (m *metrics) request(rs *reqState, end time.Time) {
	m.reqs.Add(rs.qos, end.Sub(rs.first)-rs.untimed)
}

// requestLate records a cut request whose released rows ended at end,
// if that already missed its class's target or the SLO's
// (results.Requests.AddLate); it reports whether Requests counted it.
func (m *metrics) requestLate(rs *reqState, end time.Time) bool {
	return m.reqs.AddLate(rs.qos, end.Sub(rs.first)-rs.untimed)
}

func (m *metrics) failure(err error) {
	m.errCount++
	if len(m.errFirst) < maxErrors {
		m.errFirst = append(m.errFirst, err.Error())
	}
}

func (m *metrics) lagNow() time.Duration { return time.Duration(m.lagLast.Load()) }
