// Package datagen owns the bytes kvreplay writes: unique, incompressible
// and reproducible. The bytes of an object are a function of the run's seed,
// the object's key and version, and the offset in the object, so any range
// of any object can be regenerated on its own, and a read can be verified
// byte for byte without storing anything (design section 4).
//
// The definition (version 2) is a counter-based generator in the manner of
// wyrand (Wang Yi), keyed per run and per object. With
//
//	mum(x, y)  = high 64 bits XOR low 64 bits of the 128-bit product x*y
//	P0, P1     = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
//	k0..k3     = the SHA-256 of "kvbench datagen v2", a zero byte and the
//	             seed (8 bytes little-endian), read as four little-endian
//	             64-bit words
//	h          = FNV-1a 64 of the key's bytes followed by the version as 8
//	             bytes little-endian
//	a, b       = mum(h^k0, k1^P0), mum(h^k2, k3^P1)
//
// the 8 bytes at object offset 8j are word j, little-endian:
//
//	x_j = a + (j+1)*P0 (mod 2^64)
//	w_j = mum(x_j, x_j^b)
//
// Every word of an object has its own counter, so blocks of one object never
// repeat, two objects differ in both per-object constants, and the stream is
// indistinguishable from random to a compressor or a deduplicating store
// (wyrand passes PractRand and BigCrush). It costs no allocation and about a
// nanosecond per word: kvreplay's 4 KiB writes generate their bytes on the
// scheduler's own goroutine, and version 1, AES-128-CTR through
// crypto/cipher.NewCTR, spent more there on its per-call counter state than
// on the keystream. The definition is stable across processes, machines and
// releases: changing it changes what --verify expects.
package datagen

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// chunk is the size of Verify's scratch buffer: large enough to amortise
// the call, small enough to stay in cache.
const chunk = 64 << 10

// The wyrand constants.
const (
	p0 = 0xa0761d6478bd642f
	p1 = 0xe7037ed1a0b428db
)

// Generator makes the bytes of objects for one seed. It is safe for
// concurrent use by many goroutines: its keys are read-only.
type Generator struct {
	k [4]uint64
	// scratch holds *[chunk]byte buffers for Verify.
	scratch sync.Pool
}

// New returns the Generator of seed.
func New(seed uint64) *Generator {
	var in [len("kvbench datagen v2") + 1 + 8]byte
	n := copy(in[:], "kvbench datagen v2\x00")
	binary.LittleEndian.PutUint64(in[n:], seed)
	sum := sha256.Sum256(in[:])
	g := &Generator{scratch: sync.Pool{New: func() any { return new([chunk]byte) }}}
	for i := range g.k {
		g.k[i] = binary.LittleEndian.Uint64(sum[8*i:])
	}
	return g
}

// mum is wyhash's mixing step.
func mum(x, y uint64) uint64 {
	hi, lo := bits.Mul64(x, y)
	return hi ^ lo
}

// objectHash is FNV-1a 64 (Fowler, Noll, Vo) of key's bytes followed by
// version as 8 bytes little-endian. The fixed-length version at the end
// makes the input a one-to-one encoding of (key, version).
func objectHash(key string, version uint64) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime64
	}
	for range 8 {
		h ^= version & 0xff
		h *= prime64
		version >>= 8
	}
	return h
}

// object returns the per-object constants a and b of (key, version); it
// panics on a negative offset, which no call may ask for.
func (g *Generator) object(key string, version uint64, offset int64) (a, b uint64) {
	if offset < 0 {
		panic(fmt.Sprintf("datagen: negative offset %d", offset))
	}
	h := objectHash(key, version)
	return mum(h^g.k[0], g.k[1]^p0), mum(h^g.k[2], g.k[3]^p1)
}

// Fill sets p to the bytes of object key at version from byte offset of
// the object on. Any offset and length work; offsets that are multiples of
// 8, which the replay's aligned I/Os always are, are the fast path. offset
// must not be negative (Fill panics). Fill does not allocate.
func (g *Generator) Fill(p []byte, key string, version uint64, offset int64) {
	a, b := g.object(key, version, offset)
	fillWords(p, a, b, uint64(offset))
}

// FillDevice is Fill for a buffer that a device reads next and the CPU
// does not: an O_DIRECT write's. On amd64 it stores the bulk of p with
// non-temporal stores, which write whole cache lines without first reading
// them into the cache; a buffer a device has just read (by DMA) is no longer
// in this CPU's cache, and Fill's ordinary stores wait on a read of every
// line first. Elsewhere it is Fill. The bytes are Fill's.
func (g *Generator) FillDevice(p []byte, key string, version uint64, offset int64) {
	a, b := g.object(key, version, offset)
	if !haveNT || offset%8 != 0 || len(p) < 64 {
		fillWords(p, a, b, uint64(offset))
		return
	}
	n := len(p) / 32 * 4 // whole groups of four words
	wordsNT(&p[0], n, counter(a, uint64(offset)), b)
	fillWords(p[8*n:], a, b, uint64(offset)+uint64(8*n))
}

// step is p0 as a variable, so that products with it wrap.
var step = uint64(p0)

// counter is x_j of the word holding byte offset of the object of a.
func counter(a, offset uint64) uint64 { return a + (offset/8+1)*step }

// fillWords sets p to the bytes of the object of constants a and b from byte
// offset on.
func fillWords(p []byte, a, b, offset uint64) {
	x := counter(a, offset)
	if r := offset % 8; r != 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mum(x, x^b))
		p = p[copy(p, w[r:]):]
		x += step
	}
	for len(p) >= 32 {
		x1, x2, x3 := x+step, x+2*step, x+3*step
		binary.LittleEndian.PutUint64(p[0:8], mum(x, x^b))
		binary.LittleEndian.PutUint64(p[8:16], mum(x1, x1^b))
		binary.LittleEndian.PutUint64(p[16:24], mum(x2, x2^b))
		binary.LittleEndian.PutUint64(p[24:32], mum(x3, x3^b))
		x += 4 * step
		p = p[32:]
	}
	for len(p) >= 8 {
		binary.LittleEndian.PutUint64(p, mum(x, x^b))
		x += step
		p = p[8:]
	}
	if len(p) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mum(x, x^b))
		copy(p, w[:])
	}
}

// Verify compares p with the bytes Fill would give for the same arguments.
// It returns ok true when they are equal; otherwise badOffset is the offset
// in the object (offset plus the index in p) of the first byte that
// differs. It generates the expected bytes 64 KiB at a time into a reused
// buffer and does not allocate. It is safe for concurrent use.
func (g *Generator) Verify(p []byte, key string, version uint64, offset int64) (badOffset int64, ok bool) {
	a, b := g.object(key, version, offset)
	buf := g.scratch.Get().(*[chunk]byte)
	defer g.scratch.Put(buf)
	for done := 0; done < len(p); {
		part := p[done:min(done+chunk, len(p))]
		want := buf[:len(part)]
		fillWords(want, a, b, uint64(offset)+uint64(done))
		if !bytes.Equal(part, want) {
			for i := range part {
				if part[i] != want[i] {
					return offset + int64(done+i), false
				}
			}
		}
		done += len(part)
	}
	return -1, true
}
