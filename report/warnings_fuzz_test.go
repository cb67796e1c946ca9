package report

import (
	"slices"
	"strings"
	"testing"
)

// FuzzRankPrefixed: the ranks a merged document's warning names
// ("ranks 0-2, 5: ...", as rankList writes them) read back as the ranks
// written, whatever ranks; any other warning names no rank, or ranks in
// the order of the text with the rest of the warning after them.
func FuzzRankPrefixed(f *testing.F) {
	for _, s := range []string{
		"rank 3: slow", "ranks 0-1, 3: x", "ranks 0, 1: y", "ranks 2-1: z", "ranks 0-: z", "rank -1: n", "ranks 1,2: n",
		"all ranks: w", "rank 99999999999999999999: big", "ranks 5-5: one", "ranks 0, 0: twice", "ranks 0-3, 2: overlap",
		"rank 7:", "rank 7", "plain warning", "", "ranks 0-20000000: a damaged document", "ranks 0-2000000000: x", "rank 64: outside",
	} {
		f.Add(s, []byte{0, 1, 2, 5, 9})
	}
	f.Fuzz(func(t *testing.T, w string, gaps []byte) {
		// The ranks rankList writes: ascending, from the gaps between them.
		if len(gaps) > 256 {
			gaps = gaps[:256]
		}
		var rs []int
		r := -1
		for _, g := range gaps {
			r += 1 + int(g)%8
			rs = append(rs, r)
		}
		if len(rs) > 0 {
			got, rest, ok := rankPrefixed(rankList(rs)+": the warning", rs)
			if !ok || rest != "the warning" || !slices.Equal(got, rs) {
				t.Fatalf("ranks %v written as %q read %v, %q, %v", rs, rankList(rs), got, rest, ok)
			}
		}
		// Any warning, of a document of up to 64 ranks: a range is read
		// only within them, so a damaged one ("ranks 0-2000000000") costs
		// nothing.
		own := make([]int, 64)
		for i := range own {
			own[i] = i
		}
		got, rest, ok := rankPrefixed(w, own)
		if !ok {
			if got != nil || rest != w {
				t.Fatalf("rankPrefixed(%q) = %v, %q, false", w, got, rest)
			}
			return
		}
		if len(got) == 0 || !strings.HasSuffix(w, rest) || !strings.HasPrefix(w, "rank") {
			t.Fatalf("rankPrefixed(%q) = %v, %q", w, got, rest)
		}
		for _, r := range got {
			if r < 0 || r >= len(own) {
				t.Fatalf("rankPrefixed(%q) = %v: a rank the document does not hold", w, got)
			}
		}
	})
}
