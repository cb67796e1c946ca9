package report_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// TestSearchAnswersSettledAndComparable: a users search says the counts
// whose probes disagreed and no vacuous "confidence 100%"; one that ran
// out of probes says its answer is not settled, a capacity search still
// rising says "at least"; and a comparison of two searches says what
// makes them not comparable (other traces, windows, size scales, tier
// maps) and which answer is not settled. Before, three runs of one
// search on a noisy machine read "rq2 serves 26.00x the users of rq1"
// with nothing more.
func TestSearchAnswersSettledAndComparable(t *testing.T) {
	cfg := func(scale float64, tiers ...string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"size_scale": scale, "tier_map": tiers})
		return b
	}
	trace := func(sha string) []schema.TraceInfo {
		return []schema.TraceInfo{{File: "run.csv.zst", Rows: 100, SHA256: sha}}
	}

	a := usersSearch("A", 10)
	a.Traces, a.Config = trace("aa"), cfg(1.0/256, "", "ram", "nvme")
	a.Probes = append(a.Probes, schema.SearchProbe{Users: 10, Pass: false, Reason: "batch: 90% within 100 ms"})

	b := usersSearch("B", 18)
	b.Traces, b.Config, b.WindowS, b.Done = trace("bb"), cfg(1.0/16, "", "nvme", "nvme"), 10, false

	c := usersSearch("C", 12)
	c.Traces, c.Config = trace("aa"), cfg(1.0/256, "", "ram", "nvme")

	d := usersSearch("D", 3)
	d.Kind, d.PeakOfferedBps, d.PeakSpeed, d.Plateau, d.Done = schema.SearchCapacity, 2e9, 4, false, false

	dir := t.TempDir()
	var files []string
	for _, doc := range []*schema.SearchResult{a, b, c} {
		files = append(files, writeDoc(t, dir, doc.System+".json", doc))
	}
	docs, names, err := report.LoadSearches(context.Background(), files, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report.RenderSearches(&out, docs, names, "text"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"10 of 40 users (resolution 1; probes disagreed at 10 users (1 of 2 passed))",
		"18 of 40 users (resolution 1) (not settled: the search ran out of probes, --search-probes)",
		"B serves 1.80x the users of A (18 vs 10); NOT COMPARABLE: they searched different traces; B probed 10s windows and A 20s; " +
			"B ran at --size-scale 0.0625 and A at 0.00390625; B mapped the tiers Tier-1=nvme,Tier-2=nvme and A Tier-1=ram,Tier-2=nvme; B's answer is not settled",
		"C serves 1.20x the users of A (12 vs 10)\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "confidence") {
		t.Errorf("a confidence of 100%% is shown:\n%s", s)
	}

	docs, names, err = report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "d.json", d)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := report.RenderSearches(&out, docs, names, "text"); err != nil {
		t.Fatal(err)
	}
	if want := "at least peak offered load 2.00 GB/s at --speed 4 (still rising when the search ran out of probes: --search-probes)"; !strings.Contains(out.String(), want) {
		t.Errorf("no %q in\n%s", want, out.String())
	}
}

// TestProbesDisagreedOnce: that a users search's probes disagreed is said
// in one wording, results.ProbesDisagreed's, by kvreplay's reason and by
// kvreport's answer, and once where the answer and the reason stand side
// by side; before, the answer said "probes disagreed at 10 users: 1 of 2
// passed" beside a reason's "noisy: the probes of one count disagreed (10
// users passed 1 of 2 probes)". An answer whose reason does not name the
// counts (a document of an older kvreplay) names them itself.
func TestProbesDisagreedOnce(t *testing.T) {
	d := usersSearch("A", 10)
	d.Probes = append(d.Probes, schema.SearchProbe{Users: 20, Pass: true}, schema.SearchProbe{Users: 15, Pass: false, NotMeasured: "the run did not complete"})
	said := results.ProbesDisagreed(d.Probes)
	if said != "probes disagreed at 20 users (1 of 2 passed)" {
		t.Fatalf("ProbesDisagreed: %q", said)
	}
	d.Reason = "10 users passed, 20 failed; " + said + ": the boundary moves from run to run (a longer --duration measures more requests a probe)"
	older := usersSearch("B", 10)
	older.Probes = d.Probes
	older.Reason = "10 users passed, 20 failed; noisy: the probes of one count disagreed (20 users passed 1 of 2 probes)"
	dir := t.TempDir()
	docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "a.json", d), writeDoc(t, dir, "b.json", older)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "html", "json", "csv"} {
		var out strings.Builder
		if err := report.RenderSearches(&out, docs, names, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if n := strings.Count(s, said); n != 2 && f != "json" && f != "csv" {
			// Once for A (its reason's), once for B (its answer's).
			t.Errorf("%s: %q said %d times, want 2 (once a search):\n%s", f, said, n, s)
		}
		if f == "json" || f == "csv" {
			// The answer stands alone there: each carries it, and A's
			// reason too.
			if n := strings.Count(s, said); n < 3 {
				t.Errorf("%s: %q said %d times, want each answer's and A's reason's:\n%s", f, said, n, s)
			}
		}
	}
}

// TestCapacityNothingMoved: a capacity search none of whose probes moved
// a byte of the tiers measured has no peak to be at least: its answer
// says nothing was delivered, not "at least peak offered load 0 GB/s
// (still rising ...)" beside a reason that says no probe delivered any.
func TestCapacityNothingMoved(t *testing.T) {
	d := usersSearch("E", 0)
	d.Kind, d.Users, d.PeakOfferedBps, d.PeakSpeed, d.Plateau, d.Done = schema.SearchCapacity, 0, 0, 0.25, false, false
	d.Reason = "no probe delivered an offered load up to --speed 1: their windows moved no byte of the tiers measured"
	d.Probes = []schema.SearchProbe{{Speed: 0.25, Pass: true}, {Speed: 0.5, Pass: true}, {Speed: 1, Pass: true}}
	docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, t.TempDir(), "e.json", d)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := report.RenderSearches(&out, docs, names, "text"); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if want := "no offered load delivered up to --speed 1 (no probe's window moved a byte of the tiers measured)"; !strings.Contains(s, want) ||
		strings.Contains(s, "still rising") || strings.Contains(s, "at least") {
		t.Errorf("want %q, nothing 'at least' or 'still rising', in\n%s", want, s)
	}
	// Set beside a search that delivered, or one that did not: no 0.00x.
	f := usersSearch("F", 0)
	f.Kind, f.Users, f.PeakOfferedBps, f.PeakSpeed, f.Plateau = schema.SearchCapacity, 0, 2e9, 4, true
	dir := t.TempDir()
	for _, tc := range []struct {
		base, other *schema.SearchResult
		want        string
	}{
		{f, d, "E delivered nothing; F peaks at an offered load of 2.00 GB/s"},
		{d, f, "F peaks at an offered load of 2.00 GB/s; E delivered nothing"},
		{d, d, "a.json) delivered an offered load"},
	} {
		docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "a.json", tc.base), writeDoc(t, dir, "b.json", tc.other)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out.Reset()
		if err := report.RenderSearches(&out, docs, names, "text"); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); !strings.Contains(s, tc.want) || strings.Contains(s, "0.00x") || tc.base == tc.other && !strings.Contains(s, "neither E (") {
			t.Errorf("want %q, no 0.00x, in\n%s", tc.want, s)
		}
	}
}

// TestUsersAllPassedIsLowerBound: a users search every user of whose
// traces passed found no count that fails (its resolution is absent):
// its answer is a lower bound, said "at least" in every format, and a
// comparison with it says so. kvreport answered "8 of 8 users (resolution
// 0)", and "B serves 2.00x the users of A" with nothing more.
func TestUsersAllPassedIsLowerBound(t *testing.T) {
	all := usersSearch("B", 40)
	all.Resolution, all.Reason = 0, "all 40 users passed: the system serves at least the trace's users (make a trace with more)"
	stopped := usersSearch("C", 3)
	stopped.Resolution, stopped.Done, stopped.AnswerIsLowerBound = 0, false, true
	dir := t.TempDir()
	docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "a.json", usersSearch("A", 20)),
		writeDoc(t, dir, "b.json", all), writeDoc(t, dir, "c.json", stopped)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "html", "json", "csv"} {
		var out strings.Builder
		if err := report.RenderSearches(&out, docs, names, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, want := range []string{"at least 40 of 40 users (every user of the trace passed", "answer is a lower bound (every user of its traces passed)",
			"at least 3 of 40 users (a lower bound"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s: no %q in\n%s", f, want, s)
			}
		}
		if strings.Contains(s, "resolution 0") {
			t.Errorf("%s: says resolution 0:\n%s", f, s)
		}
	}
}

// TestOfferedLoadFellOnce: that a capacity search's offered load fell as
// --speed rose is said in results.OfferedLoadFell's words by kvreport's
// answer, once where the answer stands beside a reason that says it
// (kvreplay's), and by the answer where the reason does not (a document
// of an older kvreplay, whose peak of 0.484 GB/s read as a plateau).
func TestOfferedLoadFellOnce(t *testing.T) {
	capacity := func(system string) *schema.SearchResult {
		d := usersSearch(system, 0)
		d.Kind, d.Users, d.PeakOfferedBps, d.PeakSpeed, d.Plateau = schema.SearchCapacity, 0, 0.484e9, 8, true
		d.Probes = nil
		for i, g := range []float64{0.166, 0.0849, 0.484, 0.205, 0.234} {
			d.Probes = append(d.Probes, schema.SearchProbe{Speed: float64(int(2) << i), OfferedBps: g * 1e9})
		}
		return d
	}
	d := capacity("A")
	said := results.OfferedLoadFell(d.Probes)
	if !strings.HasPrefix(said, "the offered load fell as --speed rose") {
		t.Fatalf("OfferedLoadFell: %q", said)
	}
	d.Reason = "peak offered load 0.484 GB/s at --speed 8: the offered load delivered stopped improving; " + said + ": the peak is one probe's figure"
	older := capacity("B")
	older.Reason = "peak offered load 0.484 GB/s at --speed 8: the offered load delivered stopped improving (under 10 % over two doublings of the load) at --speed 32"
	dir := t.TempDir()
	docs, names, err := report.LoadSearches(context.Background(), []string{writeDoc(t, dir, "a.json", d), writeDoc(t, dir, "b.json", older)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "csv"} {
		var out strings.Builder
		if err := report.RenderSearches(&out, docs, names, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		// Text and md: A's reason's, B's answer's. Csv: each row's answer
		// (the answer stands alone there), both searches'.
		n := strings.Count(s, said)
		if (f != "csv" && n != 2) || (f == "csv" && (n != len(d.Probes)+len(older.Probes) || !strings.Contains(s, "\nA,") || !strings.Contains(s, "\nB,"))) {
			t.Errorf("%s: %q said %d times:\n%s", f, said, n, s)
		}
	}
}
