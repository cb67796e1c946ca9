package replay

import "github.com/kvbench/kvbench/schema"

// scanKey is a key of the prescan: its state in the model (mstate's,
// without the LRU links, which an unbounded backend never uses), the most
// physical bytes it has had on each tier (Plan.Reach), and, for a closed
// loop's --users N, whether a chosen user's row touched it (own) and
// whether a row left out wrote it (left). modelled says that a modelled
// row touched it: Plan.Objects counts those keys.
//
// It holds no pointer and no name, so that a trace of many objects costs
// the prescan little memory per object (a previous scanKey embedded the
// run's keyState, 288 bytes with its name, and the key was kept twice:
// about 0.5 KiB per object of the MLPerf 8B trace, the prescan's memory
// competing with the RAM tier it benchmarks).
type scanKey struct {
	onTier              [schema.NumTiers]int64
	phys                int64
	exists, evicted     bool
	tier                schema.Tier
	b                   int8
	own, left, modelled bool
}

// load sets the model's state of a key, ks.m, to sk's.
func (sk *scanKey) load(ks *keyState) {
	ks.m = mstate{exists: sk.exists, evicted: sk.evicted, tier: sk.tier, b: sk.b, phys: sk.phys}
}

// store keeps the model's state of a key, ks.m, in sk.
func (sk *scanKey) store(ks *keyState) {
	sk.exists, sk.evicted, sk.tier, sk.b, sk.phys = ks.m.exists, ks.m.evicted, ks.m.tier, ks.m.b, ks.m.phys
}

// scanChunk is how many scanKeys a scanKeys chunk holds.
const scanChunk = 1024

// scanKeys are a trace's keys in the prescan: each key once, as the
// index's map key, and its state in chunks of scanChunk, which never move
// (a *scanKey stays valid as keys are added, and no growing slice is
// copied, twice the memory for a while) and which the collector need not
// scan (they hold no pointers).
type scanKeys struct {
	index  map[string]int
	chunks []*[scanChunk]scanKey
	n      int
}

func newScanKeys() *scanKeys {
	return &scanKeys{index: map[string]int{}}
}

// get returns key's state, nil when key has none yet. It allocates
// nothing.
func (sk *scanKeys) get(key []byte) *scanKey {
	i, ok := sk.index[string(key)]
	if !ok {
		return nil
	}
	return &sk.chunks[i/scanChunk][i%scanChunk]
}

// add returns key's state, made (zero) on first sight.
func (sk *scanKeys) add(key []byte) *scanKey {
	if k := sk.get(key); k != nil {
		return k
	}
	i := sk.n
	if i%scanChunk == 0 {
		sk.chunks = append(sk.chunks, new([scanChunk]scanKey))
	}
	sk.index[string(key)] = i
	sk.n++
	return &sk.chunks[i/scanChunk][i%scanChunk]
}
