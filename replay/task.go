package replay

import (
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// keyState is an object: its state in the model (trace order) and in the
// execution (what the tasks that ran so far made of it). A task owns the
// execution state while it runs: per-key order lets no other task of the
// key run beside it, except reads beside reads, which only read it.
//
// It is the run's memory per live object (with the key, its map entry and
// the backend's own): its fields are laid out to fit the allocator's
// 192-byte class (TestKeyStateSize).
type keyState struct {
	name string
	// oname is its object's name on tier otier (objectName), the last
	// one named: the rows of an object on a tier name it once. One tier's
	// name, not each tier's, kept 48 bytes per object less.
	oname string
	// handles are its objects kept open, by tier, on backends with
	// in-memory metadata (exec.go's openObject): reads use them without
	// an Open and a Close each.
	handles [schema.NumTiers]backend.Object
	m       mstate

	exists      bool
	tier, otier schema.Tier
	pending     int32 // tasks of the key not yet complete (at most the window's, 4 x --workers, and its evictions)
	logical     int64
	phys        int64
	// version names its contents: the seq of the task that wrote them,
	// unique in the run even across a Delete, after which the key's
	// state is dropped and a new one made for its next write.
	version uint64

	// Ordering: reads wait for the last write-like task (a Write, a
	// Delete, an eviction, a read that creates its object); write-like
	// tasks wait for that and for every read registered since.
	lastW *task
	reads []*task
}

// reqState tracks one request's rows.
type reqState struct {
	id      reqID
	first   time.Time
	pending int
	closed  bool
	// untimed is the time its rows spent writing objects they read that
	// did not exist (task.matStart), as far as it delayed its later rows
	// (stageStart): not in its latency.
	untimed time.Duration
	// cut: the window closed on it with rows not released; it is not a
	// completed request. cutAt, unless zero, is the window's end, when a
	// row of it left was due: it took at least until then.
	cut   bool
	cutAt time.Time
	// abandoned: a row of it was abandoned when the run was stopped
	// (sched.finish); it is not a completed request either.
	abandoned bool
	// failed: a row of it failed, or did not run because the run had
	// stopped (sched.finish): it did not complete, and its latency would
	// be that of the rows that did.
	failed bool
	qos    schema.QoS
	// setup: a request of the setup's rows (runSetup), measured in no
	// figure.
	setup bool
	last  *task
	// lastDone is when the last of its rows so far completed.
	lastDone time.Time
}

type reqID struct {
	src int
	id  uint64
}

// task kinds besides trace rows.
const (
	kindRow   uint8 = iota
	kindEvict       // the model's capacity eviction of an object
	kindCold        // a cold object written before the clock starts
)

// task is one row, or one of the scheduler's own operations, to execute.
type task struct {
	kind    uint8
	op      schema.Op
	tier    schema.Tier
	phase   schema.Phase
	logical int64
	phys    int64
	ks      *keyState
	req     *reqState
	sched   time.Time
	// seq is its place in dispatch order, from 1 (sched.dispatched): the
	// version of the contents it writes, unique in the run, so that a
	// key written again after a Delete gets new bytes (not the first
	// write's again: no sector of one repeats the other's, and --verify
	// does not take the old object's bytes for the new).
	seq uint64

	// Space (reserve.go).
	needB, relB int8
	need, rel   int64
	reserved    bool
	create      bool
	cold, remat bool
	// leftOut: a cold object written for a --users sample
	// (ColdObject.LeftOut).
	leftOut bool
	// setup: a row run before the clock (runSetup), measured in no
	// figure.
	setup bool
	// onTime: a row a closed loop released at its trace time (a row of
	// no user), whose lag metrics.onTimeLag keeps apart.
	onTime bool

	// Ordering.
	deps int32
	succ []*task
	done bool

	// Execution (exec.go).
	stage    uint8
	started  bool
	skip     bool // the run stopped before the task started
	dropped  bool // abandoned in flight when the run was stopped: not done
	b        *tierBackend
	obj      backend.Object
	eng      *engineSlot
	shared   bool        // obj is its key's kept handle: not closed by the task
	objTier  schema.Tier // the tier of obj
	ioTier   schema.Tier // the copy the blocks move
	write    bool        // the blocks' direction
	nextOff  int64
	inflight int
	err      error
	start    time.Time
	parked   bool
	// matStart is when a read began writing the object it reads, which
	// did not exist (rematerialised, or cold and not prepared): untimed
	// (design section 4), so the write's time is taken off the read's
	// lag, its latency from schedule and its request's latency.
	matStart time.Time
	// ioStart and ioEnd bound the operation's device span (results.Device):
	// its first I/O submitted, its last I/O (or its fdatasync) done.
	ioStart, ioEnd time.Time
	// firstByte is when the first byte of the operation's reads came,
	// for a backend that knows it (backend.FirstByteReader); zero
	// otherwise.
	firstByte time.Time
	// Metadata calls off the loop: the call and its arguments.
	meta       uint8
	metaB      backend.Backend
	metaName   string
	metaSize   int64
	metaCreate bool
	// A move's source copy, removed once the new one is written.
	moveFrom schema.Tier
	movePhys int64
	moving   bool
	// moveEnd is when a move's write ended, before its source copy was
	// removed: the end of its latency and busy time.
	moveEnd time.Time
	// from is the key's copy a mover copies a move's bytes from (nil:
	// the bytes are generated).
	from backend.Object
}
