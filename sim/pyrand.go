package sim

import "math/bits"

// pyRand is CPython's random module: MT19937 seeded as random.seed(int)
// seeds it, with the same random(), getrandbits, randint, uniform, choice
// and shuffle. kv-cache.py draws its user population from this stream right
// after random.seed(--seed), so the same seed gives kvtrace the same users
// (types, context and generation lengths, think times, QoS levels) as the
// reference. Source: Matsumoto and Nishimura's mt19937ar.c, as CPython's
// Modules/_randommodule.c uses it.
type pyRand struct {
	mt  [624]uint32
	idx int
}

func newPyRand(seed int64) *pyRand {
	r := &pyRand{}
	// random.seed(n) for an int uses abs(n) split into 32-bit words, least
	// significant first (at least one word).
	n := uint64(seed)
	if seed < 0 {
		n = uint64(-seed)
	}
	key := []uint32{uint32(n)}
	if n>>32 != 0 {
		key = append(key, uint32(n>>32))
	}
	r.initByArray(key)
	return r
}

func (r *pyRand) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < len(r.mt); i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = len(r.mt)
}

func (r *pyRand) initByArray(key []uint32) {
	const n = 624
	r.initGenrand(19650218)
	i, j := 1, 0
	for k := max(n, len(key)); k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := n - 1; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= n {
			r.mt[0] = r.mt[n-1]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
}

func (r *pyRand) uint32() uint32 {
	const n, m = 624, 397
	if r.idx >= n {
		for k := 0; k < n; k++ {
			y := (r.mt[k] & 0x80000000) | (r.mt[(k+1)%n] & 0x7fffffff)
			v := r.mt[(k+m)%n] ^ (y >> 1)
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// Float64 is random.random(): 53 random bits in [0, 1).
func (r *pyRand) Float64() float64 {
	a, b := r.uint32()>>5, r.uint32()>>6
	return (float64(a)*67108864 + float64(b)) * (1.0 / 9007199254740992.0)
}

// getrandbits is random.getrandbits(k) for 0 < k <= 64.
func (r *pyRand) getrandbits(k int) uint64 {
	if k <= 32 {
		return uint64(r.uint32() >> (32 - k))
	}
	lo := uint64(r.uint32())
	hi := uint64(r.uint32() >> (64 - k))
	return hi<<32 | lo
}

// below is random._randbelow(n): uniform in [0, n) by rejection. As in
// CPython, n == 1 draws too (getrandbits(1) until it is 0): randint(a, a)
// and a choice among one consume the stream, and every later draw depends
// on it. n <= 0, which CPython refuses, is 0 without a draw.
func (r *pyRand) below(n int) int {
	if n <= 0 {
		return 0
	}
	k := bits.Len64(uint64(n))
	for {
		if v := r.getrandbits(k); v < uint64(n) {
			return int(v)
		}
	}
}

// IntN is uniform in [0, n), as random.randrange(n) and random.choice.
func (r *pyRand) IntN(n int) int { return r.below(n) }

// randint is random.randint(lo, hi), both ends included; hi < lo, which
// CPython refuses, is lo without a draw.
func (r *pyRand) randint(lo, hi int) int {
	if hi < lo {
		return lo
	}
	return lo + r.below(hi-lo+1)
}

// uniform is random.uniform(lo, hi).
func (r *pyRand) uniform(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// Shuffle is random.shuffle.
func (r *pyRand) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.below(i+1))
	}
}
