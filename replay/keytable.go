package replay

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// keyTable is a set of keys, each with a flag, for the tables that hold
// every object of a trace (sharder.owner holds every rank's): a key costs
// its length, a byte more, and a slot of 8 bytes (the slots three eighths
// to three quarters full), 44 bytes for a 26-byte key, in no allocation of
// its own and nothing the collector scans. A map[string]bool took 88 (the
// key's string, 32 bytes, a slot of 24 and the map's spare room), and a
// row that looked its key up built the string first.
//
// It is exact: a key is found by comparing its bytes; the hash only says
// where to look. The zero keyTable is empty and ready to use.
type keyTable struct {
	seed maphash.Seed
	// slots is an open-addressing table (linear probing) of a power of
	// two: 0 empty, otherwise the key's hash tag (its top 16 bits) <<
	// 48 | its ref+1 << 1 | its flag. n counts the keys.
	slots []uint64
	n     int
	// chunks hold the keys, each its length (a uvarint) then its bytes,
	// one after another; a ref is a chunk's index << refChunkShift | the
	// key's offset in it. A chunk never grows past its capacity, so a
	// key never moves; chunkSize is the next chunk's.
	chunks    [][]byte
	chunkSize int
}

const (
	// refChunkShift leaves 24 bits for an offset in a chunk: a chunk
	// holds at most maxChunk bytes, or one key (offset 0); the 47 bits of
	// a slot's ref+1 then number 8 M chunks, 8 TiB of keys.
	refChunkShift = 24
	minChunk      = 4 << 10
	maxChunk      = 1 << 20
	tagShift      = 48
	refMask       = 1<<tagShift - 1
)

// has reports whether key is in t.
func (t *keyTable) has(key []byte) bool {
	_, ok := t.get(key)
	return ok
}

// get returns key's flag, and whether key is in t.
func (t *keyTable) get(key []byte) (flag, ok bool) {
	if t.n == 0 {
		return false, false
	}
	i, found := t.find(key, maphash.Bytes(t.seed, key))
	return found && t.slots[i]&1 == 1, found
}

// add adds key with flag unless t has it: it returns key's flag in t,
// and whether it added key. It allocates only as t grows.
func (t *keyTable) add(key []byte, flag bool) (got, added bool) {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
		t.slots = make([]uint64, 64)
	}
	h := maphash.Bytes(t.seed, key)
	i, found := t.find(key, h)
	if found {
		return t.slots[i]&1 == 1, false
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
		i, _ = t.find(key, h)
	}
	s := h>>tagShift<<tagShift | (t.store(key)+1)<<1
	if flag {
		s |= 1
	}
	t.slots[i] = s
	t.n++
	return flag, true
}

// find returns the slot of key, whose hash is h, and whether it is
// there; when not, the empty slot where it goes. t has an empty slot.
func (t *keyTable) find(key []byte, h uint64) (int, bool) {
	mask := len(t.slots) - 1
	tag := h >> tagShift
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return i, false
		}
		if s>>tagShift == tag && bytes.Equal(t.key(s), key) {
			return i, true
		}
	}
}

// grow doubles the slots, placing each key again by its hash.
func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]uint64, 2*len(old))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := int(maphash.Bytes(t.seed, t.key(s))) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// key returns the bytes of the key of slot s.
func (t *keyTable) key(s uint64) []byte {
	ref := (s&refMask)>>1 - 1
	c := t.chunks[ref>>refChunkShift][ref&(1<<refChunkShift-1):]
	n, w := binary.Uvarint(c)
	return c[w : w+int(n)]
}

// store copies key into the chunks and returns its ref.
func (t *keyTable) store(key []byte) uint64 {
	need := uvarintLen(uint64(len(key))) + len(key)
	last := len(t.chunks) - 1
	if last < 0 || cap(t.chunks[last])-len(t.chunks[last]) < need {
		// Chunks grow to maxChunk, so that a small table is small; a key
		// larger than that has a chunk of its own.
		t.chunkSize = min(max(2*t.chunkSize, minChunk), maxChunk)
		t.chunks = append(t.chunks, make([]byte, 0, max(need, t.chunkSize)))
		last++
	}
	c := t.chunks[last]
	ref := uint64(last)<<refChunkShift | uint64(len(c))
	c = binary.AppendUvarint(c, uint64(len(key)))
	t.chunks[last] = append(c, key...)
	return ref
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}
