package sim

import (
	"math"
	"time"
	"unsafe"

	"github.com/kvbench/kvbench/schema"
)

// object is one KV cache entry: a key's bytes on one tier.
type object struct {
	key     string
	size    int64
	tokens  int
	tier    schema.Tier
	gone    bool   // deleted from the cache: a keyRef holding it looks again
	indexed bool   // in the cache's map (not an owned keyRef's)
	lastUse uint64 // the LRU clock at creation or last hit
}

// keyBytes returns the key as the trace rows carry it, without a copy: a
// Sink neither keeps nor modifies a row's key.
func (o *object) keyBytes() []byte { return unsafe.Slice(unsafe.StringData(o.key), len(o.key)) }

// keyRef is a key with the object last found under it, so that a key read
// again and again (a conversation's turns, a request's decode batches) is
// looked up in the cache's map once while its object lives.
//
// An owned keyRef is the only way to its key's object: a conversation's
// turn, whose key no other request or phase names. Its object is not in
// the cache's map, which would only grow with keys no lookup asks for.
type keyRef struct {
	key   string
	o     *object
	owned bool
}

// find returns ref's object, nil when the key has none.
func (c *cache) find(ref *keyRef) *object {
	if o := ref.o; o != nil && !o.gone {
		return o
	}
	ref.o = nil
	if !ref.owned {
		ref.o = c.objects[ref.key]
	}
	return ref.o
}

// lruEntry is an object in its tier's LRU heap, ordered by use: the
// object's lastUse when the entry last moved. A hit only advances the
// object's lastUse, so an entry's use may be stale (older); the heap is
// mended at its head, the only place eviction looks.
type lruEntry struct {
	use uint64
	o   *object
}

// lruHeap orders a tier's objects by lastUse, least recent first. The
// reference sorts a snapshot of the tier by (last_access, access_count) on
// every eviction call (O(n log n)); LRU clock values are unique, so a heap
// gives the same order, and mending stale entries only at the head makes a
// hit O(1) and an eviction O(log n) amortised.
type lruHeap struct{ binHeap[lruEntry, *lruEntry] }

func (e *lruEntry) before(o *lruEntry) bool { return e.use < o.use }

// push adds o with its current lastUse.
func (h *lruHeap) push(o *object) { h.binHeap.push(lruEntry{o.lastUse, o}) }

// head returns the least recently used object, mending stale entries on
// the way: an entry whose use is older than its object's lastUse sinks to
// its true place. Entries hold lower bounds of their objects' lastUse, so
// a fresh entry at the head is the true least recently used.
func (h *lruHeap) head() *object {
	for {
		e := &h.s[0]
		if e.use == e.o.lastUse {
			return e.o
		}
		e.use = e.o.lastUse
		h.down(0)
	}
}

// pop removes the head; head must have returned it.
func (h *lruHeap) pop() { h.binHeap.pop() }

// tierState is one tier's capacity, usage and LRU order.
type tierState struct {
	limit float64 // bytes; +Inf for an unbounded NVMe tier
	usage int64   // reserved bytes, as the reference tracks them
	bytes int64   // bytes of the objects on the tier
	count int     // objects on the tier
	// lru orders the tier's objects for eviction; an unbounded tier never
	// evicts and keeps none.
	lru  lruHeap
	peak int64
	// dropped is the bytes of the objects deleted from the tier and not
	// written since: live still in a trace without its Delete rows (the
	// mlperf dialect's), whose peak is dialectPeak.
	dropped, dialectPeak int64
}

// cacheStats are the reference's MultiTierCache counters (reference section
// 5, cache_stats), plus kvbench's own.
type cacheStats struct {
	hits, misses                 int64
	evictions                    int64
	offloadsCPU, offloadsStorage int64
	offloadsObject               int64 // objects written to Tier-3
	prefillWrites, decodeReads   int64
	tierWritten, tierRead        [schema.NumTiers]int64
	systemPromptHits, commonHits int64
	userHits, multiTurnHits      int64
	readBytes, writeBytes        int64
	readOps, writeOps            int64
	tierTokens                   [schema.NumTiers]float64 // storage tiers' (Tier-2, Tier-3): see CacheStats.StorageTokensProcessed
	// samples counts the operations the reference takes a latency
	// sample of, by tier: a new object's write and a hit's read, never a
	// demotion's. Its per-tier latency keys and storage_health's latency
	// criteria exist where it has samples.
	samples           [schema.NumTiers][schema.NumOps]int64
	deletes           int64
	forcedWrites      int64
	racedReservations int64 // into the NVMe tier
	// racedCPUReservations are the races into the CPU tier (below a GPU
	// tier).
	racedCPUReservations int64
	// emptyOffGPU counts the objects of 0 bytes written below a GPU tier
	// of no capacity, where kv-cache.py writes them (see ensureSpace).
	emptyOffGPU int64
}

// resetStats zeroes the reference's counters (its reset_stats, after
// preconditioning and decode-only pre-population), keeping kvbench's own
// count of objects deleted and writes forced, which the result's object
// count needs.
func (c *cache) resetStats() {
	c.stats = cacheStats{deletes: c.stats.deletes, forcedWrites: c.stats.forcedWrites, racedReservations: c.stats.racedReservations,
		racedCPUReservations: c.stats.racedCPUReservations, emptyOffGPU: c.stats.emptyOffGPU}
}

// cacheType labels an access for the hit statistics, as the reference does.
type cacheType uint8

const (
	cacheUser cacheType = iota
	cacheSystem
	cacheCommon
	cacheMultiTurn
)

// cache is the reference's MultiTierCache in virtual time: the GPU, CPU and
// NVMe tiers with waterfall LRU eviction (reference sections 1.3-1.4). It
// emits one trace row per object operation through emit.
type cache struct {
	tiers   [schema.NumTiers]tierState
	objects map[string]*object // the objects not owned by a keyRef
	live    int64              // objects in the cache
	slab    []object           // see newObject
	clock   uint64
	ev      Eviction
	bpt     int64 // bytes per token of the whole model
	tp      int64
	stats   cacheStats
	// last is the last tier, which a write that finds no room above falls
	// to: NVMe, or Tier-3 with Config.ObjectTier.
	last schema.Tier
	// raceAll and raceWindow model kv-cache.py's reservation leak in the
	// tiers that take demotions (Config.NVMeAccounting): with raceAll
	// every demotion into a bounded tier races; otherwise one races when
	// another request demoted into the same tier less than raceWindow of
	// virtual time before (0: none races).
	raceAll    bool
	raceWindow [schema.NumTiers]time.Duration
	// now and req are the virtual time and the request (its id; 0 for
	// none) of the I/O under way; lastDemotion and lastDemotionReq the
	// last demotion into each tier, and by which request.
	now             time.Duration
	req             uint64
	lastDemotion    [schema.NumTiers]time.Duration
	lastDemotionReq [schema.NumTiers]uint64
	emit            func(op schema.Op, o *object, tier schema.Tier, phase schema.Phase) error
	// deleted holds the objects the Delete rows took, by key, until the
	// key is written again (tierState.dropped), with noDeletesPeak
	// (Config.NoDeletesPeak) alone.
	noDeletesPeak bool
	deleted       map[string]deletedObject
}

// deletedObject is where an object was deleted from, and its size.
type deletedObject struct {
	tier schema.Tier
	size int64
}

func newCache(cfg *Config, bpt int64, emit func(schema.Op, *object, schema.Tier, schema.Phase) error) *cache {
	c := &cache{
		objects:       make(map[string]*object),
		ev:            cfg.Eviction,
		bpt:           bpt,
		tp:            int64(max(1, cfg.TensorParallel)),
		emit:          emit,
		noDeletesPeak: cfg.NoDeletesPeak,
	}
	c.tiers[schema.TierGPU].limit = cfg.GPUMemGB * float64(max(1, cfg.NumGPUs)) * GiB
	c.tiers[schema.TierCPU].limit = cfg.CPUMemGB * GiB
	c.tiers[schema.TierNVMe].limit = math.Inf(1)
	if cfg.StorageCapacityGB > 0 {
		c.tiers[schema.TierNVMe].limit = cfg.StorageCapacityGB * GiB
	}
	c.last = schema.TierNVMe
	if cfg.ObjectTier {
		c.tiers[schema.TierObject].limit = math.Inf(1)
		c.last = schema.TierObject
	}
	return c
}

// raced reports whether a demotion into tier t races another worker's in
// the reference's accounting (Config.NVMeAccounting): only into a bounded
// tier (the CPU tier below a GPU tier, or a bounded NVMe tier), every one
// with raceAll, else one that another request's demotion into t preceded
// by raceWindow[t] or less. It draws nothing: the run's draws are the same
// in both modes.
func (c *cache) raced(t schema.Tier) bool {
	switch {
	case math.IsInf(c.tiers[t].limit, 1):
		return false
	case c.raceAll:
		return true
	}
	prev := c.lastDemotionReq[t]
	return c.raceWindow[t] > 0 && prev != 0 && prev != c.req && c.now-c.lastDemotion[t] <= c.raceWindow[t]
}

func (c *cache) tick() uint64 {
	c.clock++
	return c.clock
}

// sizeOf is the per-rank object size of tokens: bpt x tokens / TP, floored.
func (c *cache) sizeOf(tokens int) int64 { return c.bpt * int64(tokens) / c.tp }

func (c *cache) reserve(t schema.Tier, n int64) {
	ts := &c.tiers[t]
	ts.usage = max(0, ts.usage+n)
}

// place puts o on tier t's LRU order and byte count.
func (c *cache) place(o *object, t schema.Tier) {
	o.tier = t
	ts := &c.tiers[t]
	if !math.IsInf(ts.limit, 1) {
		ts.lru.push(o)
	}
	ts.count++
	ts.bytes += o.size
	ts.peak = max(ts.peak, ts.bytes)
	ts.dialectPeak = max(ts.dialectPeak, ts.bytes+ts.dropped)
}

// unplace takes o, the head of its tier's LRU order (only the least
// recently used object is ever demoted or deleted), off its tier.
func (c *cache) unplace(o *object) {
	ts := &c.tiers[o.tier]
	if ts.lru.head() != o {
		panic("sim: unplace of an object that is not its tier's least recently used")
	}
	ts.lru.pop()
	ts.count--
	ts.bytes -= o.size
}

// newObject returns a zeroed object from a slab: a run's objects are
// allocated in blocks, not one by one.
func (c *cache) newObject() *object {
	if len(c.slab) == 0 {
		c.slab = make([]object, 512)
	}
	o := &c.slab[0]
	c.slab = c.slab[1:]
	return o
}

// allocate writes a new object of tokens under key to the fastest tier with
// room, demoting older objects as needed; an existing key is left as it is
// and writes no row (the reference's allocate_cache).
func (c *cache) allocate(key string, tokens int, phase schema.Phase) (*object, error) {
	ref := keyRef{key: key}
	return c.allocateRef(&ref, tokens, phase)
}

// allocateRef is allocate through a keyRef, which it updates.
func (c *cache) allocateRef(ref *keyRef, tokens int, phase schema.Phase) (*object, error) {
	if o := c.find(ref); o != nil {
		return o, nil
	}
	key := ref.key
	size := c.sizeOf(tokens)
	if phase == schema.PhasePrefill {
		c.stats.prefillWrites++
	}
	c.stats.writeOps++
	c.stats.writeBytes += size
	tier, placed := schema.TierGPU, false
	for t := range c.last + 1 {
		ok, err := c.ensureSpace(t, size, 0)
		if err != nil {
			return nil, err
		}
		if ok {
			tier, placed = t, true
			break
		}
	}
	if !placed {
		// "All tiers full": the reference forces the write to NVMe.
		tier = schema.TierNVMe
		c.reserve(tier, size)
		c.stats.forcedWrites++
	}
	if d, ok := c.deleted[key]; ok {
		// Without the Delete rows, this Write moves the deleted object.
		c.tiers[d.tier].dropped -= d.size
		delete(c.deleted, key)
	}
	o := c.newObject()
	*o = object{key: key, size: size, tokens: tokens, lastUse: c.tick(), indexed: !ref.owned}
	if o.indexed {
		c.objects[key] = o
	}
	ref.o = o
	c.live++
	c.place(o, tier)
	if err := c.emit(schema.OpWrite, o, tier, phase); err != nil {
		return nil, err
	}
	c.stats.tierWritten[tier] += size
	c.stats.samples[tier][schema.OpWrite]++
	if size == 0 && tier != schema.TierGPU && c.tiers[schema.TierGPU].limit <= 0 {
		c.stats.emptyOffGPU++
	}
	switch tier {
	case schema.TierCPU:
		c.stats.offloadsCPU++
	case schema.TierNVMe:
		c.stats.offloadsStorage++
		c.stats.tierTokens[tier] += float64(tokens)
	case schema.TierObject:
		c.stats.offloadsObject++
		c.stats.tierTokens[tier] += float64(tokens)
	}
	return o, nil
}

// access reads a whole object if it is cached, refreshing its recency (it
// is never promoted); a miss writes no row.
func (c *cache) access(key string, phase schema.Phase, ct cacheType) (*object, error) {
	ref := keyRef{key: key}
	return c.accessRef(&ref, phase, ct)
}

// accessRef is access through a keyRef, which it updates.
func (c *cache) accessRef(ref *keyRef, phase schema.Phase, ct cacheType) (*object, error) {
	o := c.find(ref)
	if o == nil {
		c.stats.misses++
		return nil, nil
	}
	o.lastUse = c.tick()
	c.stats.hits++
	switch ct {
	case cacheSystem:
		c.stats.systemPromptHits++
	case cacheCommon:
		c.stats.commonHits++
	case cacheMultiTurn:
		c.stats.multiTurnHits++
	default:
		c.stats.userHits++
	}
	c.stats.tierRead[o.tier] += o.size
	c.stats.samples[o.tier][schema.OpRead]++
	if phase == schema.PhaseDecode {
		c.stats.decodeReads++
	}
	c.stats.readOps++
	c.stats.readBytes += o.size
	if err := c.emit(schema.OpRead, o, o.tier, phase); err != nil {
		return nil, err
	}
	if o.tier >= schema.TierNVMe && c.bpt > 0 { // storage: NVMe, or Tier-3
		// An object holds one rank's share of its tokens' bytes: a read
		// of it moves all its tokens, as the reference counts them since
		// mlcommons/storage #402 (before, TP times too few).
		c.stats.tierTokens[o.tier] += float64(o.size) * float64(c.tp) / float64(c.bpt)
	}
	return o, nil
}

// ensureSpace is the reference's _ensure_space_in_tier: it makes room for
// required bytes on tier t by evicting least-recently-used objects
// (demoting them one tier down, deepest first, or deleting them from a
// bounded last tier) and reserves the room. It reports false when t cannot
// take the object.
func (c *cache) ensureSpace(t schema.Tier, required int64, depth int) (bool, error) {
	ts := &c.tiers[t]
	last := t == c.last
	if last && math.IsInf(ts.limit, 1) {
		c.reserve(t, required)
		return true, nil
	}
	if !last && ts.limit <= 0 {
		// A tier of no capacity (--gpu-mem-gb 0, --cpu-mem-gb 0) is
		// disabled: it takes nothing. kv-cache.py's rule would still put
		// an object of 0 bytes there (0 > 0.95 x 0 is false, 0 + 0 fits
		// 0), so that a BurstGPT failed request (0 tokens) wrote Tier-0
		// rows into a trace without a GPU tier, which kvreplay refuses.
		return false, nil
	}
	if depth > c.ev.MaxRecursionDepth {
		return false, nil
	}
	limit := ts.limit
	target := limit * c.ev.TargetUsageRatio
	if !last && float64(required) > limit*c.ev.LargeEntryLimitRatio {
		return false, nil
	}
	effective := target
	if last {
		effective = limit
	}
	maxEvictions := min(c.ev.MaxEvictionsHardCap, max(c.ev.MaxEvictionsMin, ts.lru.Len()+100))
	for n := 0; n < maxEvictions; n++ {
		if float64(ts.usage+required) <= effective || float64(ts.usage) < limit*0.05 {
			c.reserve(t, required)
			return true, nil
		}
		if ts.lru.Len() == 0 {
			// The reference recounts usage from its entries, then decides.
			ts.usage = ts.bytes
			if float64(ts.usage+required) <= effective || last {
				c.reserve(t, required)
				return true, nil
			}
			return false, nil
		}
		if n == 0 && !last && float64(ts.bytes) < limit*0.2 && float64(required) > target*0.5 {
			return false, nil // little to evict for a large object: try the next tier
		}
		victim := ts.lru.head()
		if last {
			if err := c.remove(victim); err != nil {
				return false, err
			}
			continue
		}
		next := t + 1
		ok, err := c.ensureSpace(next, victim.size, depth+1)
		if err != nil || !ok {
			return false, err // "could not make space in <next> for demotion"
		}
		if c.raced(next) {
			// kv-cache.py's race: another worker with the same stale
			// snapshot reserves the victim's space too (evicting for it),
			// and its demotion, finding the victim moved, never gives the
			// reservation back.
			if _, err := c.ensureSpace(next, victim.size, depth+1); err != nil {
				return false, err
			}
			if next == schema.TierCPU {
				c.stats.racedCPUReservations++
			} else {
				c.stats.racedReservations++
			}
		}
		if err := c.demote(victim, next); err != nil {
			return false, err
		}
		c.lastDemotion[next], c.lastDemotionReq[next] = c.now, c.req
	}
	if last {
		c.reserve(t, required)
		return true, nil
	}
	return false, nil
}

// demote moves o one tier down: an Evict Read on its tier, then an Evict
// Write on the next. Its recency is kept.
func (c *cache) demote(o *object, to schema.Tier) error {
	from := o.tier
	if err := c.emit(schema.OpRead, o, from, schema.PhaseEvict); err != nil {
		return err
	}
	if err := c.emit(schema.OpWrite, o, to, schema.PhaseEvict); err != nil {
		return err
	}
	c.unplace(o)
	c.reserve(from, -o.size)
	c.place(o, to)
	c.stats.evictions++
	// A demotion reads the object out of its tier and writes it to the
	// next: both count in the tiers' bytes, as the reference counts them
	// since mlcommons/storage #408 and #420 (before, neither did).
	c.stats.tierRead[from] += o.size
	c.stats.tierWritten[to] += o.size
	switch to {
	case schema.TierCPU:
		c.stats.offloadsCPU++
	case schema.TierNVMe, schema.TierObject:
		if to == schema.TierNVMe {
			c.stats.offloadsStorage++
		} else {
			c.stats.offloadsObject++
		}
		if perRank := c.bpt / c.tp; perRank > 0 {
			c.stats.tierTokens[to] += float64(o.size / perRank)
		}
	}
	return nil
}

// remove deletes o from the last tier for capacity: a Delete row, which
// the reference leaves out of its traces.
func (c *cache) remove(o *object) error {
	if err := c.emit(schema.OpDelete, o, o.tier, schema.PhaseEvict); err != nil {
		return err
	}
	c.unplace(o)
	c.reserve(o.tier, -o.size)
	if o.indexed {
		delete(c.objects, o.key)
	}
	if c.noDeletesPeak {
		if c.deleted == nil {
			c.deleted = map[string]deletedObject{}
		}
		c.deleted[o.key] = deletedObject{o.tier, o.size}
		c.tiers[o.tier].dropped += o.size
	}
	o.gone = true
	c.live--
	c.stats.evictions++
	c.stats.deletes++
	return nil
}

// entries returns the number of objects on tier t.
func (c *cache) entries(t schema.Tier) int { return c.tiers[t].count }
