package replay

import (
	"fmt"
	"math"
	"time"
)

// Setup rows: a kvtrace trace's rows before its sidecar's MeasuredFrom
// are its pre-run phase (--precondition's objects, --decode-only's
// pre-population), which the reference runs untimed before its timed run
// and whose statistics it then resets. The replay runs them the same way,
// after the cold objects and before the clock starts: in trace order with
// their dependencies, as fast as ordering and concurrency allow, counted
// in no figure but setup_rows and setup_capacity_evictions (their errors
// still count and stop the run; see resetSetupCounts). The measured run
// is then paced from MeasuredFrom, and --duration's window counts from
// it.

// setupFrom returns where the measured run starts in srcs' trace time:
// their sidecars' MeasuredFrom when every trace has a sidecar with one
// above 0 (the earliest where they differ: no measured row of any trace
// is run as setup); ok is false otherwise (a pipe, a reference trace),
// and every row is measured, as it always was.
func setupFrom(srcs []Source) (from time.Duration, ok bool) {
	if len(srcs) == 0 {
		return 0, false
	}
	from = time.Duration(math.MaxInt64)
	for _, s := range srcs {
		if s.Meta == nil || !(s.Meta.MeasuredFrom > 0) || s.Meta.MeasuredFrom >= math.MaxInt64/float64(time.Second) {
			return 0, false
		}
		from = min(from, time.Duration(math.Round(s.Meta.MeasuredFrom*float64(time.Second))))
	}
	return from, from > 0
}

// runSetup runs the rows before s.setupAt (setupFrom) from rr, untimed,
// before the clock starts. It returns the rest of the batch it stopped
// in, the measured run's first rows (nil when the batch ended there), and
// the error that stopped the run.
func (s *sched) runSetup(rr *rowReader) (*batch, error) {
	o := newOpenLoop(s, rr, &pace{start: s.clock.Now(), speed: s.cfg.speedDuration}, 0, len(s.srcs))
	o.until = s.setupAt
	s.rel, s.setupRel, s.inSetup = o, o, true
	s.loop(rr)
	// The setup's requests end with it.
	for src, id := range o.lastReq {
		if id != 0 {
			s.closeRequest(reqID{src, id})
		}
	}
	s.rel, s.setupRel, s.inSetup = noRows{}, nil, false
	s.resetSetupCounts()
	if s.err != nil {
		return nil, s.err
	}
	rest := o.cur
	if rest == nil || !o.reached {
		return nil, nil
	}
	rest.recs, rest.src, rest.seq = rest.recs[o.pos:], rest.src[o.pos:], rest.seq+int64(o.pos)
	rest.hasOrigin = false // the pace's origin is setupAt
	return rest, nil
}

// resetSetupCounts leaves what the setup did out of the measured run's
// counts, as the reference resets its statistics after its setup: its
// capacity evictions (kept apart, as setupEvictions), rematerialised
// reads, syncs, reads of another tier, objects first written when read,
// and bytes verified. Its errors stay counted (they stop the run), and so
// do the cold objects it wrote (cold_prepared: every object written
// untimed).
func (s *sched) resetSetupCounts() {
	c := &s.counted
	c.setupEvictions, c.evictions = c.evictions, 0
	c.remat, c.syncs, c.mismatch, c.coldLate, c.coldLateBytes = 0, 0, 0, 0, 0
	s.data.verified.Store(0)
}

// setupWhat names the setup phase, for the error that stops it.
func (s *sched) setupWhat() string {
	return fmt.Sprintf("running the trace's setup rows (before its sidecar's measured_from_s %.6f s)", s.setupAt.Seconds())
}
