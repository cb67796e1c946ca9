package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/datagen"
	"github.com/kvbench/kvbench/internal/objname"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/ioengine"
	"github.com/kvbench/kvbench/schema"
)

// Execution turns a task into calls on its backend: Open, the object's
// blocks through an I/O engine, Close, and Remove. A task is a small state
// machine the loop advances; nothing blocks the loop. Metadata calls run
// on the loop when the backend declares them fast (in-memory) and on a
// pool of goroutines otherwise (a file per object). A backend that keeps
// no data (Caps.NoData) gets its metadata calls and no data work at all.

// Stages of a task.
const (
	stStart     uint8 = iota
	stMatOpen         // an object read before it exists is written first, untimed
	stMatIO           //
	stMatClose        //
	stMatDone         // the object written: counted
	stBegin           // the timed operation starts
	stOpen            // the object on ioTier
	stIO              // its blocks
	stSync            // a write made durable (--fsync)
	stClose           // a write's object now exists
	stRemoveOld       // a move removes its source copy
	stRemove          // a Delete or an eviction
	stFinish
)

// Metadata calls.
const (
	metaOpen uint8 = iota + 1
	metaClose
	metaRemove
	metaSync
)

// metaWorkers is the pool that makes metadata calls off the loop: file
// creation and removal block in the kernel, and a queue depth's worth of
// them may be in flight.
func (s *sched) metaWorkers() int { return max(4, min(s.cfg.QueueDepth, 64)) }

// engineSlot is an I/O engine with the blocks the loop keeps for it.
type engineSlot struct {
	e        ioengine.Engine
	depth    int
	inflight int
	used     bool    // a block was submitted to it
	waiting  []*task // tasks with blocks not yet submitted, in order
	// only, when set, is the one backend whose objects the engine serves
	// (a psync pool of its own); nil for an engine of every backend's.
	only *tierBackend
}

// objectName names an object on a tier (objname.ObjectName, which
// kvtrace's fio exporter names files by too): tiers mapped to one backend
// keep separate copies while a demotion moves one.
func objectName(t schema.Tier, key string) string {
	return objname.ObjectName(int(t), key)
}

// objectName returns ks's name on tier t, made once while its rows stay
// on t. Only the loop calls it.
func (ks *keyState) objectName(t schema.Tier) string {
	if ks.oname == "" || ks.otier != t {
		ks.oname, ks.otier = objectName(t, ks.name), t
	}
	return ks.oname
}

// removedName returns ks's name on tier t for the removal of its object
// there, without keeping it: after a move's removal of its source copy,
// the key's rows go on on the other tier, whose name stays kept.
func (ks *keyState) removedName(t schema.Tier) string {
	if ks.oname != "" && ks.otier == t {
		return ks.oname
	}
	return objectName(t, ks.name)
}

// begin starts a ready task.
func (s *sched) begin(t *task) {
	if s.err != nil {
		t.skip = true
	}
	t.stage, t.started = stStart, true
	if t.relB >= 0 && t.rel > 0 {
		s.backends[t.relB].releasing++
	}
	s.advance(t)
}

// advance runs t's stages until one waits for the backend or an engine.
func (s *sched) advance(t *task) {
	for {
		if t.skip {
			s.finish(t)
			return
		}
		if t.err != nil && t.stage != stFinish {
			if t.parked = fragmented(t.err) && t.meta == metaOpen && t.metaCreate && s.canWaitForSpace(t); t.parked {
				// Space the model counted is there but fragmented: wait for
				// the next release and try again.
				t.err = nil
				t.stage--
				return
			}
			t.stage = stFinish
		}
		if !s.stage(t) {
			return
		}
	}
}

// fragmented reports that err is a backend's refusal for space that the
// model counted but that is fragmented (an arena's, an extent file's
// allocator's): worth a wait for the next release. A full disk (ENOSPC,
// EDQUOT from the file system) is not: the run stops on it, as a probe
// that hit ENOSPC is no measurement.
func fragmented(err error) bool {
	return errors.Is(err, backend.ErrNoSpace) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EDQUOT)
}

// stage runs t's current stage and moves it to the next; false when the
// task waits (for the backend, an engine, or its end).
func (s *sched) stage(t *task) bool {
	switch t.stage {
	case stStart:
		s.stageStart(t)
		return true
	case stMatOpen:
		t.ks.version = t.seq
		t.ks.logical, t.ks.phys = t.logical, t.phys
		t.stage = stMatIO
		return s.openObject(t, t.tier, t.phys, true)
	case stMatIO:
		t.stage = stMatClose
		return s.blocks(t, true, t.tier)
	case stMatClose:
		t.stage = stMatDone
		t.ks.tier, t.ks.exists = t.tier, true
		return s.callMeta(t, nil, metaClose, "", 0, false)
	case stMatDone:
		s.stageMatDone(t)
		return true
	case stBegin:
		s.stageBegin(t)
		return true
	case stOpen:
		return s.stageOpen(t)
	case stIO:
		t.stage = stSync
		t.ioStart = s.clock.Now()
		return s.blocks(t, t.op == schema.OpWrite, t.ioTier)
	case stSync:
		return s.stageSync(t)
	case stClose:
		t.ioEnd = s.clock.Now()
		return s.stageClose(t)
	case stRemoveOld:
		t.stage = stFinish
		// The write is done: removing the source copy is the other
		// tier's work, not in this write's latency or its tier's busy
		// time, which end here. The move succeeds only once the copy is
		// removed (endRow, from finish): a removal that fails fails it.
		t.moveEnd = s.clock.Now()
		if s.timedRow(t) {
			s.metrics.endBusy(t, t.start, t.moveEnd, false)
		}
		dropHandle(t.ks, t.moveFrom)
		return s.callMeta(t, s.tiers[t.moveFrom], metaRemove, t.ks.removedName(t.moveFrom), t.movePhys, false)
	case stRemove:
		return s.stageRemove(t)
	}
	s.finish(t) // stFinish
	return false
}

// stageStart picks t's first stage: an eviction removes, a read of an
// object that does not exist writes it first (untimed), anything else
// begins.
func (s *sched) stageStart(t *task) {
	if rs := t.req; rs != nil && rs.untimed > 0 {
		// The untimed writes of the request's earlier rows delayed this
		// row only as far as the row before it ended past this one's due
		// time: the rest of them passed while the request waited for its
		// schedule, and was never in its latency.
		rs.untimed = min(rs.untimed, max(0, rs.lastDone.Sub(t.sched)))
	}
	switch {
	case t.kind == kindEvict:
		t.stage = stRemove
	case t.op == schema.OpRead && !t.ks.exists:
		t.stage = stMatOpen
		t.matStart = s.clock.Now()
	default:
		t.stage = stBegin
	}
}

// stageMatDone counts an object written before its read once its close
// succeeded (a failed write or close ended the task, uncounted), and goes
// on to the read.
func (s *sched) stageMatDone(t *task) {
	switch {
	case t.cold:
		s.counted.cold++
		s.counted.coldBytes += t.logical
		if t.leftOut {
			s.counted.leftOut++
			s.counted.leftOutBytes += t.logical
		}
		if t.kind != kindCold {
			s.counted.coldLate++
			s.counted.coldLateBytes += t.logical
		}
	case t.remat:
		s.counted.remat++
	}
	t.stage = stBegin
	if t.kind == kindCold {
		t.stage = stFinish
	}
}

// stageBegin starts the timed operation: the key's state as the
// operation leaves it, and the copy its blocks move.
func (s *sched) stageBegin(t *task) {
	ks := t.ks
	if t.op == schema.OpRead && ks.tier != t.tier {
		// The trace named another tier (its Evict pairs were missing or
		// not adjacent): the read is where the object is, and counts
		// there, so that a tier's figures are its own.
		s.counted.mismatch++
		t.tier = ks.tier
	}
	t.start = s.clock.Now()
	if !t.matStart.IsZero() {
		// The object this read reads was written first, untimed: the
		// read is due that much later, and its request takes that much
		// less.
		d := t.start.Sub(t.matStart)
		t.sched = t.sched.Add(d)
		if t.req != nil {
			t.req.untimed += d
		}
	}
	if !t.setup {
		s.metrics.begin(t, t.start)
	}
	t.stage = stOpen
	switch t.op {
	case schema.OpWrite:
		t.moving = ks.exists && ks.tier != t.tier
		t.moveFrom, t.movePhys = ks.tier, ks.phys
		if t.phase != schema.PhaseEvict || !ks.exists {
			ks.version = t.seq // new contents; a demotion moves the same bytes
		}
		ks.logical, ks.phys = t.logical, t.phys
		t.ioTier = t.tier
	case schema.OpRead:
		t.ioTier = ks.tier
	case schema.OpDelete:
		t.stage = stRemove
	}
}

// stageOpen opens the object the blocks move.
func (s *sched) stageOpen(t *task) bool {
	t.stage = stIO
	t.from = nil
	if t.moving && t.phase == schema.PhaseEvict && len(s.hooks.Movers) > 0 && t.ks.phys <= t.movePhys {
		// A move: its bytes do not change, and a mover may copy
		// them from the copy the key leaves (when it is open). A copy
		// larger than that one (a tier of a larger alignment) has bytes
		// the old one lacks: they are generated, the whole copy's.
		t.from = t.ks.handles[t.moveFrom]
	}
	return s.openObject(t, t.ioTier, t.ks.phys, t.op == schema.OpWrite)
}

// stageSync makes a write durable (--fsync) where the object can be.
func (s *sched) stageSync(t *task) bool {
	t.stage = stClose
	if _, ok := t.obj.(backend.Syncer); ok && s.cfg.Fsync && t.op == schema.OpWrite {
		return s.callMeta(t, nil, metaSync, "", 0, false)
	}
	return true
}

// stageClose closes the object; a write's object now exists, and a
// move's source copy goes next.
func (s *sched) stageClose(t *task) bool {
	if t.meta == metaSync {
		// Its sync is back, and succeeded: a failed one ended t.
		s.counted.syncs++
	}
	t.stage = stFinish
	if t.op == schema.OpWrite {
		t.ks.tier, t.ks.exists = t.tier, true
		if t.moving {
			t.stage = stRemoveOld
		}
	}
	return s.callMeta(t, nil, metaClose, "", 0, false)
}

// stageRemove removes the key's object (a Delete, an eviction).
func (s *sched) stageRemove(t *task) bool {
	t.stage = stFinish
	ks := t.ks
	if !ks.exists {
		return true
	}
	ks.exists = false
	dropHandle(ks, ks.tier)
	return s.callMeta(t, s.tiers[ks.tier], metaRemove, ks.removedName(ks.tier), ks.phys, false)
}

// canWaitForSpace reports whether a task whose create its backend refused
// for space may wait for a release there (it then parks t): another task
// is running that will release space on that backend.
func (s *sched) canWaitForSpace(t *task) bool {
	b := t.b
	if b == nil {
		return false
	}
	releasing := b.releasing
	for _, p := range b.parked {
		if p.relB == b.idx && p.rel > 0 {
			releasing--
		}
	}
	if t.relB == b.idx && t.rel > 0 {
		releasing--
	}
	if releasing <= 0 {
		return false // no release will come
	}
	b.parked = append(b.parked, t)
	return true
}

// callMeta makes a metadata call for t: on the loop when the backend's
// calls are fast (it returns true: the stage is done), else on the pool
// (it returns false; the loop advances t when the call is back). Close is for t.obj,
// and is made the same way as the object's backend's Open.
func (s *sched) callMeta(t *task, b *tierBackend, kind uint8, name string, size int64, create bool) bool {
	if b == nil {
		b = t.b
	} else {
		t.b = b
	}
	if kind == metaClose && t.shared {
		t.meta, t.obj, t.shared = metaClose, nil, false // the key keeps it open
		return true
	}
	t.meta, t.metaB, t.metaName, t.metaSize, t.metaCreate = kind, b.b, name, size, create
	if b.caps.FastMeta && kind != metaSync {
		t.doMeta()
		return true
	}
	s.metaBusy++
	s.metaq <- t
	return false
}

// openObject opens t's object on tier (creating it when create is set)
// into t.obj, as callMeta does. On a backend with in-memory metadata the
// object stays open as its key's handle for the operations that follow,
// until a create replaces it or a remove deletes it: a read then takes it
// without an Open and a Close (with 4 KiB objects on the extent layout,
// the two were a tenth of the loop's time reading). Reads of a key run
// beside each other and share it; a create or a remove runs alone.
func (s *sched) openObject(t *task, tier schema.Tier, size int64, create bool) bool {
	b, ks := s.tiers[tier], t.ks
	t.objTier = tier
	if !b.caps.FastMeta {
		return s.callMeta(t, b, metaOpen, ks.objectName(tier), size, create)
	}
	if create {
		dropHandle(ks, tier) // the create replaces the object
	} else if h := ks.handles[tier]; h != nil {
		t.b, t.obj, t.shared = b, h, true
		return true
	}
	s.callMeta(t, b, metaOpen, ks.objectName(tier), size, create) // made here: fast
	if t.err == nil {
		ks.handles[tier], t.shared = t.obj, true
	}
	return true
}

// dropHandle closes ks's handle on tier, if it keeps one.
func dropHandle(ks *keyState, tier schema.Tier) {
	if h := ks.handles[tier]; h != nil {
		h.Close()
		ks.handles[tier] = nil
	}
}

// doMeta makes t's metadata call. It touches only t's fields, so it may
// run on a pool goroutine.
func (t *task) doMeta() {
	switch t.meta {
	case metaOpen:
		t.obj, t.err = t.metaB.Open(t.metaName, t.metaSize, t.metaCreate)
	case metaSync:
		t.err = t.obj.(backend.Syncer).Sync()
	case metaClose:
		if t.obj != nil {
			t.err = t.obj.Close()
			t.obj = nil
		}
	case metaRemove:
		var o backend.Object
		if o, t.err = t.metaB.Open(t.metaName, t.metaSize, false); t.err == nil {
			t.err = o.Remove()
		}
	}
}

// metaPool runs metadata calls until metaq is closed.
func (s *sched) metaPool(wg *sync.WaitGroup) {
	defer wg.Done()
	for t := range s.metaq {
		t.doMeta()
		s.metaDone <- t
		s.wake()
	}
}

// blocks starts the transfer of t's object (t.obj, of ks.phys bytes, the
// copy on tier) in blocks; it returns true when there is nothing to
// transfer.
func (s *sched) blocks(t *task, write bool, tier schema.Tier) bool {
	if t.b.caps.NoData || t.ks.phys == 0 {
		return true
	}
	t.write, t.ioTier, t.nextOff, t.inflight = write, tier, 0, 0
	if !write {
		t.from = nil
	}
	t.eng = s.engineFor(t.obj, t.from, s.tiers[tier])
	if t.eng != nil && t.from != nil {
		if m, ok := t.eng.e.(ioengine.Mover); !ok || !m.Moves(t.obj, t.from) {
			t.from = nil // no mover of these two: the bytes are written as any others
		}
	}
	if t.eng == nil {
		t.err = fmt.Errorf("no I/O engine serves %s objects", t.b.caps.Name)
		return true
	}
	if len(t.eng.waiting) == 0 {
		s.submit(t)
	}
	if t.nextOff < t.ks.phys {
		t.eng.waiting = append(t.eng.waiting, t)
	}
	return false
}

// engineFor is the engine for obj's blocks, an object of backend b: the
// first mover that moves them from from, when from is set, else the first
// engine that serves obj and is not another backend's own.
func (s *sched) engineFor(obj, from backend.Object, b *tierBackend) *engineSlot {
	if from != nil {
		for _, e := range s.engines {
			if m, ok := e.e.(ioengine.Mover); ok && m.Moves(obj, from) {
				return e
			}
		}
	}
	for _, e := range s.engines {
		if (e.only == nil || e.only == b) && e.e.Serves(obj) {
			return e
		}
	}
	return nil
}

// submit hands t's next blocks to its engine while it has room, and
// none once a block of t failed: the operation has failed, and the rest
// of its object would only keep the device from the run's other work.
func (s *sched) submit(t *task) {
	e, bs, size := t.eng, s.cfg.BlockSize, t.ks.phys
	for t.nextOff < size && e.inflight < e.depth && t.err == nil {
		var op *ioengine.Op
		if n := len(s.freeOps); n > 0 {
			op = s.freeOps[n-1]
			s.freeOps = s.freeOps[:n-1]
		} else {
			op = &ioengine.Op{}
		}
		*op = ioengine.Op{Obj: t.obj, Write: t.write, Off: t.nextOff, N: min(bs, size-t.nextOff),
			Key: t.ks.name, Version: t.ks.version, Tier: t.ioTier, From: t.from, User: t}
		t.nextOff += op.N
		t.inflight++
		e.inflight++
		e.used = true
		e.e.Submit(op)
	}
}

// blockDone takes a completed block back.
func (s *sched) blockDone(op *ioengine.Op) {
	t := op.User.(*task)
	e := t.eng
	e.inflight--
	t.inflight--
	if op.Err != nil && t.err == nil {
		t.err = op.Err
	}
	if fb := op.FirstByte; !fb.IsZero() && (t.firstByte.IsZero() || fb.Before(t.firstByte)) {
		t.firstByte = fb
	}
	*op = ioengine.Op{}
	s.freeOps = append(s.freeOps, op)
	// The engine has room: the oldest waiting transfers go first; a failed
	// one leaves the queue with its blocks in flight (it ends with them).
	for len(e.waiting) > 0 && e.inflight < e.depth {
		w := e.waiting[0]
		s.submit(w)
		if w.nextOff < w.ks.phys && w.err == nil {
			break
		}
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
	}
	if t.inflight == 0 && (t.nextOff >= t.ks.phys || t.err != nil) {
		if t.err != nil {
			e.drop(t)
		}
		s.advance(t)
	}
}

// drop removes t from e's waiting transfers (it failed).
func (e *engineSlot) drop(t *task) {
	for i, w := range e.waiting {
		if w == t {
			e.waiting = append(e.waiting[:i], e.waiting[i+1:]...)
			return
		}
	}
}

// finish records a task's end and completes it.
func (s *sched) finish(t *task) {
	if t.obj != nil {
		// A failed transfer leaves its object open; a kept handle is
		// closed too, so the next operation opens the object afresh.
		if t.shared {
			// Unless another read of the key is still moving blocks
			// through it: closing it under that read would fail it too
			// (ErrClosed), one I/O error counted as two failed
			// operations. The object itself is unchanged by a read.
			if !sharedByOther(t) {
				dropHandle(t.ks, t.objTier)
			}
		} else {
			t.obj.Close()
		}
		t.obj, t.shared = nil, false
	}
	end := s.clock.Now()
	// Abandoned when the run was stopped (a signal): the stop is the
	// run's error, and the storage did not fail the operation.
	abandoned := t.err != nil && s.ctx.Err() != nil && errors.Is(t.err, context.Canceled)
	s.endRow(t, end)
	if t.skip && t.req != nil {
		t.req.failed = true // the run stopped before the row ran
	}
	if t.kind == kindEvict && t.err == nil && !t.skip {
		s.counted.evictions++
		if b := s.tiers[schema.TierNVMe]; b != nil && t.relB == b.idx {
			s.counted.tier2Evictions++
		}
	}
	if abandoned {
		s.counted.abandoned++
		t.dropped = true
		if t.req != nil {
			t.req.abandoned = true
		}
		s.fail(context.Cause(s.ctx))
	} else if t.err != nil {
		if t.req != nil {
			t.req.failed = true
		}
		if t.kind == kindRow && !t.setup {
			s.metrics.failed(t)
		}
		// The row's key as the trace has it; the backend's error names
		// its object and where it lies, and a full file system's, which
		// one filled.
		terr := fullFileSystem(t.b, t.err)
		err := fmt.Errorf("%s %s %s %q: %w", t.op, t.tier, t.phase, t.ks.name, terr)
		if !t.moveEnd.IsZero() {
			// Its write is done (the copy on t.tier is the key's now):
			// the removal of the copy it moved from failed.
			err = fmt.Errorf("%s %s %s %q: removing its copy on %s: %w", t.op, t.tier, t.phase, t.ks.name, t.moveFrom, terr)
		}
		if t.kind == kindEvict {
			err = fmt.Errorf("capacity eviction of %s: %w", t.ks.name, terr)
		}
		if t.kind == kindCold {
			err = fmt.Errorf("preparing cold object %s: %w", t.ks.name, terr)
		}
		s.metrics.failure(err)
		s.fail(fmt.Errorf("replay: %w", err))
	}
	s.complete(t, end)
}

// fullFileSystem is cli.FullFileSystem for a task's backend, where it
// names its file system (backend.Rooted): a full file system's error
// names its type, mount point and space.
func fullFileSystem(b *tierBackend, err error) error {
	if b == nil {
		return err
	}
	if r, ok := b.b.(backend.Rooted); ok {
		return cli.FullFileSystem(r.Root(), err)
	}
	return err
}

// endRow records the end at end of t's timed operation: a row's that
// started, a success unless t.err says otherwise (abandoned when the
// run's stop ended it). A move's interval ended with its write
// (stRemoveOld): its latency is the write's, and it succeeds only if its
// source copy's removal did too.
func (s *sched) endRow(t *task, end time.Time) {
	if !s.timedRow(t) {
		return
	}
	if t.moveEnd.IsZero() {
		abandoned := t.err != nil && s.ctx.Err() != nil && errors.Is(t.err, context.Canceled)
		s.metrics.endBusy(t, t.start, end, abandoned)
	} else {
		end = t.moveEnd
	}
	if t.err == nil {
		s.metrics.succeeded(t, t.start, end)
		s.bytesDone.Add(t.logical)
	}
}

// timedRow reports whether t is a row of the measured run that started:
// one that counts in the figures.
func (s *sched) timedRow(t *task) bool {
	return t.kind == kindRow && !t.skip && !t.start.IsZero() && !t.setup
}

// sharedByOther reports whether a read of t's key other than t, not yet
// complete, uses t's kept handle.
func sharedByOther(t *task) bool {
	for _, r := range t.ks.reads {
		if r != t && r.shared && r.obj == t.obj && !r.done {
			return true
		}
	}
	return false
}

// blockData makes and checks the bytes of blocks for the engines: each
// object's bytes derive from (seed, key, version, offset).
type blockData struct {
	gen      *datagen.Generator
	verify   bool
	verified atomic.Int64
}

var (
	_ ioengine.Data         = (*blockData)(nil)
	_ ioengine.DeviceFiller = (*blockData)(nil)
)

func (d *blockData) Fill(p []byte, op *ioengine.Op) { d.gen.Fill(p, op.Key, op.Version, op.Off) }

func (d *blockData) FillDevice(p []byte, op *ioengine.Op) {
	d.gen.FillDevice(p, op.Key, op.Version, op.Off)
}

func (d *blockData) Check(p []byte, op *ioengine.Op) error {
	if !d.verify {
		return nil
	}
	bad, ok := d.gen.Verify(p, op.Key, op.Version, op.Off)
	if ok {
		d.verified.Add(int64(len(p)))
		return nil
	}
	start := bad &^ 15 // a 16-byte window holding the bad byte
	end := min(start+16, op.Off+int64(len(p)))
	want := make([]byte, 16)
	d.gen.Fill(want, op.Key, op.Version, start)
	i := bad - start
	return &VerifyError{Key: op.Key, Tier: op.Tier, Version: op.Version, Offset: bad,
		Got:  append([]byte(nil), p[bad-op.Off:end-op.Off]...),
		Want: want[i : end-start]}
}
