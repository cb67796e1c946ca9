package replay

import (
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/results"
	"github.com/kvbench/kvbench/schema"
)

// maxErrors is how many error messages a result keeps.
const maxErrors = 10

// cellMetrics is one tier x operation x phase: the shared aggregate, and
// the operations in flight for its busy time.
type cellMetrics struct {
	*results.Cell
	inflight  int
	busySince time.Time
}

// metrics are a run's measurements, owned by the scheduler's loop. The
// aggregates are internal/results', the ones kvreport merges.
type metrics struct {
	start    time.Time
	cells    [schema.NumTiers][schema.NumOps][schema.NumPhases]*cellMetrics
	lag      *results.Latency
	lagLast  atomic.Int64 // for the progress line, from another goroutine
	reqs     *results.Requests
	timeline []schema.Second
	secLag   []*results.Latency
	errCount int64
	errFirst []string
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
	m.lagLast.Store(int64(lag))
	s := m.second(start)
	if m.secLag[s] == nil {
		m.secLag[s] = results.NewLatency()
	}
	m.secLag[s].Add(lag)
	c := m.cell(t)
	if c.inflight == 0 {
		c.busySince = start
	}
	c.inflight++
}

// end records an operation's completion.
func (m *metrics) end(t *task, start, end time.Time, ok bool) {
	c := m.cell(t)
	c.inflight--
	if c.inflight == 0 {
		c.Busy += end.Sub(c.busySince)
	}
	if !ok {
		return
	}
	c.Add(end.Sub(start), end.Sub(t.sched), t.logical, t.phys)
	s := &m.timeline[m.second(end)]
	switch t.op {
	case schema.OpRead:
		s.ReadBytes[t.tier] += t.logical
	case schema.OpWrite:
		s.WriteBytes[t.tier] += t.logical
	}
	s.Ops[t.tier]++
}

// request records a finished request's storage latency: from its first
// row's scheduled time to its last row's completion.
func (m *metrics) request(rs *reqState, end time.Time) { m.reqs.Add(rs.qos, end.Sub(rs.first)) }

func (m *metrics) failure(err error) {
	m.errCount++
	if len(m.errFirst) < maxErrors {
		m.errFirst = append(m.errFirst, err.Error())
	}
}

func (m *metrics) lagNow() time.Duration { return time.Duration(m.lagLast.Load()) }
