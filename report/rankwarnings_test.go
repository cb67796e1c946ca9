package report

import (
	"html"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// shard3 are the three ranks of one real run (testdata/shard3/README.md).
var shard3 = []string{"testdata/shard3/r0.json", "testdata/shard3/r1.json", "testdata/shard3/r2.json"}

// TestMergeSaysWhoseWarning: a merged document keeps each rank's warning
// once, saying whose it is: a warning that speaks of "this rank" names
// its rank, one every rank gave says "all ranks" once (or names the ranks
// held, for a part of the run), and merging a part with the rest says
// what merging the ranks at once says. Every format of a report shows
// the same.
func TestMergeSaysWhoseWarning(t *testing.T) {
	docs, err := Load(shard3, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := make([]*schema.Result, len(docs))
	for i, d := range docs {
		rs[i] = d.Result
	}
	var shard []string // each rank's own --shard key warning
	for i, r := range rs {
		j := slices.IndexFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "--shard key: ") })
		if j < 0 {
			t.Fatalf("%s has no --shard key warning: %q", shard3[i], r.Warnings)
		}
		shard = append(shard, r.Warnings[j])
	}
	if shard[0] == shard[1] || shard[1] == shard[2] {
		t.Fatalf("fixture: the ranks' --shard key warnings are not each their own: %q", shard)
	}
	scaled := rs[0].Warnings[slices.IndexFunc(rs[0].Warnings, func(w string) bool { return strings.HasPrefix(w, "SCALED RUN") })]

	all := mustMerge(t, rs...)
	want := []string{"all ranks: " + scaled, "rank 0: " + shard[0], "rank 1: " + shard[1], "rank 2: " + shard[2]}
	if !slices.Equal(all.Warnings, want) {
		t.Errorf("merged warnings:\n%q\nwant\n%q", all.Warnings, want)
	}
	part := mustMerge(t, rs[0], rs[2])
	wantPart := []string{"ranks 0, 2: " + scaled, "rank 0: " + shard[0], "rank 2: " + shard[2], "PARTIAL RUN: 2 of 3 ranks (missing rank 1): the figures cover part of the run"}
	if !slices.Equal(part.Warnings, wantPart) {
		t.Errorf("warnings of ranks 0 and 2:\n%q\nwant\n%q", part.Warnings, wantPart)
	}
	again := mustMerge(t, part, rs[1])
	if got := slices.Sorted(slices.Values(again.Warnings)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("ranks 0 and 2 merged, then with rank 1: warnings\n%q\nwant those of the three at once\n%q", again.Warnings, want)
	}
	one := mustMerge(t, rs[1])
	if got := slices.DeleteFunc(one.Warnings, func(w string) bool { return strings.HasPrefix(w, partialWarning) }); !slices.Equal(got, rs[1].Warnings) {
		t.Errorf("one rank merged alone: warnings %q, want its own %q", one.Warnings, rs[1].Warnings)
	}

	r, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for f, out := range renderAll(t, r) {
		esc := func(s string) string { return s }
		if f == "html" {
			esc = html.EscapeString
		}
		for _, w := range want {
			if !strings.Contains(out, esc(w)) {
				t.Errorf("%s: no warning %q", f, w)
			}
		}
		for i, w := range shard {
			if n, named := strings.Count(out, esc(w)), strings.Count(out, esc(rankList([]int{i})+": "+w)); n != named {
				t.Errorf("%s: rank %d's warning shown %d times, %d of them without its rank", f, i, n, n-named)
			}
		}
	}
}
