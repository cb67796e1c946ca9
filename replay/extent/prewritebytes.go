package extent

import "encoding/binary"

// prewriteBytes fills p, the chunk of the prewrite at file offset off, with
// base (a job's random bytes, as long as p) whose every 8-byte word is
// XORed with a mix of the word's file offset: each chunk's bytes are its
// own, so no 512-byte sector of the prewrite repeats another anywhere in
// the file, and a deduplicating or compressing store writes all of it
// (the same buffer written at every chunk left 40 % of an extent file's
// sectors duplicates: mlcommons/storage #272). The mix is splitmix64's
// finalizer (Steele, Lea and Flood, 2014), a bijection: two words at
// different offsets over the same base bytes differ. About a nanosecond a
// word, far below the drive's time to write it.
func prewriteBytes(p, base []byte, off int64) {
	n := len(p) &^ 7
	for i := 0; i < n; i += 8 {
		x := uint64(off+int64(i))/8 + 1
		x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
		x = (x ^ x>>27) * 0x94d049bb133111eb
		x ^= x >> 31
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(base[i:])^x)
	}
	for i := n; i < len(p); i++ {
		p[i] = base[i] ^ byte(off+int64(i))
	}
}
