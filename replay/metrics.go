package replay

import (
	"sync"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// maxErrors is how many error messages a result keeps.
const maxErrors = 10

// cellMetrics accumulates one tier x operation x phase.
type cellMetrics struct {
	ops, logical, physical int64
	lat, sched             *hist.Histogram
	inflight               int
	busySince              time.Time
	busy                   time.Duration
}

// metrics are a run's measurements. Object operations are coarse (whole
// objects, at least one block), so one mutex serves them all.
type metrics struct {
	mu       sync.Mutex
	start    time.Time
	cells    [schema.NumTiers][schema.NumOps][schema.NumPhases]*cellMetrics
	lag      *hist.Histogram
	lagLast  time.Duration
	reqAll   *hist.Histogram
	reqQoS   [schema.NumQoS]*hist.Histogram
	reqMet   [schema.NumQoS]int64
	reqCount int64
	timeline []schema.Second
	secLag   []*hist.Histogram
	errCount int64
	errFirst []string
}

// qosTargets are the reference's p95 targets (reference section 3.6), by
// schema.QoS; QoSNone has none.
var qosTargets = [schema.NumQoS]time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 1000 * time.Millisecond}

func newMetrics(cfg *Config, backends [schema.NumTiers]Backend) *metrics {
	m := &metrics{lag: hist.New(), reqAll: hist.New()}
	for q := range m.reqQoS {
		m.reqQoS[q] = hist.New()
	}
	return m
}

func (m *metrics) cell(r *schema.Record) *cellMetrics {
	c := m.cells[r.Tier][r.Op][r.Phase]
	if c == nil {
		c = &cellMetrics{lat: hist.New(), sched: hist.New()}
		m.cells[r.Tier][r.Op][r.Phase] = c
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
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lag.Record(lag)
	m.lagLast = lag
	s := m.second(start)
	if m.secLag[s] == nil {
		m.secLag[s] = hist.New()
	}
	m.secLag[s].Record(lag)
	c := m.cell(&t.row)
	if c.inflight == 0 {
		c.busySince = start
	}
	c.inflight++
}

// end records an operation's completion.
func (m *metrics) end(r *schema.Record, t *task, start, end time.Time, logical, physical int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cell(r)
	c.inflight--
	if c.inflight == 0 {
		c.busy += end.Sub(c.busySince)
	}
	if !ok {
		return
	}
	c.ops++
	c.logical += logical
	c.physical += physical
	c.lat.Record(end.Sub(start))
	c.sched.Record(end.Sub(t.sched))
	s := &m.timeline[m.second(end)]
	switch r.Op {
	case schema.OpRead:
		s.ReadBytes[r.Tier] += logical
	case schema.OpWrite:
		s.WriteBytes[r.Tier] += logical
	}
	s.Ops[r.Tier]++
}

// request records a finished request's storage latency: from its first
// row's scheduled time to its last row's completion.
func (m *metrics) request(rs *reqState, end time.Time) {
	d := end.Sub(rs.first)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqCount++
	m.reqAll.Record(d)
	m.reqQoS[rs.qos].Record(d)
	if target := qosTargets[rs.qos]; target > 0 && d <= target {
		m.reqMet[rs.qos]++
	}
}

func (m *metrics) failure(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errCount++
	if len(m.errFirst) < maxErrors {
		m.errFirst = append(m.errFirst, err.Error())
	}
}

func (m *metrics) lagNow() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lagLast
}
