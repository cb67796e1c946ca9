package replay

import (
	"fmt"
	"math"

	"github.com/kvbench/kvbench/schema"
)

// The model is the trace's objects as the trace itself orders them: which
// backend holds each key and how many bytes each backend holds after each
// row, with the exact physical (scaled, aligned) sizes the replay
// allocates. Prepare runs it over the whole trace to size the backends
// (peak live bytes); the scheduler runs it again, row by row as it
// dispatches them, to decide what each row reserves and releases and, on a
// bounded backend, which least recently used objects to evict so that the
// trace, in its own order, always fits. Execution then never needs more
// than the model says: a row waits for the reservations and releases that
// precede it in trace order (reserve.go), so it never fails for space
// while the model fits.

// unbounded is the capacity of a backend with no limit.
const unbounded = math.MaxInt64

// mstate is a key's state in the model.
type mstate struct {
	exists  bool
	evicted bool // deleted by the model's capacity eviction
	tier    schema.Tier
	b       int8 // the backend index holding it, while exists
	phys    int64
	// The backend's LRU list, while exists and the backend is bounded.
	prev, next *keyState
}

// effect is what one row means for space: bytes to reserve before it
// starts, bytes it releases when it completes, and the objects to evict
// before it.
type effect struct {
	needB, relB int8 // backend indices; -1 for none
	need, rel   int64
	create      bool // the row makes its object: a write, or a read of a missing one
	cold, remat bool // a read of an object never written, or evicted for capacity
	victims     []*keyState
}

// model tracks live bytes per backend in trace order.
type model struct {
	tierB  [schema.NumTiers]int8 // backend index of each tier, -1 unmapped
	align  []int64               // per backend
	limit  []int64               // capacity per backend; unbounded for none
	live   []int64
	peak   []int64
	lruOld []*keyState // least recently used first
	lruNew []*keyState
	// coldSeen is the bytes of cold objects (read before any write) found so
	// far, per backend: Prepare adds their total back to the peak, since the
	// run writes them all before its clock starts.
	coldSeen []int64
	coldPeak []int64 // max(live - coldSeen)
	// leftSeen is the part of coldSeen that objects prepared for a
	// --users sample make (ColdObject.LeftOut), leftPeak max(live -
	// (coldSeen - leftSeen)): with them the peak when those objects are
	// made when first read instead (lazyPeak).
	leftSeen []int64
	leftPeak []int64
	// demSeen is the part of leftSeen that objects a demotion reads
	// first make (ColdObject.Demoted), demPeak max(live - (coldSeen -
	// demSeen)): with it the peak when only those are made when read
	// (samplePeak).
	demSeen []int64
	demPeak []int64
	victims []*keyState
	// count is the objects live on each backend (copies: a move holds
	// two for a while), peakCount its most, coldCount the cold objects
	// found: with the bytes they bound the peak at another size scale
	// (Plan.PeakObjects).
	count, peakCount, coldCount []int64
}

func newModel(tierB [schema.NumTiers]int8, align, limit []int64) *model {
	n := len(align)
	return &model{tierB: tierB, align: align, limit: limit,
		live: make([]int64, n), peak: make([]int64, n),
		lruOld: make([]*keyState, n), lruNew: make([]*keyState, n),
		coldSeen: make([]int64, n), coldPeak: make([]int64, n),
		leftSeen: make([]int64, n), leftPeak: make([]int64, n),
		demSeen: make([]int64, n), demPeak: make([]int64, n),
		count: make([]int64, n), peakCount: make([]int64, n), coldCount: make([]int64, n)}
}

// ErrTooBig stops a run whose trace has an object larger than a bounded
// backend's capacity: no eviction can make room for it.
var ErrTooBig = fmt.Errorf("object larger than the tier's capacity (raise --ram-budget or --capacity, or lower --size-scale)")

// apply runs one row through the model. ks is the row's key, phys its
// physical size on the row's tier's backend. The returned effect's victims
// slice is reused by the next call.
func (m *model) apply(ks *keyState, op schema.Op, tier schema.Tier, phys int64) (effect, error) {
	ef := effect{needB: -1, relB: -1}
	b := m.tierB[tier]
	s := &ks.m
	m.victims = m.victims[:0]
	switch op {
	case schema.OpRead:
		if s.exists {
			m.touch(ks)
			return ef, nil
		}
		ef.create, ef.remat, ef.cold = true, s.evicted, !s.evicted
		ef.needB, ef.need = b, phys
	case schema.OpWrite:
		ef.create = true
		switch {
		case s.exists && s.tier == tier:
			// A rewrite in place: the backend frees the old bytes as it
			// makes the new ones.
			if phys >= s.phys {
				ef.needB, ef.need = b, phys-s.phys
			} else {
				ef.relB, ef.rel = b, s.phys-phys
			}
		case s.exists:
			// A move: the new copy is written before the old one is
			// freed, so both are live for a while.
			ef.needB, ef.need = b, phys
			ef.relB, ef.rel = s.b, s.phys
		default:
			ef.needB, ef.need = b, phys
		}
	case schema.OpDelete:
		if !s.exists {
			// The trace deletes an object the capacity eviction took: it
			// is gone for the trace too, and leaves no state behind (a key
			// marked evicted was kept for ever, a few hundred bytes each).
			s.evicted = false
			return ef, nil
		}
		ef.relB, ef.rel = s.b, s.phys
		m.unlink(ks)
		m.live[s.b] -= s.phys
		m.count[s.b]--
		s.exists, s.evicted = false, false
		return ef, nil
	}
	if ef.needB >= 0 && ef.need > 0 {
		if err := m.makeRoom(ks, ef.needB, ef.need); err != nil {
			return ef, err
		}
		ef.victims = m.victims
		m.live[b] += ef.need
		m.peak[b] = max(m.peak[b], m.live[b])
		m.coldPeak[b] = max(m.coldPeak[b], m.live[b]-m.coldSeen[b])
		m.leftPeak[b] = max(m.leftPeak[b], m.live[b]-(m.coldSeen[b]-m.leftSeen[b]))
		m.demPeak[b] = max(m.demPeak[b], m.live[b]-(m.coldSeen[b]-m.demSeen[b]))
	}
	if ef.relB >= 0 {
		m.live[ef.relB] -= ef.rel
	}
	if !s.exists || s.tier != tier {
		// A new copy on b; a move frees the old one after.
		m.count[b]++
		m.peakCount[b] = max(m.peakCount[b], m.count[b])
		if s.exists {
			m.count[s.b]--
		}
	}
	if s.exists {
		m.unlink(ks)
	}
	s.exists, s.evicted, s.tier, s.b, s.phys = true, false, tier, b, phys
	m.pushNew(ks)
	return ef, nil
}

// seenCold notes that a cold object (prepared before the run) was found.
func (m *model) seenCold(b int8, phys int64) {
	m.coldSeen[b] += phys
	m.coldCount[b]++
}

// seenLeftOut notes that an object prepared for a --users sample (one a
// user left out wrote, read by one replayed) was found: written before the
// run like a cold object; demoted when a demotion reads it first.
func (m *model) seenLeftOut(b int8, phys int64, demoted bool) {
	m.seenCold(b, phys)
	m.leftSeen[b] += phys
	if demoted {
		m.demSeen[b] += phys
	}
}

// makeRoom evicts least recently used objects of backend b, other than
// keep, until need more bytes fit its limit.
func (m *model) makeRoom(keep *keyState, b int8, need int64) error {
	limit := m.limit[b]
	if limit == unbounded || m.live[b]+need <= limit {
		return nil
	}
	if need > limit {
		return fmt.Errorf("replay: %s: %d bytes on a tier of %d bytes: %w", keep.name, need, limit, ErrTooBig)
	}
	for v := m.lruOld[b]; v != nil && m.live[b]+need > limit; {
		next := v.m.next
		if v != keep {
			m.unlink(v)
			m.live[b] -= v.m.phys
			m.count[b]--
			v.m.exists, v.m.evicted = false, true
			m.victims = append(m.victims, v)
		}
		v = next
	}
	if m.live[b]+need > limit {
		return fmt.Errorf("replay: %s: %d bytes do not fit beside the %d bytes it holds on a tier of %d bytes: %w",
			keep.name, need, m.live[b], limit, ErrTooBig)
	}
	return nil
}

// touch makes ks the most recently used object of its backend.
func (m *model) touch(ks *keyState) {
	if m.limit[ks.m.b] == unbounded || m.lruNew[ks.m.b] == ks {
		return
	}
	m.unlink(ks)
	m.pushNew(ks)
}

func (m *model) pushNew(ks *keyState) {
	b := ks.m.b
	if m.limit[b] == unbounded {
		return
	}
	ks.m.prev, ks.m.next = m.lruNew[b], nil
	if m.lruNew[b] != nil {
		m.lruNew[b].m.next = ks
	} else {
		m.lruOld[b] = ks
	}
	m.lruNew[b] = ks
}

func (m *model) unlink(ks *keyState) {
	b := ks.m.b
	if m.limit[b] == unbounded {
		return
	}
	if ks.m.prev != nil {
		ks.m.prev.m.next = ks.m.next
	} else if m.lruOld[b] == ks {
		m.lruOld[b] = ks.m.next
	}
	if ks.m.next != nil {
		ks.m.next.m.prev = ks.m.prev
	} else if m.lruNew[b] == ks {
		m.lruNew[b] = ks.m.prev
	}
	ks.m.prev, ks.m.next = nil, nil
}
