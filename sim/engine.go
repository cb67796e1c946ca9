package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/internal/freelist"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim/reqtrace"
)

// Sink receives every trace row the simulation emits, in order. It must not
// keep rec or rec.Key after it returns, nor modify them. A one-method sink is a func, so a
// trace.Writer's Write method is a Sink.
type Sink func(rec *schema.Record) error

// The request phases of the reference (InferencePhase).
type phase uint8

const (
	phasePrefill       phase = iota // context >= 10,000 tokens: no decode reads
	phasePrefillDecode              // the usual request
	phaseDecode                     // RAG requests: read the context, write it on a miss
)

// prefillOnlyTokens is the reference's threshold: requests with at least
// this many context tokens are prefill-only (no decode reads).
const prefillOnlyTokens = 10000

// systemPromptWords are the token counts of the reference's three system
// prompts ("You are a helpful assistant." etc.).
var systemPromptWords = [3]int{5, 9, 6}

// request is one inference request.
//
// A request trace offered faster than the workers serve it piles its
// requests up in the queue (unbounded, as the reference's is), so a
// queued request is kept small: 128 bytes with its ids packed, its
// priority and queue order in its queue entry alone, and a trace
// request's user and key strings built when it is served (named).
type request struct {
	id      uint64 // the trace's Request value (the reference's counter + 1)
	userID  string
	user    uint64 // the trace's User: the user's index + 1; 0 for none
	context int
	gen     int
	key     string
	conv    *conversation
	turn    int
	// blocks marks a block-level request (a Mooncake-style trace's):
	// ids are its prefix blocks' hash ids (packIDs), of blockTokens
	// tokens each, or its context apportioned over them when blockTokens
	// is 0. ids keeps its array when the request is reused (engine.free).
	ids         []byte
	blockTokens int
	submit      time.Duration
	qos         uint8
	phase       phase
	blocks      bool
	// naming says how named builds userID and key (nameTrace,
	// nameDataset), traceUser is the trace user's number for nameTrace.
	naming    uint8
	traceUser uint16
}

// How named names a trace's request when it is served.
const (
	nameDone    = iota // userID and key are set
	nameTrace          // trace_user_<traceUser>, key <userID>_req_<id - 1>
	nameDataset        // dataset_user_<(id - 1) % --num-users>
)

// named builds the user and key strings of a trace's request, which
// arrival leaves unbuilt: a queued request would hold them for nothing.
// They are what arrival built before, from the same numbers.
func (e *engine) named(r *request) {
	id := r.id - 1
	switch r.naming {
	case nameTrace:
		r.userID = "trace_user_" + strconv.Itoa(int(r.traceUser))
		r.key = fmt.Sprintf("%s_req_%04d", r.userID, id)
	case nameDataset:
		r.userID = "dataset_user_" + strconv.FormatUint(id%uint64(max(1, e.cfg.NumUsers)), 10)
	}
	r.naming = nameDone
}

// packIDs appends ids to dst as varints of their steps from the one
// before (the first from 0): a Mooncake request's ids mostly count up by
// one, a byte each instead of eight.
func packIDs(dst []byte, ids []int64) []byte {
	prev := int64(0)
	for _, id := range ids {
		dst = binary.AppendVarint(dst, id-prev)
		prev = id
	}
	return dst
}

// unpackIDs appends the ids packIDs packed into p to dst.
func unpackIDs(dst []int64, p []byte) []int64 {
	prev := int64(0)
	for len(p) > 0 {
		d, n := binary.Varint(p)
		prev += d
		dst = append(dst, prev)
		p = p[n:]
	}
	return dst
}

// countIDs is the number of ids packed into p: its varints' last bytes.
func countIDs(p []byte) int {
	n := 0
	for _, b := range p {
		if b < 0x80 {
			n++
		}
	}
	return n
}

// conversation is a multi-turn conversation's state: the reference's
// ConversationManager entry, which registers a turn's key when the turn is
// generated (its object is written only when a worker processes it).
type conversation struct {
	id    string
	turns []keyRef // the object key of each turn, turn 1 first
	// forgotten is set when the bounded registry drops the state: its
	// queued turns then reload no history, as in the reference.
	forgotten bool
	// prev and next link the registry, least recently turned first.
	prev, next *conversation
}

// conversations is the registry of conversation states, bounded at
// Config.ConversationStates: starting a conversation beyond the bound
// forgets the least recently turned (started or given a turn), as the
// reference's ConversationManager does. Virtual time only moves forward,
// so the order of turns is the order of their times.
type conversations struct {
	head, tail *conversation // least and most recently turned
	n, max     int
	forgotten  int64
}

// start registers c, forgetting the least recently turned state first when
// the registry is full.
func (r *conversations) start(c *conversation) {
	if r.max > 0 && r.n >= r.max && r.head != nil {
		old := r.head
		r.unlink(old)
		old.forgotten = true
		r.forgotten++
	}
	r.push(c)
}

// touch makes c the most recently turned.
func (r *conversations) touch(c *conversation) {
	if r.tail != c {
		r.unlink(c)
		r.push(c)
	}
}

func (r *conversations) push(c *conversation) {
	c.prev, c.next = r.tail, nil
	if r.tail != nil {
		r.tail.next = c
	} else {
		r.head = c
	}
	r.tail = c
	r.n++
}

func (r *conversations) unlink(c *conversation) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		r.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		r.tail = c.prev
	}
	c.prev, c.next = nil, nil
	r.n--
}

// user is a synthetic user (reference section 3.1).
type user struct {
	id  string
	num uint64 // the trace's User value

	template int
	context  int
	gen      int
	think    float64
	qos      int
	conv     *conversation
	convSeq  int
	// convMS is the epoch millisecond of the user's last conversation id
	// in the mlperf key style (conversationID).
	convMS int64
}

// event kinds.
const (
	evUser = iota
	evDone
	evArrival
	evOpen    // the next request of an open arrival process (Config.Arrival)
	evMonitor // the reference's autoscaler samples (Config.EnableAutoscaling)
)

type event struct {
	at   time.Duration
	seq  uint64
	kind uint8
	user *user
	req  *request
}

// eventHeap orders events by time, then by seq (the order they were
// pushed in).
type eventHeap = binHeap[event, *event]

func (e *event) before(o *event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// queue is the reference's PriorityQueue: highest priority first, FIFO
// within a priority.
type queue = binHeap[queued, *queued]

// queued is a request in the queue, with its order.
type queued struct {
	priority int
	seq      uint64
	r        *request
}

func (q *queued) before(o *queued) bool {
	if q.priority != o.priority {
		return q.priority > o.priority
	}
	return q.seq < o.seq
}

// binHeap is a binary min-heap of T ordered by before, a strict total
// order: container/heap's algorithm without its interface calls and the
// allocation of boxing every element it pops.
type binHeap[T any, P interface {
	*T
	before(*T) bool
}] struct{ s []T }

func (h *binHeap[T, P]) Len() int { return len(h.s) }

func (h *binHeap[T, P]) push(x T) {
	h.s = append(h.s, x)
	s := h.s
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !P(&s[i]).before(&s[p]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// pop removes and returns the least element; the heap must not be empty.
func (h *binHeap[T, P]) pop() T {
	s := h.s
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	var zero T
	s[n] = zero
	h.s = s[:n]
	h.down(0)
	return top
}

// down moves element i down to its place.
func (h *binHeap[T, P]) down(i int) {
	s := h.s
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && P(&s[r]).before(&s[l]) {
			m = r
		}
		if !P(&s[m]).before(&s[i]) {
			return
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// engine is one simulation run.
type engine struct {
	ctx      context.Context
	cfg      *Config
	model    Model
	bpt      int64
	rng      *pyRand
	sink     Sink
	progress Progress
	cache    *cache
	rec      schema.Record

	now      time.Duration
	start    time.Duration // where the measured window starts
	end      time.Duration
	events   eventHeap
	eventSeq uint64
	queue    queue
	queueSeq uint64
	idle     int
	workers  int
	stopped  bool

	spt        float64 // generation seconds per token
	reqCounter uint64  // the reference's request_counter
	cur        *request
	free       freelist.List[request] // completed requests, for newRequest
	blockKeys  []string               // processBlocks' buffer
	blockIDs   []int64                // processBlocks' request's hash ids, unpacked
	packed     []byte                 // traceGen.next's hash ids, packed

	users    []*user
	convs    conversations
	rag      *ragManager
	prepop   []string
	gen      generator
	genZero  bool // the generator has no pacing of its own: bound the queue
	genBlock bool // a zero-spacing generator waits for queue room
	genIndex int
	// open is the arrival process of synthetic users' requests under
	// Config.Arrival: users take turns (openNext) instead of thinking.
	open      *arrivals
	openNext  int
	pending   *request
	pendingAt time.Duration
	// stopAfterDispatch ends the run once the current time's requests are
	// dispatched (a trace's last replay cycle is done).
	stopAfterDispatch bool
	// scaler is the reference's autoscaler, under --enable-autoscaling.
	scaler *autoscaler

	tierOps [schema.NumTiers][schema.NumOps]int64 // bytes by tier and operation, every row
	notes   []string
	// warnings are the notes a user must see (a tool prints them on
	// stderr); each is in notes too.
	warnings []string
	// departures are the notes that say where the run met one of
	// kvtrace's deliberate departures from kv-cache.py (depart), each
	// once; each is in notes too.
	departures []string
	departed   map[string]bool

	res   *Result
	rows  int64
	stats runStats
	// onDone is Hooks.Completed; doneErr its first error, which stops
	// the run.
	onDone  func(*Completion) error
	doneErr error
	done    Completion
}

// chunked is an append-only list kept in chunks: it grows without
// copying, or leaving behind, what it holds.
type chunked[T any] struct {
	full [][]T
	cur  []T
	n    int
}

func (c *chunked[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, 8192)
	}
	c.cur = append(c.cur, v)
	c.n++
}

// slice returns the list in a new slice.
func (c *chunked[T]) slice() []T {
	s := make([]T, 0, c.n)
	for _, f := range c.full {
		s = append(s, f...)
	}
	return append(s, c.cur...)
}

// runStats are the request-level results.
type runStats struct {
	completed       int64
	tokens          int64
	e2e             chunked[float64] // seconds, in the order requests complete
	generation      chunked[float64]
	qos             chunked[uint8]
	multiTurnHits   int64
	multiTurnMisses int64
	prefixHits      int64
	prefixMisses    int64
	systemPrompt    int64
	bytesSaved      int64
	ragRetrievals   int64
	ragChunks       int64
	blockHits       int64
	blockMisses     int64
	// dispatched counts the requests workers took; prefillOnlyRule those
	// of them the 10,000-token rule made prefill-only.
	dispatched      int64
	prefillOnlyRule int64
	inFlight        int64 // generating when the run ended
	// convRestarts counts the users whose conversation the registry
	// forgot while it went on: kv-cache.py's thread dies there.
	convRestarts int64
	// partialBlocks counts the last blocks of block-level requests
	// written whole though the request's input ends inside them;
	// padTokens the tokens that adds, of blockTokensWritten in all.
	partialBlocks, padTokens, blockTokensWritten int64
	// windowCapped counts the trace-driven requests whose generation
	// windowTokens bounded, windowReads the decode reads that left out
	// (at most: a request whose first decode read misses makes none).
	windowCapped, windowReads int64
	// prefillDone and decodeDone count the completed requests that wrote
	// their context and that read it (the reference's prefill_latencies
	// and decode_latencies have one entry each).
	prefillDone, decodeDone int64
}

// Run simulates cfg in virtual time and sends every trace row to sink, in
// time order. It returns the simulation's statistics. cfg must have passed
// Validate. Run is deterministic: the same cfg gives the same rows and
// statistics.
func Run(ctx context.Context, cfg *Config, sink Sink) (*Result, error) {
	return RunWithProgress(ctx, cfg, sink, nil)
}

// Progress is told, every 64Ki rows, how far a run has come: the virtual
// time reached, the time it ends at, and the rows emitted.
type Progress func(now, end time.Duration, rows int64)

// RunWithProgress is Run reporting its progress to progress (which may be
// nil). progress runs on Run's goroutine and must be quick.
func RunWithProgress(ctx context.Context, cfg *Config, sink Sink, progress Progress) (*Result, error) {
	return RunWithHooks(ctx, cfg, sink, Hooks{Progress: progress})
}

// Hooks are what a caller of RunWithHooks is told as the run goes; each
// may be nil, and each runs on Run's goroutine.
type Hooks struct {
	// Progress is told how far the run has come (see Progress).
	Progress Progress
	// Completed is told of each request as it completes; c is valid only
	// during the call. An error stops the run with it.
	Completed func(c *Completion) error
}

// RunWithHooks is Run with Hooks.
func RunWithHooks(ctx context.Context, cfg *Config, sink Sink, hooks Hooks) (*Result, error) {
	e, err := newEngine(ctx, cfg, sink, hooks)
	if err != nil {
		return nil, err
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	return e.result(), nil
}

// newEngine is a run's engine, before it runs.
func newEngine(ctx context.Context, cfg *Config, sink Sink, hooks Hooks) (*engine, error) {
	progress := hooks.Progress
	model, err := lookupModel(cfg.Models, cfg.Model)
	if err != nil {
		return nil, err
	}
	e := &engine{
		ctx:      ctx,
		cfg:      cfg,
		model:    model,
		bpt:      model.BytesPerToken(),
		rng:      newPyRand(cfg.Seed),
		sink:     sink,
		progress: progress,
		spt:      generationSecondsPerToken[cfg.GenerationMode],
		onDone:   hooks.Completed,
	}
	e.cache = newCache(cfg, e.bpt, e.emit)
	return e, nil
}

// emit sends one row at the current virtual time.
func (e *engine) emit(op schema.Op, o *object, tier schema.Tier, ph schema.Phase) error {
	r := &e.rec
	r.Time, r.Op, r.Size, r.Tier, r.Key, r.Phase = e.now, op, o.size, tier, o.keyBytes(), ph
	e.tierOps[tier][op] += o.size
	r.Request, r.QoS, r.User, r.Tokens = 0, schema.QoSNone, 0, 0
	if e.cur != nil {
		r.Request = e.cur.id
		r.QoS = schema.QoS(e.cur.qos + 1)
		r.User = e.cur.user
		r.Tokens = int64(e.cur.gen)
	}
	e.rows++
	if e.rows&0xfff == 0 {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		if e.progress != nil && e.rows&0xffff == 0 {
			e.progress(e.now, e.end, e.rows)
		}
	}
	return e.sink(r)
}

func (e *engine) push(ev event) {
	e.eventSeq++
	ev.seq = e.eventSeq
	e.events.push(ev)
}

func (e *engine) randint(lo, hi int) int { return e.rng.randint(lo, hi) }

func (e *engine) uniform(lo, hi float64) float64 { return e.rng.uniform(lo, hi) }

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// drawQoS draws a QoS level as the reference does for trace-driven requests.
func (e *engine) drawQoS() int {
	r := e.rng.Float64()
	switch {
	case r < e.cfg.QoSDistribution.InteractiveProbability:
		return QoSInteractive
	case r < e.cfg.QoSDistribution.ResponsiveThreshold:
		return QoSResponsive
	}
	return QoSBatch
}

func phaseOf(contextTokens int) phase {
	if contextTokens >= prefillOnlyTokens {
		return phasePrefill
	}
	return phasePrefillDecode
}

func (e *engine) run() error {
	if err := e.preRun(); err != nil {
		return err
	}
	cfg := e.cfg
	e.start = e.now
	e.convs.max = cfg.ConversationStates
	e.end = e.start + cfg.Duration
	e.workers = min(cfg.NumUsers, 500)
	if cfg.Arrival != "" {
		// An open arrival process: each request is taken as it arrives
		// (a server batching whatever is in flight), so the trace's
		// request times are the arrivals. The reference's pool of
		// min(users, 500) workers would queue them behind the generation
		// of earlier ones, and the trace would show its completions.
		e.workers = openWorkers
	}
	e.cache.raceAll, e.cache.raceWindow = false, [schema.NumTiers]time.Duration{}
	if cfg.NVMeAccounting == AccountingReference && e.workers > 1 {
		e.cache.raceWindow[schema.TierCPU], e.cache.raceWindow[schema.TierNVMe] = raceWindowCPU, raceWindowNVMe
	}
	e.idle = e.workers

	if err := e.startWorkload(); err != nil {
		return err
	}
	if cfg.EnableAutoscaling {
		e.scaler = newAutoscaler(cfg)
		e.push(event{at: e.start + autoscaleInterval, kind: evMonitor})
	}
	for n := 0; e.events.Len() > 0 && !e.stopped; n++ {
		if n&0x3ff == 0 {
			// Rows check the context too, but a run can go a long way
			// without a row (requests waiting for workers).
			if err := e.ctx.Err(); err != nil {
				return err
			}
		}
		ev := e.events.pop()
		if ev.at > e.end {
			// Back for drain: a request's end past the run's is a
			// request in flight at the end, not one lost.
			e.push(ev)
			break
		}
		e.now = ev.at
		if err := e.step(ev); err != nil {
			return err
		}
		if err := e.dispatch(); err != nil {
			return err
		}
		if e.stopAfterDispatch {
			e.stopped = true
		}
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	if e.doneErr != nil {
		return e.doneErr
	}
	e.drain()
	return nil
}

// preRun runs the phases before the measured window: preconditioning and
// a decode-only run's pre-population. They take one microsecond of virtual
// time per object, so a replay can tell them from the measured window,
// and the window starts on the next millisecond.
func (e *engine) preRun() error {
	cfg := e.cfg
	if cfg.Precondition {
		// Its threads (one per CPU unless --precondition-threads 1)
		// start together and race at every demotion.
		e.cache.raceAll = cfg.NVMeAccounting == AccountingReference && cfg.PreconditionThreads != 1
		if err := e.precondition(); err != nil {
			return err
		}
	}
	if cfg.DecodeOnly {
		// kv-cache.py pre-populates with one thread per CPU, whatever
		// --precondition-threads says.
		e.cache.raceAll = cfg.NVMeAccounting == AccountingReference
		if err := e.prepopulate(); err != nil {
			return err
		}
	}
	if cfg.Precondition || cfg.DecodeOnly {
		// The reference's reset_stats: the counters start with the
		// measured run; what the pre-run phases put in the tiers stays.
		e.cache.resetStats()
	}
	if e.now > 0 {
		e.now = (e.now/time.Millisecond + 1) * time.Millisecond
	}
	return nil
}

// startWorkload makes the run's request generator, or its users (with an
// open arrival process and RAG ingestion where asked), and pushes the
// first event.
func (e *engine) startWorkload() error {
	cfg := e.cfg
	gen, err := e.newGenerator()
	if err != nil {
		return err
	}
	e.gen = gen
	if gen == nil {
		// The reference draws its users' profiles first, then starts
		// its RAG ingestion thread, and then the users' threads, whose
		// first draw is their first think time: the documents' sizes
		// come before it in the random stream (the first four of its
		// seed-42 RAG trace are the four draws after the profiles).
		e.makeUsers()
		if cfg.EnableRAG {
			e.rag = newRAGManager(e)
			if err := e.rag.ingest(); err != nil {
				return err
			}
		}
		if cfg.Arrival == "" {
			e.wakeUsers()
		} else if len(e.users) > 0 {
			rate, src := cfg.RequestRate, "--request-rate"
			if rate <= 0 {
				rate, src = e.closedLoopRate(), "the users' think times"
			}
			e.open = newArrivals(cfg, rate)
			e.notes = append(e.notes, fmt.Sprintf("arrivals: %s, %.4g requests/s (%s), users in turn, arrival seed %d", e.open.describe(), rate, src, cfg.ArrivalSeed))
			e.push(event{at: e.now + e.open.next(), kind: evOpen})
		}
	} else {
		e.push(event{at: e.now, kind: evArrival})
	}
	if cfg.dynamicsSalt != 0 {
		// Tests draw several samples of a run's dynamics for one user
		// population (the reference's threads make its own dynamics noisy).
		e.rng = newPyRand(cfg.Seed ^ int64(cfg.dynamicsSalt)<<32)
	}
	return nil
}

// step handles one event at e.now.
func (e *engine) step(ev event) error {
	switch ev.kind {
	case evUser:
		return e.userWake(ev.user)
	case evDone:
		e.complete(ev.req)
	case evArrival:
		return e.arrival()
	case evOpen:
		u := e.users[e.openNext%len(e.users)]
		e.openNext++
		e.userRequest(u)
		e.push(event{at: e.now + e.open.next(), kind: evOpen})
	case evMonitor:
		e.monitor()
	}
	return nil
}

// monitor is a sample of the reference's monitor thread: the autoscaler's
// action, which in capacity mode can end the run. Its last sample is the
// last before --duration (the reference's thread stops at a period that
// ends past it).
func (e *engine) monitor() {
	elapsed := e.now - e.start
	if elapsed >= e.cfg.Duration {
		return
	}
	if !e.scaler.sample(elapsed.Seconds(), e.stats.tokens, e.cfg.EpochBase.Add(e.now)) {
		e.push(event{at: e.now + autoscaleInterval, kind: evMonitor})
		return
	}
	e.stopped = true
	e.warn(fmt.Sprintf("--autoscaler-mode capacity: kv-cache.py's autoscaler ended the run at %s s of --duration %s s, its throughput "+
		"not 1 %% over its peak (%.4g tokens/s) at two samples; the trace ends there, as kv-cache.py's does",
		strconv.FormatFloat(elapsed.Seconds(), 'f', -1, 64), strconv.FormatFloat(e.cfg.Duration.Seconds(), 'f', -1, 64), e.scaler.peak))
}

// drain ends the requests still generating when the run stops: their rows
// are in the trace, but they did not complete within the run, so they are
// counted in flight (Extra.RequestsInFlight), not completed. The reference
// counts them completed, its workers finishing them while it joins its
// threads: 3-15 % more completions than the run held in realistic mode.
func (e *engine) drain() {
	for e.events.Len() > 0 {
		if ev := e.events.pop(); ev.kind == evDone {
			e.stats.inFlight++
		}
	}
}

// dispatch hands queued requests to idle workers.
func (e *engine) dispatch() error {
	for e.idle > 0 && e.queue.Len() > 0 && !e.stopped {
		r := e.queue.pop().r
		e.idle--
		e.named(r)
		if e.gen != nil {
			if g := e.windowTokens(r.gen); g < r.gen {
				e.stats.windowCapped++
				if !e.cfg.PrefillOnly && r.phase != phasePrefill {
					// Each batch reads the request's object, or each of its
					// blocks.
					per := 1
					if r.blocks {
						per = countIDs(r.ids)
					}
					e.stats.windowReads += int64(e.decodeBatches(r.gen)-e.decodeBatches(g)) * int64(per)
				}
				r.gen = g
			}
		}
		e.stats.dispatched++
		if r.phase == phasePrefill {
			e.stats.prefillOnlyRule++
		}
		if err := e.process(r); err != nil {
			return err
		}
		genTime := seconds(float64(r.gen) * e.spt)
		if genTime == 0 {
			e.complete(r)
			continue
		}
		e.push(event{at: e.now + genTime, kind: evDone, req: r})
	}
	if e.genBlock && e.queue.Len() < e.queueCap() && !e.stopped {
		e.genBlock = false
		e.push(event{at: e.now, kind: evArrival})
	}
	return nil
}

// openWorkers is the worker pool of an open arrival process: in effect
// unbounded.
const openWorkers = 1 << 20

// queueCap bounds the queue of a generator that has no pacing of its own.
func (e *engine) queueCap() int { return 2 * e.workers }

func (e *engine) enqueue(r *request) {
	r.submit = e.now
	e.queueSeq++
	e.queue.push(queued{priority: e.cfg.QoS[r.qos].Priority, seq: e.queueSeq, r: r})
}

func (e *engine) nextRequestID() uint64 {
	id := e.reqCounter
	e.reqCounter++
	return id
}

// complete records a finished request.
func (e *engine) complete(r *request) {
	e.idle++
	s := &e.stats
	s.completed++
	s.tokens += int64(r.gen)
	lat := (e.now - r.submit).Seconds()
	s.e2e.add(lat)
	s.generation.add(float64(r.gen) * e.spt)
	s.qos.add(uint8(r.qos))
	if r.phase != phaseDecode && !e.cfg.DecodeOnly {
		s.prefillDone++
	}
	if r.phase != phasePrefill && !e.cfg.PrefillOnly {
		s.decodeDone++
	}
	if e.cfg.MaxRequests > 0 && s.completed >= int64(e.cfg.MaxRequests) {
		e.stopped = true
	}
	if e.onDone != nil && e.doneErr == nil {
		c := &e.done
		*c = Completion{Request: r.id, User: r.userID, QoS: e.cfg.QoS[r.qos].Name, Phase: phaseNames[r.phase],
			ArrivalS: (r.submit - e.start).Seconds(), CompletedS: (e.now - e.start).Seconds(), E2EMS: lat * 1000,
			Tokens: r.gen, Context: r.context}
		if t := e.cfg.SLO.target(int(r.qos)); t > 0 {
			in := lat <= t.Seconds()
			c.WithinSLO = &in
		}
		if err := e.onDone(c); err != nil {
			e.doneErr, e.stopped = err, true
		}
	}
	// Nothing refers to a completed request: it serves the next, with
	// its hash-id array.
	*r = request{ids: r.ids[:0]}
	e.free.Put(r)
}

// process does a request's I/O, as the reference's process_requests does
// (reference section 1.6).
func (e *engine) process(r *request) error {
	cfg := e.cfg
	e.cur = r
	// The cache's race of demotions into a bounded tier needs to know
	// when, and for which request, it demotes.
	e.cache.now, e.cache.req = e.now, r.id
	defer func() { e.cur = nil }()
	if r.blocks {
		return e.processBlocks(r)
	}
	// own is the request's key: its conversation's turn, or a key of its
	// own in the cache's map.
	own := &keyRef{key: r.key}
	if r.conv != nil {
		own = &r.conv.turns[r.turn-1]
	}
	ct := cacheUser
	// 1. Prefix caching: the reference "detects" a system prompt and reads
	// its object, which it never writes: always a miss, no row.
	if !cfg.DisablePrefixCaching {
		if e.rng.Float64() < cfg.SystemPromptHitProbability {
			words := systemPromptWords[e.rng.IntN(len(systemPromptWords))]
			e.cache.stats.misses++
			e.stats.prefixHits++
			e.stats.systemPrompt++
			e.stats.bytesSaved += int64(words) * e.bpt
			r.context = max(0, r.context-words)
			ct = cacheSystem
		} else {
			e.stats.prefixMisses++
		}
	}
	if !cfg.DecodeOnly {
		// 2. Multi-turn: reload the conversation's context, every turn
		// registered but this one (get_all_previous_turn_keys). Turns the
		// user generated after this one are registered too, and their
		// objects are not written until a worker processes them: with a
		// backlog, those reads miss (no row; counted).
		if r.conv != nil && r.turn > 1 && !r.conv.forgotten {
			for i := range r.conv.turns {
				if i == r.turn-1 {
					continue // this request's own key
				}
				o, err := e.cache.accessRef(&r.conv.turns[i], schema.PhaseDecode, cacheMultiTurn)
				if err != nil {
					return err
				}
				if o != nil {
					e.stats.multiTurnHits++
				} else {
					e.stats.multiTurnMisses++
				}
			}
		}
		// 3. Prefill: write the request's context.
		if r.phase == phasePrefill || r.phase == phasePrefillDecode {
			if _, err := e.cache.allocateRef(own, r.context, schema.PhasePrefill); err != nil {
				return err
			}
		}
	}
	// 4. RAG retrieval. The reference draws for it under --enable-rag
	// also where no document was ingested (a replayed trace's run, whose
	// RAG manager ingests nothing), as it draws for everything else.
	if cfg.EnableRAG && e.rng.Float64() < cfg.RAG.RequestProbability && e.rag != nil && len(e.rag.docs) > 0 {
		doc := e.rag.docs[e.rng.IntN(len(e.rag.docs))]
		for _, ch := range e.rag.retrieve(doc) {
			if _, err := e.cache.access(ch.key, schema.PhaseDecode, cacheUser); err != nil {
				return err
			}
		}
	}
	// 5. Decode: read the context once, then once per batch of generated
	// tokens; a miss writes it.
	if !cfg.PrefillOnly && (r.phase == phaseDecode || r.phase == phasePrefillDecode) {
		key := own
		if cfg.DecodeOnly && len(e.prepop) > 0 {
			key = &keyRef{key: e.prepop[e.rng.IntN(len(e.prepop))]}
		}
		o, err := e.cache.accessRef(key, schema.PhaseDecode, ct)
		if err != nil {
			return err
		}
		if o == nil {
			if !cfg.DecodeOnly {
				if _, err := e.cache.allocateRef(own, r.context, schema.PhasePrefill); err != nil {
					return err
				}
			}
		} else {
			for range e.decodeBatches(r.gen) {
				if _, err := e.cache.accessRef(key, schema.PhaseDecode, ct); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// decodeBatches is the number of decode reads after the first:
// max(1, ceil(gen / batch size)).
func (e *engine) decodeBatches(gen int) int {
	b := max(1, e.cfg.DecodeBatchSize)
	return max(1, (gen+b-1)/b)
}

// windowTokens bounds a trace-driven request's generation by the run's
// --duration: at the generation mode's pace, no such request generates
// for longer than the run, and the decode reads of the tokens beyond are
// never made. The reference makes them all before it sleeps through the
// generation, which a trace's absurd output length made endless (1e8
// tokens, 35 days at 30 ms a token, whatever --duration said). Synthetic
// users' lengths come from the reference's templates and are not bounded:
// a document user's 800 tokens make 26 decode reads in a 10 s run too, as
// in the reference. A run that bounds one says so (a departure: the
// reference's trace has every decode read of a BurstGPT or ShareGPT
// request, whatever --duration says).
func (e *engine) windowTokens(gen int) int {
	if e.spt <= 0 {
		return gen
	}
	if most := e.cfg.Duration.Seconds() / e.spt; float64(gen) > most {
		return max(1, int(most))
	}
	return gen
}

// processBlocks does a block-level request (Mooncake): the cached blocks
// of its prefix are read, up to the first that is not cached, and the rest
// are written, as a prefix-caching inference engine does; decode then reads
// the request's whole context once per batch, as the reference's decode
// does with its one object. A block is r.blockTokens tokens, or its share
// of the context when the trace's ids have no one size
// (reqtrace.ApportionTokens).
func (e *engine) processBlocks(r *request) error {
	keys := e.blockKeys[:0]
	hit := true
	e.blockIDs = unpackIDs(e.blockIDs[:0], r.ids)
	n := len(e.blockIDs)
	for i, id := range e.blockIDs {
		keys = append(keys, "block_"+strconv.FormatInt(id, 10))
		if hit {
			o, err := e.cache.access(keys[i], schema.PhasePrefill, cacheUser)
			if err != nil {
				return err
			}
			if o != nil {
				e.stats.blockHits++
				continue
			}
			hit = false
		}
		e.stats.blockMisses++
		tokens := r.blockTokens
		if tokens == 0 {
			tokens = reqtrace.ApportionTokens(r.context, n, i)
		} else if pad := (i+1)*tokens - r.context; i == n-1 && pad > 0 && pad < tokens {
			// The last block is partial, and written whole: a key keeps
			// one size, and a later request's prefix may fill the block.
			e.stats.partialBlocks++
			e.stats.padTokens += int64(pad)
		}
		e.stats.blockTokensWritten += int64(tokens)
		if _, err := e.cache.allocate(keys[i], tokens, schema.PhasePrefill); err != nil {
			return err
		}
	}
	defer func() {
		clear(keys)
		e.blockKeys = keys[:0]
	}()
	if e.cfg.PrefillOnly || r.phase == phasePrefill {
		return nil
	}
	for range 1 + e.decodeBatches(r.gen) {
		for _, k := range keys {
			if _, err := e.cache.access(k, schema.PhaseDecode, cacheUser); err != nil {
				return err
			}
		}
	}
	return nil
}

// precondition fills the cache with 2,048-token objects before the run
// (reference section 3.11).
func (e *engine) precondition() error {
	var target float64
	switch {
	case e.cfg.PreconditionSizeGB > 0:
		target = e.cfg.PreconditionSizeGB * GiB
	case e.cfg.StorageCapacityGB > 0:
		target = 2 * e.cfg.StorageCapacityGB * GiB
	default:
		// A warning, not only a note: the reference warns, and a user who
		// asked for --precondition must see that it did nothing.
		e.warn("--precondition: skipped (as the reference skips it): the NVMe tier is unbounded and --precondition-size-gb is not set; give --precondition-size-gb GiB or --storage-capacity-gb GiB")
		return nil
	}
	var written int64
	for n := 0; float64(written) < target; n++ {
		o, err := e.cache.allocate("precond_"+strconv.Itoa(n), 2048, schema.PhasePrefill)
		if err != nil {
			return err
		}
		written += o.size
		if o.size == 0 {
			break
		}
		e.now += time.Microsecond
	}
	return nil
}

// prepopulate writes num-users x 10 objects of 2,048 tokens for decode-only
// runs (the reference's _prepopulate_cache_for_decode).
func (e *engine) prepopulate() error {
	n := e.cfg.NumUsers * 10
	e.prepop = make([]string, 0, n)
	for i := range n {
		key := "prepop_" + strconv.Itoa(i)
		if _, err := e.cache.allocate(key, 2048, schema.PhasePrefill); err != nil {
			return err
		}
		e.prepop = append(e.prepop, key)
		e.now += time.Microsecond
	}
	return nil
}

// makeUsers draws the synthetic users' profiles (wakeUsers starts them).
func (e *engine) makeUsers() {
	cfg := e.cfg
	e.users = make([]*user, cfg.NumUsers)
	for i := range e.users {
		// The reference's draw order (UserSimulator.generate_mixed_users):
		// type, QoS, context, generation, think time.
		t := e.rng.IntN(len(cfg.UserTemplates))
		tp := cfg.UserTemplates[t]
		u := &user{id: fmt.Sprintf("user_%04d", i), num: uint64(i) + 1, template: t}
		r := e.rng.Float64()
		switch {
		case r < cfg.QoSDistribution.InteractiveProbability:
			u.qos = QoSInteractive
		case r < cfg.QoSDistribution.ResponsiveThreshold:
			u.qos = QoSResponsive
		default:
			u.qos = QoSBatch
		}
		u.context = e.randint(tp.ContextMin, tp.ContextMax)
		u.gen = e.randint(tp.GenerationMin, tp.GenerationMax)
		u.think = e.uniform(tp.ThinkMin, tp.ThinkMax)
		e.users[i] = u
	}
}

// wakeUsers pushes each user's first wake-up: its first think time, the
// first draw of its thread in the reference.
func (e *engine) wakeUsers() {
	for _, u := range e.users {
		e.push(event{at: e.now + e.thinkTime(u), kind: evUser, user: u})
	}
}

// userWake is one iteration of the reference's user_worker: bookkeeping
// for multi-turn conversations, one request, maybe one RAG request, and the
// next think time.
func (e *engine) userWake(u *user) error {
	e.userRequest(u)
	e.push(event{at: e.now + e.thinkTime(u), kind: evUser, user: u})
	return nil
}

// thinkTime draws u's next think time, at least minSpacing: a
// think_time_range of [0, 0] from --config makes kv-cache.py's user
// threads send requests as fast as Python runs, and at a think time of 0
// virtual time would not advance (the run never ended).
func (e *engine) thinkTime(u *user) time.Duration {
	d := seconds(u.think * e.uniform(0.8, 1.2))
	if d < minSpacing {
		d = minSpacing
		if !e.departed["think"] {
			e.depart("think", fmt.Sprintf("users with think times under %g ms (user_templates' think_time_range) wait %g ms between requests: "+
				"kv-cache.py's user threads send them as fast as Python runs", float64(minSpacing)/float64(time.Millisecond), float64(minSpacing)/float64(time.Millisecond)))
		}
	}
	return d
}

// userRequest is a user's request (and maybe a RAG request), with the
// bookkeeping of its conversation.
func (e *engine) userRequest(u *user) {
	cfg := e.cfg
	if !cfg.DisableMultiTurn {
		if u.conv != nil && (e.rng.Float64() >= 1-cfg.EndConversationProbability || len(u.conv.turns) >= cfg.MaxTurns) {
			u.conv = nil
		}
		if u.conv != nil && u.conv.forgotten {
			// The registry forgot the user's conversation while it went
			// on: the reference's next add_turn raises and the user's
			// thread dies; here the user starts a new conversation.
			u.conv = nil
			e.stats.convRestarts++
		}
		if u.conv == nil {
			u.conv = &conversation{id: e.conversationID(u)}
			u.convSeq++
			e.convs.start(u.conv)
		} else {
			e.convs.touch(u.conv)
		}
	}
	ctx := e.randint(max(1, u.context/4), u.context)
	gen := e.randint(max(1, u.gen/4), u.gen)
	id := e.nextRequestID()
	r := e.newRequest()
	*r = request{id: id + 1, userID: u.id, user: u.num, context: ctx, gen: gen,
		qos: uint8(u.qos), phase: phaseOf(ctx), turn: 1}
	if u.conv != nil {
		r.conv = u.conv
		r.turn = len(u.conv.turns) + 1
		r.key = u.conv.id + "_turn_" + strconv.Itoa(r.turn)
		u.conv.turns = append(u.conv.turns, keyRef{key: r.key, owned: true})
	} else {
		r.key = fmt.Sprintf("%s_req_%06d", u.id, id)
	}
	e.enqueue(r)
	if e.rag != nil && e.rng.Float64() < cfg.RAG.RequestProbability && len(e.rag.docs) > 0 {
		doc := e.rag.docs[e.rng.IntN(len(e.rag.docs))]
		tokens := 0
		for _, ch := range e.rag.retrieve(doc) {
			tokens += ch.tokens
		}
		rid := e.nextRequestID()
		rr := e.newRequest()
		*rr = request{id: rid + 1, userID: u.id, user: u.num, context: tokens, gen: e.randint(50, 200),
			qos: uint8(u.qos), phase: phaseDecode, key: "rag_" + doc.id}
		e.enqueue(rr)
	}
}

// conversationID names a user's next conversation. The reference embeds
// the wall clock in milliseconds; the kvbench key style numbers a user's
// conversations instead, so keys do not depend on time. In the mlperf
// style, a user's conversations started within one millisecond (an open
// arrival process gives a user several requests a millisecond) take the
// next free millisecond: the same id would give the new conversation's
// turns the keys of the old one's, objects of other sizes.
func (e *engine) conversationID(u *user) string {
	if e.cfg.KeyStyle == "mlperf" {
		ms := e.cfg.EpochBase.UnixMilli() + int64(e.now/time.Millisecond)
		if u.convSeq > 0 && ms <= u.convMS {
			ms = u.convMS + 1
		}
		u.convMS = ms
		return "conv_" + u.id + "_" + strconv.FormatInt(ms, 10)
	}
	return "conv_" + u.id + "_" + pad4(u.convSeq)
}

// pad4 formats n in decimal with at least four digits, as %04d does.
func pad4(n int) string {
	s := strconv.Itoa(n)
	if n >= 0 && len(s) < 4 {
		s = "0000"[len(s):] + s
	}
	return s
}

// warn records a note that a user must see.
func (e *engine) warn(msg string) {
	e.notes = append(e.notes, msg)
	e.warnings = append(e.warnings, msg)
}

// DeparturePrefix begins every note of a departure from kv-cache.py.
const DeparturePrefix = "departs from kv-cache.py: "

// depart records, once per key, that the run met one of kvtrace's
// deliberate departures from kv-cache.py (see the package documentation):
// a note, in Extra.Departures and Extra.Notes, that a tool prints on
// stderr.
func (e *engine) depart(key, msg string) {
	if e.departed[key] {
		return
	}
	if e.departed == nil {
		e.departed = map[string]bool{}
	}
	e.departed[key] = true
	msg = DeparturePrefix + msg
	e.notes = append(e.notes, msg)
	e.departures = append(e.departures, msg)
}

// newRequest returns a request from the free list of completed ones, or a
// new one; the caller sets every field.
func (e *engine) newRequest() *request { return e.free.Get() }
