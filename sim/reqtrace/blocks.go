package reqtrace

import (
	"fmt"
	"slices"
	"strconv"
)

// HashBlocks is what a Mooncake-style trace's hash ids were found to stand
// for. Mooncake's own trace has one id for each 512 tokens of input,
// rounded up; other traces in its JSONL form hash blocks of other sizes,
// or of no one size (an LMBench-style trace's ids cover 6 to 101 tokens
// each). A record whose ids fit Tokens is read as blocks of Tokens tokens;
// any other has its input apportioned evenly over its ids.
type HashBlocks struct {
	// Tokens is the block size tried on every record: the one given
	// (Options.BlockTokens, Given set) or MooncakeBlockTokens.
	Tokens int
	Given  bool
	// Fit counts the records (with ids) that have one id for each Tokens
	// tokens of input, rounded up; Apportioned the others.
	Fit, Apportioned int64
	// perID counts the ids of apportioned records by the tokens each
	// covers (rounded down), for their range and median.
	perID map[int]int64
}

// add counts a record with in tokens over n > 0 ids, and reports whether
// they fit Tokens.
func (h *HashBlocks) add(in, n int) bool {
	if n == (in+h.Tokens-1)/h.Tokens {
		h.Fit++
		return true
	}
	h.Apportioned++
	if h.perID == nil {
		h.perID = map[int]int64{}
	}
	h.perID[in/n] += int64(n)
	return false
}

// TokensPerID returns the least, median and greatest tokens an id covers
// in the apportioned records (whole tokens, each id weighted once); zeros
// when there are none.
func (h *HashBlocks) TokensPerID() (lo, median, hi int) {
	if len(h.perID) == 0 {
		return 0, 0, 0
	}
	keys := make([]int, 0, len(h.perID))
	var n int64
	for k, c := range h.perID {
		keys = append(keys, k)
		n += c
	}
	slices.Sort(keys)
	var seen int64
	for _, k := range keys {
		seen += h.perID[k]
		if 2*seen >= n {
			median = k
			break
		}
	}
	return keys[0], median, keys[len(keys)-1]
}

// String says what was found, for a run's notes: "hash ids: 512 tokens
// each (Mooncake's), all 200 records fit" or "hash ids: not 512-token
// blocks in 180 of 200 records (6 to 101 tokens an id, median 34): their
// input is apportioned evenly over their ids".
func (h *HashBlocks) String() string {
	total := h.Fit + h.Apportioned
	src := "Mooncake's"
	if h.Given {
		src = "--request-trace-block-tokens"
	}
	if h.Apportioned == 0 {
		return fmt.Sprintf("hash ids: %d tokens each (%s), all %d records with ids fit", h.Tokens, src, total)
	}
	lo, med, hi := h.TokensPerID()
	return fmt.Sprintf("hash ids: not %d-token blocks (%s) in %d of %d records (%s to %s tokens an id, median %s): their input is apportioned evenly over their ids",
		h.Tokens, src, h.Apportioned, total, strconv.Itoa(lo), strconv.Itoa(hi), strconv.Itoa(med))
}

// ApportionTokens returns the tokens the i-th of n ids covers when in
// tokens are apportioned evenly over them: in/n, and one more for the
// first in%n ids.
func ApportionTokens(in, n, i int) int {
	t := in / n
	if i < in%n {
		t++
	}
	return t
}
