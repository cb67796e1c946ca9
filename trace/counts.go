package trace

import (
	"encoding/binary"

	"github.com/kvbench/kvbench/schema"
)

// counter counts what a Writer wrote, for the sidecar (MetaCounts).
type counter struct {
	readBytes, writeBytes int64
	requests, users       idSet
	lastReq               uint64
	// keys holds a 64-bit hash of each key written: distinct keys are
	// counted in 8 to 32 bytes of set each, not the key's length. Two keys
	// of one hash (about one chance in 10^7 for a million keys) count once.
	keys hashSet
}

// add counts rec; keyAgain says its key is the previous record's.
func (c *counter) add(rec *schema.Record, keyAgain bool) {
	switch rec.Op {
	case schema.OpRead:
		c.readBytes += rec.Size
	case schema.OpWrite:
		c.writeBytes += rec.Size
	}
	if rec.Request != 0 && rec.Request != c.lastReq {
		c.lastReq = rec.Request
		c.requests.add(rec.Request)
		if rec.User != 0 {
			c.users.add(rec.User)
		}
	}
	if !keyAgain {
		c.keys.add(keyHash64(rec.Key))
	}
}

// keyHash64 hashes a key, the same in every run (the count is part of a
// deterministic sidecar).
func keyHash64(k []byte) uint64 {
	h := uint64(len(k)) * 0x9e3779b97f4a7c15
	for len(k) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(k)) * 0xbf58476d1ce4e5b9
		h ^= h >> 29
		k = k[8:]
	}
	for _, c := range k {
		h = (h ^ uint64(c)) * 0x94d049bb133111eb
	}
	return h ^ h>>32
}

// hashSet is a set of non-zero 64-bit hashes, open addressing with linear
// probing at most half full: a Go map of them cost kvtrace's MLPerf 8B run
// a fifth of its CPU time (218 k keys, a lookup per row of a new key).
type hashSet struct {
	slots []uint64 // 0: empty
	n     int64
	// recent holds hashes found or added lately, direct-mapped, small
	// enough to stay in the CPU's cache: a trace reads its keys again soon
	// after writing them, and most lookups end here.
	recent [1 << 12]uint64
}

func (s *hashSet) add(h uint64) {
	if h == 0 {
		h = 1
	}
	r := &s.recent[(h>>32)&(1<<12-1)]
	if *r == h {
		return
	}
	*r = h
	if 2*(s.n+1) > int64(len(s.slots)) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case h:
			return
		case 0:
			s.slots[i] = h
			s.n++
			return
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(2*len(old), 1<<12))
	mask := uint64(len(s.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h
	}
}

// idSet is a set of IDs counted as they are added: a bitmap, since the IDs
// a simulation writes (requests, users) are counters from 1, far cheaper
// per row than a map; IDs beyond a bitmap's reach go to a map.
type idSet struct {
	bits  []uint64
	large map[uint64]struct{}
	n     int64
}

// maxBitmapID bounds the bitmap (16 MiB of it).
const maxBitmapID = 1 << 27

func (s *idSet) add(id uint64) {
	if id >= maxBitmapID {
		if _, ok := s.large[id]; !ok {
			if s.large == nil {
				s.large = map[uint64]struct{}{}
			}
			s.large[id] = struct{}{}
			s.n++
		}
		return
	}
	w := int(id / 64)
	if w >= len(s.bits) {
		s.bits = append(s.bits, make([]uint64, max(w+1-len(s.bits), len(s.bits)))...)
	}
	if bit := uint64(1) << (id % 64); s.bits[w]&bit == 0 {
		s.bits[w] |= bit
		s.n++
	}
}
