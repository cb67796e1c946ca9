package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/datagen"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Run replays srcs onto the backends (by name, as cfg.TierMap names them)
// and returns the result document. A run stopped early (ctx cancelled, an
// I/O error, a full disk) still returns its partial result, marked
// incomplete, together with the error that stopped it; so does one
// stopped before its clock started, while it started its I/O engines,
// wrote its cold objects or waited to start (Hooks.Ready), with nothing
// measured (Unclocked). A tier map that names a backend not given returns
// a nil result.
func Run(ctx context.Context, cfg *Config, plan *Plan, srcs []Source, backends map[string]backend.Backend, hooks Hooks) (*schema.Result, error) {
	s := newSched(cfg, plan, srcs, hooks)
	if err := s.setBackends(backends); err != nil {
		return nil, err
	}
	if err := s.startEngines(); err != nil {
		return s.unclocked("starting the I/O engines", err), s.err
	}
	stopAll := s.startMeta()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.ctx = runCtx
	if err := s.writeCold(); err != nil {
		stopAll()
		return s.unclocked("writing "+s.coldWhat(), err), s.err
	}
	rr := newRowReader(s.srcs)
	rr.shard = newSharder(cfg, len(s.srcs))
	if !cfg.ClosedLoop {
		// Rows are released in the order read: the split warning counts
		// the requests released, not those read ahead.
		rr.shard.trackReleased()
	}
	rr.notify = s.wake
	readCtx, stopReading := context.WithCancel(runCtx)
	defer stopReading()
	stopRows := func() {
		stopReading()
		for b := range rr.out {
			rr.recycle(b)
		}
	}
	var rest *batch // the measured run's first rows, read by the setup
	if s.setupAt > 0 {
		// The setup rows run before Ready: ranks start their measured
		// runs together, each with its own setup done.
		go rr.run(readCtx)
		var err error
		if rest, err = s.runSetup(rr); err != nil {
			stopRows()
			stopAll()
			return s.unclocked(s.setupWhat(), err), s.err
		}
	}
	if hooks.Ready != nil {
		if err := hooks.Ready(); err != nil {
			if s.setupAt > 0 {
				stopRows()
			}
			stopAll()
			return s.unclocked("waiting to start", err), s.err
		}
	}
	if s.setupAt == 0 {
		go rr.run(readCtx)
	}
	if s.hooks.Clock == nil {
		// The wall clock's readings count from its start (clock.go):
		// made again here, after the cold objects and Ready's wait,
		// Started is the wall clock's time.
		s.clock = newWallClock()
	}
	stopProgress := s.progressLoop()
	s.start = s.clock.Now()
	s.metrics.start = s.start
	s.rel = s.releaser(rr)
	if rest != nil {
		s.rel.absorb(rest)
	}
	s.loop(rr)
	wall := since(s.clock, s.start)
	s.rel.countRest()
	stopRows()
	stopProgress()
	stopAll()
	s.endRows(rr)
	if errors.Is(s.err, ErrUnmappedTier) && s.rowsDone.Load() == 0 {
		return nil, s.err // nothing ran: a usage error, not a result
	}
	if w := s.unreached(); w != "" {
		s.warnings = append(s.warnings, w)
	}
	res := s.result(wall)
	return res, s.err
}

// startMeta starts the metadata pool and returns what stops the run's
// workers: the I/O engines first (Close waits for their last blocks; a
// failure leaves those not known done, and the run incomplete), then the
// pool.
func (s *sched) startMeta() (stopAll func()) {
	var metaWG sync.WaitGroup
	// A running task has at most one metadata call in flight: buffers of
	// Workers calls never block the loop, nor a pool goroutine on its way
	// back to it.
	s.metaq, s.metaDone = make(chan *task, s.cfg.Workers), make(chan *task, s.cfg.Workers)
	for range s.metaWorkers() {
		metaWG.Add(1)
		go s.metaPool(&metaWG)
	}
	return func() {
		for _, e := range s.engines {
			if err := e.e.Close(); err != nil {
				s.fail(fmt.Errorf("replay: closing the %s engine: %w", e.e.Name(), err))
			}
		}
		close(s.metaq)
		metaWG.Wait()
	}
}

// newSched is a run of srcs, its backends not yet set.
func newSched(cfg *Config, plan *Plan, srcs []Source, hooks Hooks) *sched {
	srcs = bounded(cfg, srcs)
	if plan != nil && plan.Scanned && len(plan.Traces) == len(srcs) {
		// The prescan hashed each trace for its identity, which the result
		// takes from the plan: the replay reads them without hashing again.
		srcs = slices.Clone(srcs)
		for i := range srcs {
			if srcs[i].Open != nil {
				srcs[i].Stored = nil
			}
		}
	}
	s := &sched{cfg: cfg, srcs: srcs, plan: plan, hooks: hooks,
		reqs: map[reqID]*reqState{}, rel: noRows{},
		data: &blockData{gen: datagen.New(dataSeed(cfg)), verify: cfg.Verify}, metrics: newMetrics(),
		kick: make(chan struct{}, 1), clock: hooks.Clock}
	if s.clock == nil {
		s.clock = newWallClock()
	}
	s.metrics.reqs.SetSLO(cfg.SLO)
	s.setupAt, _ = setupFrom(srcs)
	s.hasWorkF = s.hasWork // one func value, not one per Wait
	s.allocLimit = allocLimit(cfg, srcs)
	return s
}

// writeCold writes the plan's cold objects, untimed, before the clock
// starts; those prepared for a --users sample (ColdObject.LeftOut) only
// on the backends that hold them (leftOutFits). They are released as rows
// are, while the window has room (coldRows).
func (s *sched) writeCold() error {
	if s.plan == nil {
		return nil
	}
	s.rel = &coldRows{s: s, fits: s.leftOutFits()}
	s.loop(nil)
	s.rel = noRows{}
	// Its evictions were made before the clock: not the measured run's.
	s.counted.coldEvictions, s.counted.evictions = s.counted.evictions, 0
	return s.err
}

// coldRows releases the plan's cold objects (writeCold) in its order,
// while the window has room (sched.room), as rows are released: all
// dispatched at once, a trace's n cold objects took n tasks at once, which
// the tasks' free list then kept for the whole run (about 480 bytes per
// cold object: 234 MiB for 500,000).
type coldRows struct {
	noRows
	s    *sched
	fits func(b *tierBackend, demoted bool) bool
	sent int // the first of plan.Cold not released
}

func (c *coldRows) release(time.Time) {
	s, cold := c.s, c.s.plan.Cold
	for c.sent < len(cold) && s.room() {
		o := cold[c.sent]
		c.sent++
		b := s.tiers[o.Tier]
		if b == nil || (o.LeftOut && !c.fits(b, o.Demoted)) {
			continue // unmapped (Run stops on it), or made when first read
		}
		s.dispatchCold(o)
	}
}

// next is when its next object is due: now, while it holds one.
func (c *coldRows) next() time.Time {
	if c.drained() {
		return time.Time{}
	}
	return c.s.clock.Now()
}

func (c *coldRows) drained() bool { return c.sent >= len(c.s.plan.Cold) }
func (c *coldRows) stop()         { c.sent = len(c.s.plan.Cold) }

// coldWhat names what writeCold writes, for the error that stops it: the
// trace's cold objects, and those that users left out wrote where a
// --users sample has them.
func (s *sched) coldWhat() string {
	for _, c := range s.plan.Cold {
		if c.LeftOut {
			return "the trace's cold objects and those that users left out wrote"
		}
	}
	return "the trace's cold objects"
}

// Unclocked is the result of a replay of srcs with cfg and plan that err
// stopped before Run could start it, while it was doing what (making its
// tiers: a full disk or an I/O error preallocating a file, ctx's end): as
// Run's result of a run stopped before its clock (unclocked), marked
// incomplete, the reason naming the phase, nothing measured, so that a
// launcher finds a failed run where it looks for its result. The caller
// adds the host, command line and configuration, as to Run's. The error
// returned is err, named so, as Run's would be.
func Unclocked(cfg *Config, plan *Plan, srcs []Source, what string, err error) (*schema.Result, error) {
	s := newSched(cfg, plan, srcs, Hooks{})
	return s.unclocked(what, err), s.err
}

// unclocked is the result of a run that err stopped before its clock
// started, while it was doing what (starting its engines, writing its
// cold objects, waiting to start): marked incomplete, the reason naming
// the phase, with no measured window (it starts and ends when the run
// stopped) and so nothing measured in it: no cell, request or timeline
// second; the failed operations are counted in its errors, as a run's
// are. A launcher or a results pipeline then finds a failed run where it
// looks for one, not a missing file.
func (s *sched) unclocked(what string, err error) *schema.Result {
	s.err = fmt.Errorf("replay: before the clock: %s: %w", what, trimPrefix(err, "replay: "))
	s.start = s.clock.Now()
	s.metrics.start = s.start
	return s.result(0)
}

// trimPrefix is err without prefix at the start of its message (a
// package's, where err is wrapped again by the same package), still
// wrapping err for errors.Is and errors.As.
func trimPrefix(err error, prefix string) error {
	msg, ok := strings.CutPrefix(err.Error(), prefix)
	if !ok {
		return err
	}
	return &prefixed{msg: msg, err: err}
}

// prefixed is an error whose message is its wrapped error's without a
// prefix.
type prefixed struct {
	msg string
	err error
}

func (p *prefixed) Error() string { return p.msg }
func (p *prefixed) Unwrap() error { return p.err }

// leftOutFits returns whether a backend holds the objects prepared for a
// --users sample written before the clock beside what the trace keeps
// live: those a replayed row reads first (Plan.PeakSample, which any
// backend that is not bounded holds), and those a demotion reads first
// (ColdObject.Demoted: Plan.PeakLeftOut, which only a bounded backend is
// known to hold, as Peak, which sizes the tiers and --dir's space, leaves
// them out). A bounded backend that does not would evict them, or what
// the trace needs, to make room, and write them again inside the
// measured window. There they are made when first read, untimed, as a
// replay of the sample would without them, and a warning says how many
// and how much on a bounded backend (the result's on any).
func (s *sched) leftOutFits() func(b *tierBackend, demoted bool) bool {
	fits := func(b *tierBackend, demoted bool) bool {
		if b.limit == unbounded {
			return !demoted
		}
		if demoted {
			return s.plan.PeakLeftOut[b.name] <= b.limit
		}
		return s.plan.PeakSample[b.name] <= b.limit
	}
	var n, bytes int64
	var short []*tierBackend
	read := map[*tierBackend]bool{} // a backend short of an object a replayed row reads first
	for _, c := range s.plan.Cold {
		if b := s.tiers[c.Tier]; c.LeftOut && b != nil && b.limit != unbounded && !fits(b, c.Demoted) {
			n++
			bytes += c.Logical
			if !slices.Contains(short, b) {
				short = append(short, b)
			}
			read[b] = read[b] || !c.Demoted
		}
	}
	if n > 0 {
		var held []string
		for _, b := range short {
			// The peak that decided: PeakSample where an object a
			// replayed row reads first did not fit (a demotion's then
			// did not either: PeakLeftOut is at least PeakSample), else
			// PeakLeftOut.
			peak := s.plan.PeakLeftOut[b.name]
			if read[b] {
				peak = s.plan.PeakSample[b.name]
			}
			held = append(held, fmt.Sprintf("%s holds %s, less than the %s the trace keeps live with them",
				b.name, cli.FormatBytes(b.limit), cli.FormatBytes(peak)))
		}
		s.warnings = append(s.warnings, fmt.Sprintf("--users %d: %d objects (%s) that users left out wrote and the replayed users read were written untimed when first read, "+
			"inside the measured window, beside the timed operations, not before the clock (%s): raise --ram-budget or --capacity, or lower --size-scale",
			s.cfg.Users, n, FormatData(bytes), strings.Join(held, "; ")))
	}
	return fits
}

// endRows records what the reader found once the rows are done, and
// completes the requests the traces did not close.
func (s *sched) endRows(rr *rowReader) {
	s.infos = rr.infos
	if w := rr.shard.splitWarning(); w != "" {
		s.warnings = append(s.warnings, w)
	}
	if s.err == nil {
		// A trace cut short at a line boundary reads as a shorter trace:
		// only its sidecar's count tells.
		s.err = shortTraces(s.srcs, s.infos)
	}
	s.warnings = append(s.warnings, uncheckedEnds(s.srcs, s.infos)...)
	for id, rs := range s.reqs {
		// A request the trace did not close (it ended, or the run
		// stopped): complete when all its rows read are.
		if rs.pending == 0 && !rs.lastDone.IsZero() {
			s.requestDone(rs, rs.lastDone)
		}
		delete(s.reqs, id)
	}
	s.lastReq = nil
}

// unreached says which traces the --duration window reached no row of
// (Plan.TraceRows): the traces replay merged by time, paced from the
// first row of them all, so a trace that starts later than another by
// more than the window has none in it, and a result that leaves it
// unsaid reads as a replay of every trace given. "" when there is none.
func (s *sched) unreached() string {
	p := s.plan
	if p == nil || !p.Scanned || p.Window <= 0 || len(p.TraceRows) != len(s.srcs) {
		return ""
	}
	var names []string
	for i, r := range p.TraceRows {
		if r.Replayed > 0 && r.Window == 0 {
			names = append(names, s.srcs[i].Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	its := "its rows come"
	if len(names) > 1 {
		its = "their rows come"
	}
	// A window is only at a pace (WindowOf): Speed is above 0.
	return fmt.Sprintf("--duration %v at --speed %g reached no row of %s: the traces replay merged by time, from the first row of them all, and %s after the window's %v of trace time (kvreplay --plan says what the window reaches)",
		s.cfg.Duration, s.cfg.Speed, strings.Join(names, ", "), its, p.Window)
}

// releaser is the run's releaser of rows: the closed loop's or the open
// loop's, paced from s.start.
func (s *sched) releaser(rr *rowReader) releaser {
	p := &pace{start: s.start, speed: s.cfg.speedDuration}
	if s.setupAt > 0 {
		// Paced from where the trace's measured window starts, on every
		// rank: the rows before it ran as setup.
		p.haveT0, p.t0 = true, s.setupAt
	}
	if !s.cfg.ClosedLoop {
		o := newOpenLoop(s, rr, p, s.cfg.Speed, len(s.srcs))
		o.done = s.ctx.Done()
		return o
	}
	names := make([]string, len(s.srcs))
	for i, src := range s.srcs {
		names[i] = src.Name
	}
	if s.cfg.Speed > 0 {
		// Its rows of no user are due at their trace times: their lag is
		// kept apart from its users' (ClosedLoopStats.ScheduledLag).
		s.metrics.onTimeLag = results.NewLatency()
	}
	return newClosedLoop(closedInputs{in: s, rr: rr, pace: p, speed: s.cfg.speedDuration, names: names,
		userLimit: s.cfg.Users, plan: s.plan, window: s.cfg.Duration, paced: s.cfg.Speed > 0, done: s.ctx.Done()})
}

// closeEngines closes the engines started so far.
func (s *sched) closeEngines() {
	for _, e := range s.engines {
		e.e.Close()
	}
	s.engines = nil
}

// keysHint sizes the key table from the prescan: growing a table of
// hundreds of thousands of keys rehashes them on the loop while it
// replays. Bounded: a trace of many short-lived keys holds few at once.
// A trace nothing counted (a pipe) gets a table of 256 Ki keys, about
// 7 MiB: grown from nothing, the table of a pipe's 837 k objects cost its
// replay a tenth of its rows/s.
func keysHint(plan *Plan) int {
	if plan == nil || !plan.Scanned {
		return 1 << 18
	}
	return int(min(plan.Objects, 1<<20))
}

// setBackends numbers the run's backends and gives each its space: the
// backend's own capacity, and --capacity for Tier-2's.
func (s *sched) setBackends(backends map[string]backend.Backend) error {
	tierB, names := backendIndex(s.cfg)
	aligns, limits := make([]int64, len(names)), make([]int64, len(names))
	for i, name := range names {
		b, ok := backends[name]
		if !ok {
			used := false
			for t := range schema.Tier(schema.NumTiers) {
				if tierB[t] == int8(i) && (s.plan == nil || !s.plan.Scanned || s.plan.Used[t]) {
					used = true
				}
			}
			if used {
				return fmt.Errorf("replay: --tier-map %s: no such backend", name)
			}
			b = nil
		}
		tb := &tierBackend{idx: int8(i), name: name, b: b, align: planAlign, limit: unbounded}
		if b != nil {
			tb.caps = b.Caps()
			tb.align = max(planAlign, int64(tb.caps.Align))
			if tb.caps.Capacity > 0 {
				tb.limit = tb.caps.Capacity
				// Sized without the trace's peak (reserve.go).
				tb.followPeak = s.plan == nil || !s.plan.Scanned
			}
		}
		if s.cfg.Capacity > 0 && s.cfg.TierMap[schema.TierNVMe] == name {
			tb.limit = min(tb.limit, s.cfg.Capacity)
		}
		aligns[i], limits[i] = tb.align, tb.limit
		s.backends = append(s.backends, tb)
	}
	for t := range schema.Tier(schema.NumTiers) {
		i := tierB[t]
		if i < 0 || s.backends[i].b == nil {
			tierB[t] = -1
			if s.plan != nil && s.plan.Used[t] {
				return unmapped(t, s.plan.UsedRows[t])
			}
			continue
		}
		s.tiers[t] = s.backends[i]
	}
	s.model = newModel(tierB, aligns, limits)
	return nil
}

// startEngines starts the I/O engines: the hooks' movers, for the moves
// they take; the engine cfg.Engine names, when it is a Shared one (one
// io_uring for the objects in files) and the machine offers it; and a
// Pooled engine (cfg.Engine's when it is one, else ioengine.Fallback) for
// each backend that keeps data, so that a slow device (a throttled disk
// served by psync) never holds another's blocks (the RAM arena's copies)
// behind its own: each tier's latency and device rate are its own.
func (s *sched) startEngines() error {
	var data []*tierBackend
	for _, b := range s.backends {
		if b.b != nil && !b.caps.NoData {
			data = append(data, b)
		}
	}
	movers := s.hooks.Movers
	if len(data) == 0 {
		return nil // no backend keeps bytes: no engine is needed
	}
	info, ok := ioengine.Lookup(s.cfg.Engine)
	if !ok {
		return fmt.Errorf("replay: --engine %s: %w", s.cfg.Engine, ioengine.Check(s.cfg.Engine))
	}
	pooled := ioengine.Fallback
	if info.Kind == ioengine.Pooled {
		pooled = info.Name
	}
	// Each engine holds a queue's depth of blocks in flight and as many
	// again waiting to start: the device never waits on the loop.
	queue := 2 * s.cfg.QueueDepth
	n := len(movers) + len(data)
	if info.Kind == ioengine.Shared {
		n++
	}
	s.done = make(chan *ioengine.Op, n*queue)
	params := ioengine.Params{Depth: s.cfg.QueueDepth, Queue: queue, BlockSize: s.cfg.BlockSize, Data: s.data, Done: s.done, Notify: s.wake}
	add := func(f ioengine.Factory, only *tierBackend) error {
		e, err := f(params)
		if err != nil {
			return err
		}
		if p, ok := e.(ioengine.Poller); ok && s.poller == nil {
			s.poller = p
		}
		s.engines = append(s.engines, &engineSlot{e: e, depth: queue, only: only})
		return nil
	}
	for _, f := range movers {
		if err := add(f, nil); err != nil {
			s.closeEngines()
			return err
		}
	}
	if info.Kind == ioengine.Shared {
		err := add(func(p ioengine.Params) (ioengine.Engine, error) { return ioengine.New(info.Name, p) }, nil)
		switch {
		case errors.Is(err, ioengine.ErrUnavailable):
			s.warnings = append(s.warnings, fmt.Sprintf("the %s engine is not available here (%v): the %s engine ran instead", info.Name, err, pooled))
		case err != nil:
			s.closeEngines()
			return err
		}
	}
	for _, b := range data {
		if err := add(func(p ioengine.Params) (ioengine.Engine, error) { return ioengine.New(pooled, p) }, b); err != nil {
			s.closeEngines()
			return err
		}
	}
	return nil
}

// engineName is what the result reports: the engine of files, the first
// engine that is not a mover (a mover comes first, and serves its own
// tier's objects at most) and was given blocks; a mover's where only a
// mover was (a replay of a gpu tier alone: devcopy); else the first that
// is not a mover.
func (s *sched) engineName() string {
	var first, mover string
	for _, e := range s.engines {
		_, isMover := e.e.(ioengine.Mover)
		switch {
		case !isMover && e.used:
			return e.e.Name()
		case isMover && e.used && mover == "":
			mover = e.e.Name()
		case !isMover && first == "":
			first = e.e.Name()
		}
	}
	switch {
	case mover != "":
		return mover
	case first != "":
		return first
	}
	return "none"
}

func (s *sched) progressLoop() func() {
	if s.hooks.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.hooks.Progress(Progress{Elapsed: since(s.clock, s.start), Rows: s.rows.Load(),
					RowsDone: s.rowsDone.Load(), Bytes: s.bytesDone.Load(), Lag: s.metrics.lagNow()})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
