package replay

import (
	"fmt"
	"sync/atomic"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
)

// Sharding splits one trace among the ranks of a multi-host run
// (Config.Rank of Config.Ranks), each rank a kvreplay process:
//
//	key   each row goes to the rank its key hashes to (FNV-1a 64): every
//	      row of an object, whatever its tier, phase or request (the Evict
//	      pair that moves it during another user's request, a later turn's
//	      or a shared prefix's read), so no rank reads an object another
//	      rank wrote. A request's rows stay together only where its objects
//	      hash to one rank: one that touches objects of several ranks runs
//	      in part on each, in its order there, and each rank times its part
//	      as a request. Every row runs once: merged, the ranks move the
//	      trace's bytes exactly.
//	user  each user's requests go to one rank, by a stable hash of the
//	      user (a closed loop keeps whole users together); rows of no user
//	      go by key. An object's moves and deletes (Evict rows, Deletes)
//	      go to the rank that touched it first, whichever request carries
//	      them (the trace's LRU demotes one user's objects during another's
//	      request): that rank replays them as rows outside requests, at
//	      their trace times, as a closed loop of --users N does the moves
//	      of its users' objects, so each object is moved where it was
//	      written. Reads go with their request: one of an object another
//	      rank wrote (a shared document, a prefix) runs where it was not
//	      written (made when first read); each rank says how many.
//	tp    every rank replays every row: the trace holds one tensor-parallel
//	      rank's sizes, so N ranks model an N-way TP group, N times the
//	      bytes.
//
// Each rank paces its rows, and counts --duration's window, from the
// traces' first row, whichever rank's it is (rowReader.origin), so that
// ranks started at one instant replay the trace's times in step.

// Shard modes.
const (
	ShardKey  = "key"
	ShardUser = "user"
	ShardTP   = "tp"
)

// sharder decides which rows are this rank's. Sharding by user, it keeps,
// per trace, the request being read, so a request's rows of no user follow
// its first.
type sharder struct {
	rank, ranks int
	mode        string
	req         []uint64
	reqMine     []bool
	// Sharding by key: the request being read in each trace (its rows
	// are consecutive), whether its rows so far are this rank's and
	// another's; the requests this rank has rows of, and those of them
	// that also have rows on another rank.
	keyReq          []keyRequest
	requests, split int64
	// Sharding by key in an open loop, which releases the rows in the
	// order read (byRelease): the rows kept so far, and the count of them
	// the run released, final once the window closed (ran); a request
	// read to its end counts once its first row was released, pending
	// until then, and never if the window closed first, so that the rows
	// read after it (rows_missed's) or ahead of the run count no request.
	byRelease bool
	kept      int64
	released  atomic.Int64
	final     atomic.Bool
	pending   []keyRequest
	// Sharding by user: the rank each object's first row went to (this
	// one or another), by trace and key (traces side by side may name
	// theirs alike), every rank's objects, so in a keyTable (about 44
	// bytes per object, where a map[string]bool took 88); this rank's rows
	// of objects first touched on another rank, and the moves and deletes
	// of its objects it took from other ranks' requests.
	owner            []keyTable
	foreign, adopted int64
}

type keyRequest struct {
	id          uint64
	mine, other bool
	first       int64 // the kept row it starts at, while mine
}

// newSharder returns the rank's sharder, nil when every row is the
// rank's (one rank, or tp).
func newSharder(cfg *Config, nsrc int) *sharder {
	if cfg.Ranks <= 1 || cfg.Shard == "" || cfg.Shard == ShardTP {
		return nil
	}
	s := &sharder{rank: cfg.Rank, ranks: cfg.Ranks, mode: cfg.Shard, req: make([]uint64, nsrc), reqMine: make([]bool, nsrc),
		keyReq: make([]keyRequest, nsrc)}
	if s.mode == ShardUser {
		s.owner = make([]keyTable, nsrc)
	}
	return s
}

// mine reports whether rec, a row of trace src read in order, is this
// rank's. A nil sharder keeps every row.
func (s *sharder) mine(rec *schema.Record, src int) bool {
	if s == nil {
		return true
	}
	if s.mode == ShardKey {
		// An object's rows never follow a request: a request reads
		// objects other requests wrote, and carries the Evict pairs of
		// other users' objects.
		mine := int(hashKey(rec.Key)%uint64(s.ranks)) == s.rank
		if rec.Request != 0 {
			k := &s.keyReq[src]
			if k.id != rec.Request {
				s.endRequest(k)
				*k = keyRequest{id: rec.Request}
			}
			if mine && !k.mine {
				k.first = s.kept
			}
			k.mine, k.other = k.mine || mine, k.other || !mine
		}
		if mine {
			s.kept++
		}
		return mine
	}
	var mine bool
	if rec.Request != 0 && rec.Request == s.req[src] {
		mine = s.reqMine[src]
	} else {
		var h uint64
		if s.mode == ShardUser && rec.User != 0 {
			h = mix(rec.User)
		} else {
			h = hashKey(rec.Key)
		}
		mine = int(h%uint64(s.ranks)) == s.rank
		s.req[src], s.reqMine[src] = rec.Request, mine
	}
	if s.owner != nil {
		return s.byOwner(rec, src, mine)
	}
	return mine
}

// byOwner records which rank touched rec's object (its key in trace
// src: traces side by side may name theirs alike) first, and sends its
// moves and deletes there: a rank takes those of its objects that other
// ranks' requests carry, as rows outside requests (rec is changed so),
// and leaves its requests' moves of other ranks' objects to them. It
// counts this rank's other rows of objects another rank touched first.
func (s *sharder) byOwner(rec *schema.Record, src int, mine bool) bool {
	first, added := s.owner[src].add(rec.Key, mine)
	if added {
		return mine
	}
	if first == mine {
		return mine
	}
	if rec.Phase == schema.PhaseEvict || rec.Op == schema.OpDelete {
		if first {
			rec.Request, rec.User = 0, 0
			s.adopted++
		}
		return first
	}
	if mine {
		s.foreign++
	}
	return mine
}

// endRequest counts the request k, whose rows have all been read, once
// the run released its first row (byRelease).
func (s *sharder) endRequest(k *keyRequest) {
	if k.id == 0 || !k.mine {
		return
	}
	if !s.byRelease {
		s.count(k)
		return
	}
	final := s.final.Load() // before released: once set, released is the run's
	released := s.released.Load()
	switch {
	case k.first < released:
		s.count(k)
	case !final:
		s.pending = append(s.pending, *k)
	}
	// Requests end about in the order they start: those pending are few,
	// the rows read ahead of the run's.
	n := 0
	for n < len(s.pending) && s.pending[n].first < released {
		s.count(&s.pending[n])
		n++
	}
	s.pending = s.pending[n:]
}

// count counts k as a request this rank ran.
func (s *sharder) count(k *keyRequest) {
	s.requests++
	if k.other {
		s.split++
	}
}

// trackReleased makes the sharder count the requests the run released
// rows of, not those read (byRelease): that of an open loop, which calls
// ran and ranAll. Called before the reader starts; a nil sharder ignores
// it.
func (s *sharder) trackReleased() {
	if s != nil && s.mode == ShardKey {
		s.byRelease = true
	}
}

// ran says that the run released the first n rows this rank kept; a nil
// sharder, or one not byRelease, ignores it.
func (s *sharder) ran(n int64) {
	if s != nil && s.byRelease {
		s.released.Store(n)
	}
}

// ranAll says that the run releases no more rows: the window closed.
func (s *sharder) ranAll() {
	if s != nil && s.byRelease {
		s.final.Store(true)
	}
}

// splitWarning says, once the traces have been read, how many of this
// rank's requests have rows on other ranks too ("" when none): a merge of
// the ranks' request figures is then one of parts of requests.
func (s *sharder) splitWarning() string {
	if s == nil {
		return ""
	}
	if s.mode == ShardUser {
		if s.foreign == 0 {
			return ""
		}
		return fmt.Sprintf("--shard user: %d rows this rank ran are of objects another rank touched first (a shared document or prefix): "+
			"a request's reads follow its user, so this rank read objects it did not write (made when first read), where their "+
			"writer's rank moves them; the ranks' tiers are not one replay's (--shard key keeps each object on one rank)", s.foreign)
	}
	if s.mode != ShardKey {
		return ""
	}
	for i := range s.keyReq {
		s.endRequest(&s.keyReq[i])
		s.keyReq[i] = keyRequest{}
	}
	released := s.released.Load()
	for i, k := range s.pending {
		if k.first < released {
			s.count(&s.pending[i])
		}
	}
	s.pending = nil
	if s.split == 0 {
		return ""
	}
	return fmt.Sprintf("--shard key: %d of the %d requests this rank ran have rows on other ranks too (their objects' keys hash to several ranks); "+
		"each rank times its part of a request as a request, so merged request counts and latencies are of parts of requests", s.split, s.requests)
}

// hashKey is FNV-1a 64 of key.
func hashKey(key []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// mix spreads a user number over the ranks (splitmix64's finaliser).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// DefaultShard gives a run of several ranks its shard when none was
// given: key, or user for a closed loop, whose users each wait for their
// own storage (a user's requests on one rank, or each rank would run its
// part of every user on a loop of its own).
func (c *Config) DefaultShard() {
	if c.Ranks <= 1 || c.Shard != "" {
		return
	}
	c.Shard = ShardKey
	if c.ClosedLoop {
		c.Shard = ShardUser
	}
}

// validateShard checks the rank options.
func (c *Config) validateShard() []error {
	var errs []error
	if c.Ranks < 1 && (c.Ranks != 0 || c.Rank != 0) {
		errs = append(errs, fmt.Errorf("--ranks %d: must be at least 1", c.Ranks))
	}
	if c.Rank < 0 || (c.Ranks >= 1 && c.Rank >= c.Ranks) {
		errs = append(errs, fmt.Errorf("--rank %d: must be between 0 and --ranks-1 (%d)", c.Rank, max(c.Ranks, 1)-1))
	}
	switch c.Shard {
	case "", ShardKey, ShardTP:
	case ShardUser:
		if !c.ClosedLoop {
			errs = append(errs, fmt.Errorf("--shard user: keeps each user's requests on one rank for a closed loop: add --closed-loop, or shard by key"))
		}
	default:
		errs = append(errs, fmt.Errorf("--shard %s: want key, user or tp", parsemsg.Arg(c.Shard)))
	}
	return errs
}
