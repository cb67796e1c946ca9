package report

import (
	"slices"
	"strings"
	"testing"
)

// TestTracesUnknown: a kvreplay run whose document names no trace, beside
// runs that do, is warned of as of an unknown workload: with its traces
// removed, a document was compared with the others' without a word, where
// any other trace said DIFFERENT TRACES.
func TestTracesUnknown(t *testing.T) {
	docs, err := Load([]string{"testdata/u10_t1.json", "testdata/u50_t1.json"}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	docs[1].Result.Traces = nil
	r, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	label := docs[1].Label
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, label+": TRACES UNKNOWN: trial 1 names no trace") }) {
		t.Errorf("warnings %q, want %s's TRACES UNKNOWN", r.Warnings, label)
	}
	if slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, docs[0].Label+": TRACES UNKNOWN") }) {
		t.Errorf("warnings %q: the run that names its trace is warned of", r.Warnings)
	}
}
