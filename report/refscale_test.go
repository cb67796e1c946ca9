package report

import (
	"strings"
	"testing"
)

// TestReferenceScaleWarned: a kvreplay run at --size-scale 1/4096
// compared with kv-cache.py's run (its objects at their size) is an
// unlike comparison, warned of as two kvreplay runs at different scales
// are, with either as the baseline: the ratios (0.0004x) compared
// objects 4096 times smaller without a word.
func TestReferenceScaleWarned(t *testing.T) {
	docs, err := Load([]string{"testdata/kvcache_py/u50_d20_hand_measured.json", "testdata/u50_t1.json"}, nil, LoadOptions{GroupBy: []string{"file"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"u50_d20_hand_measured", "u50_t1"} {
		r, err := Build(docs, BuildOptions{Baseline: base})
		if err != nil {
			t.Fatal(err)
		}
		w := strings.Join(r.Warnings, "\n")
		if !strings.Contains(w, "DIFFERENT SIZE SCALES") || !strings.Contains(w, "0.000244140625") {
			t.Errorf("baseline %s: no size-scale warning in\n%s", base, w)
		}
	}
}
