package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/schema"
)

// TestCheckRanksMergedOfAnotherRun: a merged document states its run's
// number of ranks, as a rank's document does: the merge of the 3 ranks
// of one run is refused beside rank 3 of a run of 4, in either order
// (the two held ranks 0 to 3, and passed for the 4 ranks of one run,
// their rows from two splits of the trace), while a partial merge of a
// run of 4 completed with its other ranks passes.
func TestCheckRanksMergedOfAnotherRun(t *testing.T) {
	tr := []schema.TraceInfo{{File: "run.csv.zst", SHA256: "aa", Rows: 10}}
	merged := func(ranks int, held ...int) *schema.Result {
		return &schema.Result{Ranks: ranks, MergedRanks: held, Traces: tr}
	}
	rank := func(r, ranks int) *schema.Result { return &schema.Result{Rank: r, Ranks: ranks, Traces: tr} }
	for _, tt := range []struct {
		name string
		docs []*schema.Result
		want string
	}{
		{"merged 3 of 3, rank 3 of 4", []*schema.Result{merged(3, 0, 1, 2), rank(3, 4)}, "one is a rank of 3, the other of 4"},
		{"rank 3 of 4, merged 3 of 3", []*schema.Result{rank(3, 4), merged(3, 0, 1, 2)}, "one is a rank of 4, the other of 3"},
		{"merged 2 of 4, ranks 2 and 3 of 4", []*schema.Result{merged(4, 0, 1), rank(2, 4), rank(3, 4)}, ""},
		{"two merges of a run of 4", []*schema.Result{merged(4, 0, 1), merged(4, 2, 3)}, ""},
	} {
		err := CheckRanks(tt.docs, nil)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (!errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}
