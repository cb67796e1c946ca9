package replay

import (
	"container/heap"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/internal/datagen"
	"github.com/kvbench/kvbench/internal/uring"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Hooks are optional callbacks of a run.
type Hooks struct {
	// Progress is called about twice a second from its own goroutine.
	Progress func(Progress)
}

// Progress is a run's state for a live progress line.
type Progress struct {
	Elapsed  time.Duration
	Rows     int64 // rows dispatched
	RowsDone int64 // rows completed
	Bytes    int64 // logical bytes moved
	Lag      time.Duration
}

// ErrUnmappedTier stops a run whose trace has rows on a tier --tier-map
// maps to no backend.
var ErrUnmappedTier = errors.New("tier mapped to no backend")

// keyState is an object's state: where it lives and which task last
// touched it. A task owns its key's state while it runs: per-key order
// means no other task of the key runs at the same time.
type keyState struct {
	name    string
	tier    schema.Tier
	exists  bool
	logical int64
	phys    int64
	version uint64
	// Ordering: reads wait for the last write-like task (Write, Delete,
	// or a read that must create the object); write-like tasks wait for
	// that and for every read registered since. Reads of one key run
	// concurrently, as they do not conflict.
	lastW     *task
	reads     []*task
	pending   int           // tasks of the key not yet complete
	willExist bool          // the object will exist once the registered tasks ran
	lru       *list.Element // on the Tier-2 capacity LRU
	lruPhys   int64         // the bytes it counts for there
	evicted   bool          // deleted by capacity eviction
}

// reqState tracks one request's rows.
type reqState struct {
	id      reqID
	first   time.Time
	pending int
	closed  bool
	qos     schema.QoS
	last    *task
}

type reqID struct {
	src int
	id  uint64
}

// task is one row to execute.
type task struct {
	row   schema.Record // Key is not used: see key
	key   *keyState
	req   *reqState
	sched time.Time
	deps  int
	succ  []*task
	done  bool
}

// blockOp is one I/O of an object operation.
type blockOp struct {
	obj     Object
	tier    schema.Tier
	write   bool
	off, n  int64
	name    string
	version uint64
	grp     *opGroup
}

// opGroup waits for an object operation's I/Os.
type opGroup struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (g *opGroup) fail(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
}

type engine struct {
	cfg      *Config
	srcs     []Source
	plan     *Plan
	backends [schema.NumTiers]Backend
	aligns   [schema.NumTiers]int64
	gen      *datagen.Generator
	hooks    Hooks

	mu       sync.Mutex
	keys     map[string]*keyState
	reqs     map[reqID]*reqState
	lastReq  []uint64
	nvmeLRU  list.List
	nvmeLive int64

	ready  chan *task
	window chan struct{}
	ioq    chan *blockOp // the psync workers
	uq     chan *blockOp // the io_uring ring, for objects with a descriptor
	engine string        // the I/O engine in use
	stop   context.CancelCauseFunc
	runCtx context.Context

	start     time.Time
	t0        time.Duration
	haveT0    bool
	rows      atomic.Int64
	rowsDone  atomic.Int64
	verified  atomic.Int64
	bytesDone atomic.Int64
	failed    atomic.Bool

	m        *metrics
	infos    []schema.TraceInfo
	warnings []string
	counted  struct {
		cold, coldBytes, evictions, remat, mismatch atomic.Int64
	}
}

// Run replays srcs onto the backends (by name, as cfg.TierMap names them)
// and returns the result document. A run stopped early (ctx cancelled, an
// I/O error, a full disk) still returns its partial result, marked
// incomplete, together with the error that stopped it. Setup failures
// return a nil result.
func Run(ctx context.Context, cfg *Config, plan *Plan, srcs []Source, backends map[string]Backend, hooks Hooks) (*schema.Result, error) {
	e := &engine{cfg: cfg, srcs: srcs, plan: plan, hooks: hooks,
		keys: map[string]*keyState{}, reqs: map[reqID]*reqState{}, lastReq: make([]uint64, len(srcs)),
		gen: datagen.New(cfg.Seed)}
	for t := range schema.Tier(schema.NumTiers) {
		name := cfg.TierMap[t]
		if name == "" {
			if plan != nil && plan.Used[t] {
				return nil, unmapped(t, plan.UsedRows[t])
			}
			continue
		}
		b, ok := backends[name]
		if !ok {
			if plan != nil && plan.Scanned && !plan.Used[t] {
				continue // the trace has no row there: no backend needed
			}
			return nil, fmt.Errorf("replay: --tier-map %s=%s: no such backend", t, name)
		}
		e.backends[t] = b
		e.aligns[t] = int64(max(1, b.Caps().Align))
	}
	e.m = newMetrics(cfg, e.backends)
	e.runCtx, e.stop = context.WithCancelCause(ctx)
	defer e.stop(nil)

	e.window = make(chan struct{}, 4*cfg.Workers)
	e.ready = make(chan *task, 4*cfg.Workers)
	e.ioq = make(chan *blockOp, cfg.QueueDepth)
	var ioWG, workWG sync.WaitGroup
	for range cfg.QueueDepth {
		ioWG.Add(1)
		go func() { defer ioWG.Done(); e.ioWorker() }()
	}
	e.engine = "psync"
	if cfg.Engine == "uring" {
		if err := uring.Probe(); err != nil {
			e.warnings = append(e.warnings, fmt.Sprintf("io_uring is not available here (%v): the psync engine ran instead", err))
		} else if u, err := newUring(e); err != nil {
			e.warnings = append(e.warnings, fmt.Sprintf("io_uring setup failed (%v): the psync engine ran instead", err))
		} else {
			e.engine = "uring"
			e.uq = make(chan *blockOp, cfg.QueueDepth)
			ioWG.Add(1)
			go func() { defer ioWG.Done(); u.run(e.uq) }()
		}
	}
	for range cfg.Workers {
		workWG.Add(1)
		go func() { defer workWG.Done(); e.worker() }()
	}
	// Cold objects are written, untimed, once the I/O workers run and
	// before the clock starts.
	if err := e.prepareCold(); err != nil {
		close(e.ready)
		workWG.Wait()
		close(e.ioq)
		if e.uq != nil {
			close(e.uq)
		}
		ioWG.Wait()
		return nil, err
	}
	stopProgress := e.progressLoop()

	e.start = time.Now()
	e.m.start = e.start
	dispatchErr := e.dispatch()
	// Wait for every dispatched task: the window is full again.
	for range cap(e.window) {
		e.window <- struct{}{}
	}
	close(e.ready)
	workWG.Wait()
	close(e.ioq)
	if e.uq != nil {
		close(e.uq)
	}
	ioWG.Wait()
	wall := time.Since(e.start)
	stopProgress()

	e.mu.Lock()
	for id, rs := range e.reqs {
		if rs.pending == 0 {
			e.m.request(rs, rs.first)
		}
		delete(e.reqs, id)
	}
	e.mu.Unlock()

	if errors.Is(dispatchErr, ErrUnmappedTier) && e.rowsDone.Load() == 0 {
		return nil, dispatchErr // nothing ran: a usage error, not a result
	}
	res := e.result(wall)
	cause := context.Cause(e.runCtx)
	if dispatchErr == nil && e.runCtx.Err() != nil {
		dispatchErr = cause
	}
	if dispatchErr != nil {
		res.Complete = false
		res.IncompleteReason = dispatchErr.Error()
		return res, dispatchErr
	}
	return res, nil
}

func unmapped(t schema.Tier, rows int64) error {
	hint := ""
	if t == schema.TierGPU {
		hint = " (no GPU backend here: replay GPU rows in RAM)"
	}
	return fmt.Errorf("replay: the trace has %d %s rows and %s is mapped to no backend: add --tier-map %s=ram%s: %w",
		rows, t, t, t, hint, ErrUnmappedTier)
}

// fail stops the run at its first error.
func (e *engine) fail(err error) {
	if e.failed.CompareAndSwap(false, true) {
		e.stop(err)
	}
}

// prepareCold writes the plan's cold objects, untimed, before the clock
// starts.
func (e *engine) prepareCold() error {
	if e.plan == nil {
		return nil
	}
	for _, c := range e.plan.Cold {
		ks := e.keyState(c.Key)
		ks.tier, ks.willExist = c.Tier, true
		if err := e.materialise(ks, c.Tier, c.Logical); err != nil {
			return fmt.Errorf("replay: preparing cold object %s: %w", c.Key, err)
		}
		e.counted.cold.Add(1)
		e.counted.coldBytes.Add(c.Logical)
	}
	return nil
}

func (e *engine) keyState(key string) *keyState {
	ks := e.keys[key]
	if ks == nil {
		ks = &keyState{name: key}
		e.keys[key] = ks
	}
	return ks
}

// source is one trace being read, for the time-ordered merge.
type source struct {
	idx int
	r   *trace.Reader
	rec schema.Record
}

type sourceHeap []*source

func (h sourceHeap) Len() int { return len(h) }
func (h sourceHeap) Less(i, j int) bool {
	if h[i].rec.Time != h[j].rec.Time {
		return h[i].rec.Time < h[j].rec.Time
	}
	return h[i].idx < h[j].idx
}
func (h sourceHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sourceHeap) Push(x any)   { *h = append(*h, x.(*source)) }
func (h *sourceHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// dispatch reads the traces in time order and hands each row to the
// workers once it is due and its key's and request's earlier rows are done.
func (e *engine) dispatch() error {
	var h sourceHeap
	defer func() {
		for _, s := range h {
			s.r.Close()
		}
	}()
	e.infos = make([]schema.TraceInfo, len(e.srcs))
	readers := make([]*trace.Reader, len(e.srcs))
	for i, s := range e.srcs {
		r, err := s.Open()
		if err != nil {
			return err
		}
		readers[i] = r
		src := &source{idx: i, r: r}
		if err := e.next(src); err != nil {
			if errors.Is(err, io.EOF) {
				e.closeSource(src)
				continue
			}
			r.Close()
			return err
		}
		heap.Push(&h, src)
	}
	for len(h) > 0 {
		src := h[0]
		if err := e.submit(src); err != nil {
			return err
		}
		if err := e.next(src); err != nil {
			heap.Pop(&h)
			e.closeSource(src)
			if !errors.Is(err, io.EOF) {
				return err
			}
			continue
		}
		heap.Fix(&h, 0)
	}
	return nil
}

func (e *engine) next(src *source) error {
	err := src.r.Read(&src.rec)
	return err
}

func (e *engine) closeSource(src *source) {
	r := src.r
	info := schema.TraceInfo{File: e.srcs[src.idx].Name, Rows: r.Rows(), Compressed: r.Compressed(),
		TimeBase: "virtual", OutOfOrder: r.OutOfOrder()}
	if t, ok := r.Epoch(); ok {
		info.TimeBase = "epoch"
		info.EpochStart = float64(t.UnixMicro()) / 1e6
	}
	e.infos[src.idx] = info
	r.Close()
	// Close the source's last request.
	e.mu.Lock()
	if id := e.lastReq[src.idx]; id != 0 {
		e.closeRequest(reqID{src.idx, id})
	}
	e.mu.Unlock()
}

// submit schedules one row.
func (e *engine) submit(src *source) error {
	rec := &src.rec
	if e.backends[rec.Tier] == nil {
		return unmapped(rec.Tier, 1)
	}
	if !e.haveT0 {
		e.haveT0, e.t0 = true, rec.Time
	}
	// Wait for a free slot, then for the row's time. At --speed max a row
	// is due when the dispatcher reaches it, so lag and latency from the
	// schedule count only the waits for its key and request.
	select {
	case e.window <- struct{}{}:
	case <-e.runCtx.Done():
		return context.Cause(e.runCtx)
	}
	sched := time.Now()
	if e.cfg.Speed > 0 {
		sched = e.start.Add(e.cfg.speedDuration(rec.Time - e.t0))
	}
	if d := time.Until(sched); d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-e.runCtx.Done():
			timer.Stop()
			<-e.window
			return context.Cause(e.runCtx)
		}
	}
	e.rows.Add(1)
	t := &task{row: *rec, sched: sched}
	t.row.Key = nil
	key := sourceKey(src.idx, len(e.srcs), rec.Key)

	e.mu.Lock()
	ks := e.keyState(key)
	t.key = ks
	ks.pending++
	after := func(p *task) {
		if p != nil && !p.done {
			p.succ = append(p.succ, t)
			t.deps++
		}
	}
	// A read of an object that will exist runs beside other reads; with a
	// Tier-2 capacity bound (objects may vanish under a read) or when the
	// read must create its object, it is exclusive like a write.
	shared := rec.Op == schema.OpRead && ks.willExist && e.cfg.Capacity == 0
	after(ks.lastW)
	if shared {
		n := 0
		for _, r := range ks.reads {
			if !r.done {
				ks.reads[n] = r
				n++
			}
		}
		clear(ks.reads[n:])
		ks.reads = append(ks.reads[:n], t)
	} else {
		for _, r := range ks.reads {
			after(r)
		}
		ks.reads = nil
		ks.lastW = t
		ks.willExist = rec.Op != schema.OpDelete
	}
	if rec.Request != 0 {
		id := reqID{src.idx, rec.Request}
		if prev := e.lastReq[src.idx]; prev != 0 && prev != rec.Request {
			e.closeRequest(reqID{src.idx, prev})
		}
		e.lastReq[src.idx] = rec.Request
		rs := e.reqs[id]
		if rs == nil {
			rs = &reqState{id: id, first: sched, qos: rec.QoS}
			e.reqs[id] = rs
		}
		rs.pending++
		t.req = rs
		after(rs.last)
		rs.last = t
	}
	ready := t.deps == 0
	e.mu.Unlock()
	if ready {
		e.ready <- t
	}
	return nil
}

// closeRequest marks a request as having all its rows; e.mu is held.
func (e *engine) closeRequest(id reqID) {
	rs := e.reqs[id]
	if rs == nil {
		return
	}
	rs.closed = true
	if rs.pending == 0 {
		e.m.request(rs, time.Now())
		delete(e.reqs, id)
	}
}

// complete releases a finished task's successors.
func (e *engine) complete(t *task) {
	now := time.Now()
	e.mu.Lock()
	t.done = true
	var ready []*task
	for _, s := range t.succ {
		s.deps--
		if s.deps == 0 {
			ready = append(ready, s)
		}
	}
	t.succ = nil
	ks := t.key
	ks.pending--
	if ks.lastW == t {
		ks.lastW = nil
	}
	if ks.pending == 0 {
		ks.reads = nil // drop the done tasks it holds
	}
	if rs := t.req; rs != nil {
		rs.pending--
		if rs.last == t {
			rs.last = nil
		}
		if rs.closed && rs.pending == 0 {
			e.m.request(rs, now)
			delete(e.reqs, rs.id)
		}
	}
	e.mu.Unlock()
	for _, s := range ready {
		e.ready <- s
	}
	e.rowsDone.Add(1)
	<-e.window
}

func (e *engine) worker() {
	for t := range e.ready {
		if e.runCtx.Err() == nil {
			e.execute(t)
		}
		e.complete(t)
	}
}

func (e *engine) ioWorker() {
	var buf []byte // allocated on first use: with the uring engine an NVMe-only run never needs it
	for op := range e.ioq {
		if buf == nil {
			buf = alignedBuffer(int(e.cfg.BlockSize), 4096)
		}
		p := buf[:op.n]
		var err error
		if op.write {
			e.gen.Fill(p, op.name, op.version, op.off)
			_, err = op.obj.WriteAt(p, op.off)
		} else {
			_, err = op.obj.ReadAt(p, op.off)
			if err == nil && e.cfg.Verify {
				err = e.verify(p, op)
			}
		}
		if err != nil {
			op.grp.fail(err)
		}
		op.grp.wg.Done()
	}
}

// ErrVerify is wrapped by a VerifyError: bytes read differ from what was
// written.
var ErrVerify = errors.New("verify: data differs from what was written")

// VerifyError reports the first differing byte of a read with --verify.
type VerifyError struct {
	Key     string
	Tier    schema.Tier
	Version uint64
	Offset  int64  // the object offset of the first differing byte
	Got     []byte // up to 16 bytes read from Offset
	Want    []byte // the bytes written there
}

func (v *VerifyError) Error() string {
	return fmt.Sprintf("verify: key %s on %s: byte %d differs (version %d): read %x, written %x",
		v.Key, v.Tier, v.Offset, v.Version, v.Got, v.Want)
}

// Unwrap returns ErrVerify.
func (v *VerifyError) Unwrap() error { return ErrVerify }

// verify checks a block read against the bytes of its key and version.
func (e *engine) verify(p []byte, op *blockOp) error {
	bad, ok := e.gen.Verify(p, op.name, op.version, op.off)
	if ok {
		e.verified.Add(int64(len(p)))
		return nil
	}
	start := bad &^ 15 // the generator fills 16-byte-aligned ranges
	end := min(start+16, op.off+int64(len(p)))
	want := make([]byte, 16)
	e.gen.Fill(want, op.name, op.version, start)
	i := bad - start
	return &VerifyError{Key: op.name, Tier: op.tier, Version: op.version, Offset: bad,
		Got:  append([]byte(nil), p[bad-op.off:end-op.off]...),
		Want: want[i : end-start]}
}

// objectName names an object on a tier: tiers mapped to one backend keep
// separate copies while a demotion moves one.
func objectName(t schema.Tier, key string) string {
	return string(rune('0'+t)) + "_" + key
}

// io moves a whole object through the I/O workers.
func (e *engine) io(obj Object, tier schema.Tier, write bool, name string, version uint64, phys int64) error {
	grp := &opGroup{}
	bs := e.cfg.BlockSize
	q := e.ioq
	if _, ok := obj.(fdObject); ok && e.uq != nil {
		q = e.uq
	}
	for off := int64(0); off < phys; off += bs {
		n := min(bs, phys-off)
		grp.wg.Add(1)
		q <- &blockOp{obj: obj, tier: tier, write: write, off: off, n: n, name: name, version: version, grp: grp}
	}
	grp.wg.Wait()
	return grp.err
}

// writeObject creates and writes ks's bytes on tier t.
func (e *engine) writeObject(ks *keyState, t schema.Tier) error {
	obj, err := e.backends[t].Open(objectName(t, ks.name), ks.phys, true)
	if err != nil {
		return err
	}
	err = e.io(obj, t, true, ks.name, ks.version, ks.phys)
	if cerr := obj.Close(); err == nil {
		err = cerr
	}
	return err
}

// readObject reads ks's bytes from tier t.
func (e *engine) readObject(ks *keyState, t schema.Tier) error {
	obj, err := e.backends[t].Open(objectName(t, ks.name), ks.phys, false)
	if err != nil {
		return err
	}
	err = e.io(obj, t, false, ks.name, ks.version, ks.phys)
	if cerr := obj.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeObject deletes ks's copy on tier t.
func (e *engine) removeObject(ks *keyState, t schema.Tier) error {
	obj, err := e.backends[t].Open(objectName(t, ks.name), ks.phys, false)
	if err != nil {
		return err
	}
	return obj.Remove()
}

// materialise writes an object that the trace reads before writing
// (untimed, not counted in the cells).
func (e *engine) materialise(ks *keyState, t schema.Tier, logical int64) error {
	ks.logical, ks.phys = sizes(logical, 1, e.aligns[t])
	if err := e.makeRoom(ks, t); err != nil {
		return err
	}
	if err := e.writeObject(ks, t); err != nil {
		return err
	}
	ks.tier, ks.exists, ks.evicted = t, true, false
	e.placed(ks)
	return nil
}

// makeRoom keeps Tier-2 under --capacity before ks is written there,
// deleting least recently used objects that no task is using.
func (e *engine) makeRoom(ks *keyState, t schema.Tier) error {
	if t != schema.TierNVMe || e.cfg.Capacity <= 0 {
		return nil
	}
	for {
		e.mu.Lock()
		if e.nvmeLive+ks.phys <= e.cfg.Capacity {
			e.mu.Unlock()
			return nil
		}
		var victim *keyState
		for el := e.nvmeLRU.Front(); el != nil; el = el.Next() {
			v := el.Value.(*keyState)
			if v.pending == 0 && v != ks {
				victim = v
				break
			}
		}
		if victim == nil {
			e.mu.Unlock()
			return nil // everything on the tier is in use: let it pass
		}
		e.nvmeLRU.Remove(victim.lru)
		victim.lru = nil
		e.nvmeLive -= victim.lruPhys
		victim.exists, victim.evicted = false, true
		e.counted.evictions.Add(1)
		e.mu.Unlock()
		if err := e.removeObject(victim, schema.TierNVMe); err != nil {
			return err
		}
	}
}

// placed records ks on its tier for the capacity LRU: an object on Tier-2
// moves to the back, any other leaves it.
func (e *engine) placed(ks *keyState) {
	if e.cfg.Capacity <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ks.lru != nil {
		e.nvmeLRU.Remove(ks.lru)
		ks.lru = nil
		e.nvmeLive -= ks.lruPhys
	}
	if ks.tier == schema.TierNVMe && ks.exists {
		ks.lru = e.nvmeLRU.PushBack(ks)
		ks.lruPhys = ks.phys
		e.nvmeLive += ks.phys
	}
}

// execute runs one row.
func (e *engine) execute(t *task) {
	ks, row := t.key, &t.row
	tier := row.Tier
	logical, phys := sizes(row.Size, e.cfg.SizeScale, e.aligns[tier])
	var err error
	// Untimed preparation: an object read that does not exist (a cold read
	// on a pipe, or one deleted for capacity) is written first.
	if row.Op == schema.OpRead && !ks.exists {
		if ks.evicted {
			e.counted.remat.Add(1)
		} else {
			e.counted.cold.Add(1)
			e.counted.coldBytes.Add(logical)
		}
		if err := e.materialise(ks, tier, logical); err != nil {
			e.opFailed(row, err)
			return
		}
	}
	start := time.Now()
	e.m.begin(t, start)
	switch row.Op {
	case schema.OpWrite:
		from, had, oldPhys := ks.tier, ks.exists, ks.phys
		if row.Phase != schema.PhaseEvict || !had {
			ks.version++
		}
		ks.logical, ks.phys = logical, phys
		if err = e.makeRoom(ks, tier); err == nil {
			err = e.writeObject(ks, tier)
		}
		if err == nil && had && from != tier {
			// A demotion frees its source; a rewrite elsewhere drops the
			// old copy.
			newPhys := ks.phys
			ks.phys = oldPhys
			err = e.removeObject(ks, from)
			ks.phys = newPhys
		}
		if err == nil {
			ks.tier, ks.exists, ks.evicted = tier, true, false
			e.placed(ks)
		}
	case schema.OpRead:
		at := ks.tier
		if at != tier {
			e.counted.mismatch.Add(1)
		}
		err = e.readObject(ks, at)
		if err == nil {
			e.placed(ks)
		}
	case schema.OpDelete:
		if ks.exists {
			ks.exists = false
			e.placed(ks)
			err = e.removeObject(ks, ks.tier)
		}
	}
	end := time.Now()
	if err != nil {
		e.m.end(row, t, start, end, logical, phys, false)
		e.opFailed(row, err)
		return
	}
	e.m.end(row, t, start, end, logical, phys, true)
	e.bytesDone.Add(logical)
}

func (e *engine) opFailed(row *schema.Record, err error) {
	err = fmt.Errorf("%s %s %s: %w", row.Op, row.Tier, row.Phase, err)
	e.m.failure(err)
	e.fail(fmt.Errorf("replay: %w", err))
}

func (e *engine) progressLoop() func() {
	if e.hooks.Progress == nil {
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
				e.hooks.Progress(Progress{Elapsed: time.Since(e.start), Rows: e.rows.Load(),
					RowsDone: e.rowsDone.Load(), Bytes: e.bytesDone.Load(), Lag: e.m.lagNow()})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// alignedBuffer returns n bytes whose address is a multiple of align (a
// power of two), as O_DIRECT needs.
func alignedBuffer(n, align int) []byte {
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(&b[0])) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}
