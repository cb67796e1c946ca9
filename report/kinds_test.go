package report

import (
	"testing"
)

// TestKindsNotTrialsOfOneGroup: a kv-cache.py document and a kvreplay
// result under one label (the trace's name: kvreplay labels a result by
// its trace, kvreport a kv-cache.py document by its file) were one group,
// the simulation and the measurement its "trials 0, 1", with a mean and
// a coefficient of variation across both (VARIES OVER TRIALS, CV 1.40 on
// the headline). They are two groups now, the kv-cache.py one labelled
// with its kind.
func TestKindsNotTrialsOfOneGroup(t *testing.T) {
	ref, err := Load([]string{referenceJSON}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Load([]string{"testdata/u50_t1.json"}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref[0].Label != run[0].Label {
		t.Fatalf("labels %q and %q: the test needs one label for both", ref[0].Label, run[0].Label)
	}
	r, err := Build(append(ref, run...), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 2 {
		t.Fatalf("%d groups, want 2: the kv-cache.py document and the kvreplay result are no trials of one run", len(r.Groups))
	}
	if want := ref[0].Label + " (" + KindReference + ")"; r.Groups[0].Label != want || r.Groups[1].Label != run[0].Label {
		t.Errorf("groups %q and %q, want %q and %q", r.Groups[0].Label, r.Groups[1].Label, want, run[0].Label)
	}
	for _, g := range r.Groups {
		if len(g.Trials) != 1 {
			t.Errorf("group %q has %d trials, want 1", g.Label, len(g.Trials))
		}
	}
}
