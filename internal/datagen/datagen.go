// Package datagen owns the bytes kvreplay writes: unique, incompressible
// and reproducible. The bytes of an object are a function of the run's seed,
// the object's key and version, and the offset in the object, so any range
// of any object can be regenerated on its own, and a read can be verified
// byte for byte without storing anything (design section 4).
//
// The bytes are the AES-128-CTR keystream (NIST SP 800-38A) under a key
// derived from the seed (the first 16 bytes of SHA-256 of "kvbench datagen
// v1", a zero byte and the seed, little-endian), with the 128-bit counter
// block, big-endian, made of
//
//	high 64 bits: FNV-1a 64 of the key's bytes followed by the version as
//	              8 bytes little-endian
//	low 64 bits:  offset / 16
//
// so byte i of an object is byte i%16 of the encryption of the counter
// (hash, i/16). Objects differ as long as their 64-bit hashes do (a
// collision among a million objects has odds of about 1 in 10^7), blocks of
// one object never repeat, and the stream is indistinguishable from random
// to a compressor or a deduplicating store. The definition is stable across
// processes, machines and releases: changing it changes what --verify
// expects.
package datagen

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
)

// chunk is the size of Verify's scratch buffer: large enough to run AES-CTR
// at full speed, small enough to stay in cache.
const chunk = 64 << 10

// Generator makes the bytes of objects for one seed. It is safe for
// concurrent use by many goroutines: the expanded AES key is read-only, and
// each call keeps its counter state to itself.
type Generator struct {
	block cipher.Block
	// scratch holds *[chunk]byte buffers for Verify.
	scratch sync.Pool
}

// New returns the Generator of seed.
func New(seed uint64) *Generator {
	var in [len("kvbench datagen v1") + 1 + 8]byte
	n := copy(in[:], "kvbench datagen v1\x00")
	binary.LittleEndian.PutUint64(in[n:], seed)
	key := sha256.Sum256(in[:])
	block, err := aes.NewCipher(key[:16])
	if err != nil {
		panic("datagen: " + err.Error()) // cannot happen: the key is 16 bytes
	}
	return &Generator{block: block, scratch: sync.Pool{New: func() any { return new([chunk]byte) }}}
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

// stream returns the keystream of object (key, version) positioned at
// byte offset.
func (g *Generator) stream(key string, version uint64, offset int64) cipher.Stream {
	if offset < 0 {
		panic(fmt.Sprintf("datagen: negative offset %d", offset))
	}
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[:8], objectHash(key, version))
	binary.BigEndian.PutUint64(iv[8:], uint64(offset)/aes.BlockSize)
	s := cipher.NewCTR(g.block, iv[:])
	if skip := offset % aes.BlockSize; skip != 0 {
		var discard [aes.BlockSize]byte
		s.XORKeyStream(discard[:skip], discard[:skip])
	}
	return s
}

// Fill sets p to the bytes of object key at version from byte offset of
// the object on. Any offset and length work; offsets and lengths that are
// multiples of 16 (the AES block), which the replay's aligned I/Os always
// are, are the fast path. offset must not be negative (Fill panics). Fill
// allocates about half a kilobyte of counter state per call, whatever
// len(p).
func (g *Generator) Fill(p []byte, key string, version uint64, offset int64) {
	s := g.stream(key, version, offset)
	clear(p)
	s.XORKeyStream(p, p)
}

// Verify compares p with the bytes Fill would give for the same arguments.
// It returns ok true when they are equal; otherwise badOffset is the offset
// in the object (offset plus the index in p) of the first byte that
// differs. It generates the expected bytes 64 KiB at a time into a reused
// buffer, so it allocates no more than Fill. It is safe for concurrent use.
func (g *Generator) Verify(p []byte, key string, version uint64, offset int64) (badOffset int64, ok bool) {
	s := g.stream(key, version, offset)
	buf := g.scratch.Get().(*[chunk]byte)
	defer g.scratch.Put(buf)
	for done := 0; done < len(p); {
		part := p[done:min(done+chunk, len(p))]
		want := buf[:len(part)]
		clear(want)
		s.XORKeyStream(want, want)
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
