package report

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// loadOne loads a stored kvreplay document as a Doc labelled label.
func loadOne(t *testing.T, path, label string) *Doc {
	t.Helper()
	docs, err := Load([]string{path}, nil, LoadOptions{Label: label})
	if err != nil {
		t.Fatal(err)
	}
	return docs[0]
}

// TestIncompleteNeverPass: a run stopped early is never a storage_health
// PASS in a report, even from a document an older kvreplay wrote with
// PASS, nor in a merge of it; its storage_health_pass is absent.
func TestIncompleteNeverPass(t *testing.T) {
	d := loadOne(t, goldenInputs[0], "sysA")
	if d.Result.Summary.StorageHealth.OverallStatus != results.HealthPass {
		t.Fatalf("test setup: %q", d.Result.Summary.StorageHealth.OverallStatus)
	}
	d.Result.Complete, d.Result.IncompleteReason = false, "interrupt signal received"
	rep, err := Build([]*Doc{d}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Groups[0]
	if g.Health[0] != string(results.HealthIncomplete) {
		t.Errorf("health %q, want %s", g.Health[0], results.HealthIncomplete)
	}
	if _, ok := g.TrialValues[0][MetricHealth]; ok {
		t.Errorf("%s = %v for an incomplete run", MetricHealth, g.TrialValues[0][MetricHealth])
	}
	for _, f := range []string{"text", "md", "csv", "json", "html"} {
		var b bytes.Buffer
		if err := Render(&b, rep, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "INCOMPLETE") {
			t.Errorf("%s: no INCOMPLETE", f)
		}
		if f == "text" && strings.Contains(b.String(), "PASS") {
			t.Errorf("text report of an incomplete run says PASS:\n%s", b.String())
		}
	}
	// Merged with a complete rank, the run is still incomplete. The rank
	// that read the trace from a pipe replayed the same trace: one entry.
	other := *loadOne(t, goldenInputs[1], "sysA").Result
	other.Rank, other.Ranks = 1, 2
	d.Result.Traces[0].SHA256 = "aa"
	other.Traces = []schema.TraceInfo{{File: "-", Rows: d.Result.Traces[0].Rows, SHA256: "aa"}}
	m, err := MergeRanks([]*schema.Result{d.Result, &other})
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || m.Summary.StorageHealth.OverallStatus != results.HealthIncomplete {
		t.Errorf("merge: complete %v, health %q", m.Complete, m.Summary.StorageHealth.OverallStatus)
	}
	if len(m.Traces) != 1 {
		t.Errorf("merge: traces %+v, want the one trace", m.Traces)
	}
}

// TestRunWarningsInEveryFormat: a trial's own warnings (buffered I/O, a
// scaled run) reach every renderer, naming the group they belong to.
func TestRunWarningsInEveryFormat(t *testing.T) {
	a := loadOne(t, goldenInputs[2], "sysA")
	b := loadOne(t, goldenInputs[3], "sysB")
	b.Trial = 1
	const buffered = "BUFFERED I/O: the NVMe tier ran through the page cache"
	b.Result.Warnings = append(b.Result.Warnings, buffered)
	rep, err := Build([]*Doc{a, b}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"text", "md", "csv", "json", "bench", "html"} {
		var out bytes.Buffer
		if err := Render(&out, rep, f); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		want := "sysB: " + buffered
		if f == "csv" || f == "json" {
			want = buffered // in the group's row or object
		}
		if !strings.Contains(s, want) || !strings.Contains(s, "SCALED RUN") {
			t.Errorf("%s: lacks %q or the scaled run warning:\n%.1500s", f, want, s)
		}
		if strings.Contains(s, "sysA: "+buffered) {
			t.Errorf("%s: the warning is given to the wrong group", f)
		}
	}
}

// TestCheckRanks: the same document twice, a rank twice, ranks of two
// trials, ranks that replayed different traces, were sharded differently,
// replayed in other loops, paces, windows or --fsync, ran at different
// size scales or minutes apart are refused; ranks of one
// trace, told apart by digest even under different names, merge, and so
// do ranks that start within MaxRankGap of the others' end.
func TestCheckRanks(t *testing.T) {
	tr := func(file, sum string, rows int64) []schema.TraceInfo {
		return []schema.TraceInfo{{File: file, SHA256: sum, Rows: rows}}
	}
	doc := func(rank int, traces []schema.TraceInfo) *schema.Result {
		return &schema.Result{Rank: rank, Ranks: 2, Traces: traces}
	}
	a := doc(0, tr("run.csv.zst", "aa", 10))
	sharded := func(d *schema.Result, shard string) *schema.Result {
		c := *d
		c.Replay.Shard = shard
		return &c
	}
	scaled := func(d *schema.Result, scale float64) *schema.Result {
		c := *d
		c.SizeScale = scale
		return &c
	}
	t0 := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	at := func(d *schema.Result, started time.Time, wallS float64) *schema.Result {
		c := *d
		c.Started, c.WallS = started, wallS
		return &c
	}
	replayed := func(d *schema.Result, edit func(*schema.ReplayStats)) *schema.Result {
		c := *d
		edit(&c.Replay)
		return &c
	}
	threeOf := func(d *schema.Result, rank int) *schema.Result {
		c := *d
		c.Rank, c.Ranks = rank, 3
		return &c
	}
	for _, tt := range []struct {
		name string
		docs []*schema.Result
		want string // "" for none
	}{
		{"two ranks", []*schema.Result{a, doc(1, tr("-", "aa", 10))}, ""},
		{"the same document", []*schema.Result{a, a}, "same run"},
		{"a rank twice", []*schema.Result{a, {Rank: 0, WallS: 1, Traces: tr("run.csv.zst", "aa", 10)}}, "both hold rank 0"},
		{"other digest", []*schema.Result{a, doc(1, tr("run.csv.zst", "bb", 10))}, "different traces"},
		{"older documents, other rows", []*schema.Result{doc(0, tr("run.csv", "", 10)), doc(1, tr("run.csv", "", 11))}, "different traces"},
		{"older documents, other names", []*schema.Result{doc(0, tr("a.csv", "", 10)), doc(1, tr("b.csv", "", 10))}, "different traces"},
		{"a merged document and a rank it holds", []*schema.Result{{MergedRanks: []int{0, 1}, Traces: tr("x", "aa", 1)}, doc(1, tr("x", "aa", 1))}, "rank 1"},
		{"ranks of two trials", []*schema.Result{a, {Trial: 2, Rank: 1, Ranks: 2, Traces: tr("run.csv.zst", "aa", 10)}}, "they are of trial 0 and trial 2"},
		{"ranks sharded differently", []*schema.Result{sharded(a, "key"), sharded(doc(1, tr("-", "aa", 10)), "tp")},
			"they were sharded differently, --shard key and --shard tp"},
		{"a rank that replayed every row", []*schema.Result{sharded(a, "user"), doc(1, tr("-", "aa", 10))},
			"--shard user and --shard none"},
		{"ranks of two size scales", []*schema.Result{scaled(a, 1.0/1024), scaled(doc(1, tr("-", "aa", 10)), 1.0/4096)},
			"different size scales, 0.0009765625 and 0.000244140625"},
		// A merged document states one loop, pace, window and --fsync
		// (it took the first's loop, the largest speed and window and
		// either's --fsync), which the ranks' figures must share.
		{"an open and a closed loop", []*schema.Result{a, replayed(doc(1, tr("-", "aa", 10)), func(r *schema.ReplayStats) { r.ClosedLoop = true })},
			"they were replayed differently, an open loop and --closed-loop"},
		{"two paces", []*schema.Result{replayed(a, func(r *schema.ReplayStats) { r.Speed = 1 }), doc(1, tr("-", "aa", 10))},
			"they were replayed differently, --speed 1 and --speed max"},
		{"two windows", []*schema.Result{a, replayed(doc(1, tr("-", "aa", 10)), func(r *schema.ReplayStats) { r.DurationS = 30 })},
			"they were replayed differently, no --duration and --duration 30s"},
		{"fsync on one rank", []*schema.Result{a, replayed(doc(1, tr("-", "aa", 10)), func(r *schema.ReplayStats) { r.Fsync = true })},
			"they were replayed differently, no --fsync and --fsync"},
		{"one way, tuned apart", []*schema.Result{replayed(a, func(r *schema.ReplayStats) { r.Speed, r.QueueDepth = 2, 8 }),
			replayed(doc(1, tr("-", "aa", 10)), func(r *schema.ReplayStats) { r.Speed, r.QueueDepth = 2, 32 })}, ""},
		// Ranks started together overlap; a rank that starts within
		// MaxRankGap of the others' end (it read the trace slower) is one
		// of them; one that starts minutes later is of another run.
		{"overlapping ranks", []*schema.Result{at(a, t0, 60), at(doc(1, tr("-", "aa", 10)), t0.Add(2*time.Second), 60)}, ""},
		{"a rank within the skew", []*schema.Result{at(a, t0, 1), at(doc(1, tr("-", "aa", 10)), t0.Add(1*time.Second+MaxRankGap), 1)}, ""},
		{"ranks minutes apart", []*schema.Result{at(doc(1, tr("-", "aa", 10)), t0.Add(5*time.Minute), 60), at(a, t0, 60)},
			"document 2 and document 1: incompatible documents: they are of different runs: document 1 started at 2026-11-26T21:05:00Z, 4m0s after document 2 had ended (2026-11-26T21:01:00Z)"},
		{"a third rank of another run", []*schema.Result{at(threeOf(a, 0), t0, 60), at(threeOf(a, 1), t0.Add(time.Second), 10),
			at(threeOf(a, 2), t0.Add(2*time.Minute), 60)}, "document 1 and document 3: incompatible documents: they are of different runs"},
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

// TestPartialRanks: documents that hold only some of their run's ranks,
// even one, are refused by CheckRanks naming the missing ranks; merged
// anyway they are incomplete, never a PASS, with a warning, and merged
// with the ranks they lack they are whole again; one rank's document
// alone is reported as the incomplete part of its run it is.
func TestPartialRanks(t *testing.T) {
	d := loadOne(t, goldenInputs[0], "sysA")
	if d.Result.Summary.StorageHealth.OverallStatus != results.HealthPass {
		t.Fatalf("test setup: %q", d.Result.Summary.StorageHealth.OverallStatus)
	}
	r0 := *d.Result
	r0.Rank, r0.Ranks = 0, 2
	r1 := r0
	r1.Rank = 1
	r1.Started = r1.Started.Add(time.Millisecond)

	err := CheckRanks([]*schema.Result{&r0}, []string{"r0.json"})
	var missing *MissingRanksError
	if !errors.As(err, &missing) || !errors.Is(err, ErrIncompatible) ||
		err.Error() != "run of r0.json has 2 ranks and only rank 0 was given: missing rank 1" {
		t.Errorf("one rank of two: %v", err)
	}
	if err := CheckRanks([]*schema.Result{&r0, &r1}, nil); err != nil {
		t.Errorf("both ranks: %v", err)
	}

	part, err := MergeRanks([]*schema.Result{&r0})
	if err != nil {
		t.Fatal(err)
	}
	if part.Complete || part.Ranks != 2 || part.Summary.StorageHealth.OverallStatus != results.HealthIncomplete ||
		!strings.Contains(part.IncompleteReason, "1 of 2 ranks (missing rank 1)") {
		t.Errorf("partial merge: complete %v ranks %d health %q reason %q", part.Complete, part.Ranks,
			part.Summary.StorageHealth.OverallStatus, part.IncompleteReason)
	}
	if !slices.ContainsFunc(part.Warnings, func(w string) bool { return strings.HasPrefix(w, "PARTIAL RUN") }) {
		t.Errorf("partial merge: no warning: %q", part.Warnings)
	}
	whole, err := MergeRanks([]*schema.Result{part, &r1})
	if err != nil {
		t.Fatal(err)
	}
	flat := mustMerge(t, &r0, &r1)
	if !whole.Complete || whole.IncompleteReason != "" || whole.Summary.StorageHealth.OverallStatus != results.HealthPass ||
		slices.ContainsFunc(whole.Warnings, func(w string) bool { return strings.HasPrefix(w, "PARTIAL RUN") }) ||
		!sameMerge(whole, flat) {
		t.Errorf("the partial merge merged with the missing rank: complete %v reason %q health %q warnings %q",
			whole.Complete, whole.IncompleteReason, whole.Summary.StorageHealth.OverallStatus, whole.Warnings)
	}
	// An incomplete rank keeps the merge incomplete, its reason kept.
	stopped := r1
	stopped.Complete, stopped.IncompleteReason = false, "interrupt signal received"
	if m := mustMerge(t, part, &stopped); m.Complete || m.IncompleteReason != "interrupt signal received" {
		t.Errorf("with a stopped rank: complete %v reason %q", m.Complete, m.IncompleteReason)
	}

	// kvreport on rank 0's document alone: shown, never as complete.
	one := *d
	one.Result = &r0
	rep, err := Build([]*Doc{&one}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Groups[0]; g.Health[0] != string(results.HealthIncomplete) || g.Trials[0].Complete {
		t.Errorf("one rank of two: health %q complete %v", g.Health[0], g.Trials[0].Complete)
	}
	if r0.Complete != true || len(r0.Warnings) != len(d.Result.Warnings) {
		t.Error("Build modified its input")
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "PARTIAL RUN: 1 of 2 ranks (missing rank 1)") || strings.Contains(s, "PASS") {
		t.Errorf("text report of one rank of two:\n%s", s)
	}
}

func TestRankList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{
		{nil, "no rank"},
		{[]int{1}, "rank 1"},
		{[]int{0, 2}, "ranks 0, 2"},
		{[]int{0, 1}, "ranks 0, 1"},
		{[]int{0, 1, 2, 3, 5, 7, 8, 9}, "ranks 0-3, 5, 7-9"},
	} {
		if got := rankList(tt.in); got != tt.want {
			t.Errorf("rankList(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestNumberList: ranks and trials are listed in one format, the ranks
// of a merge's warnings and errors and the trials the MLPerf view names
// for a missing one (whose own list wrote two trials as "0-1" and a gap
// as every trial: "0, 1, 2, 5").
func TestNumberList(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{
		{[]int{3}, "3"},
		{[]int{0, 1}, "0, 1"},
		{[]int{0, 2, 5}, "0, 2, 5"},
		{[]int{0, 1, 2}, "0-2"},
		{[]int{0, 1, 2, 5}, "0-2, 5"},
		{[]int{0, 1, 2, 3, 5, 7, 8, 9}, "0-3, 5, 7-9"},
	} {
		if got := numberList(tt.in); got != tt.want {
			t.Errorf("numberList(%v) = %q, want %q", tt.in, got, tt.want)
		}
		if got, want := rankList(tt.in), "ranks "+tt.want; len(tt.in) > 1 && got != want {
			t.Errorf("rankList(%v) = %q, want %q", tt.in, got, want)
		}
	}
	// The MLPerf view's missing trial names the run's trials so.
	run := &MLPerfRun{TrialDirs: map[string]map[int]string{"1": {0: "", 1: "", 2: "", 5: ""}}}
	var reasons []string
	for _, m := range missingTrials(run, &MLPerfRunSummary{}) {
		if strings.HasPrefix(m.Reason, "no trial_") {
			reasons = append(reasons, m.Reason)
		}
	}
	want := []string{"no trial_3 directory or document: the run's trials are 0-2, 5", "no trial_4 directory or document: the run's trials are 0-2, 5"}
	if !slices.Equal(reasons, want) {
		t.Errorf("missing trials: %q, want %q", reasons, want)
	}
}

// TestRankImbalanceWarning: ranks of one trial that ran apart are named in
// a RANK IMBALANCE warning, which says that the merged device rates
// (every rank's bytes over the longest rank's busy time) overstate the
// device rate; ranks that started together get neither.
func TestRankImbalanceWarning(t *testing.T) {
	d := loadOne(t, goldenInputs[0], "sysA")
	for _, tt := range []struct {
		name   string
		spread time.Duration
		want   bool
	}{
		{"together", 10 * time.Millisecond, false},
		{"apart", 3 * time.Second, true},
	} {
		r0 := *d.Result
		r0.Rank, r0.Ranks = 0, 2
		r1 := r0
		r1.Rank = 1
		r1.Started = r1.Started.Add(tt.spread)
		docs := []*Doc{{Path: "r0.json", Kind: KindKVReplay, Label: "a", Trial: r0.Trial, Result: &r0},
			{Path: "r1.json", Kind: KindKVReplay, Label: "a", Trial: r1.Trial, Result: &r1}}
		rep, err := Build(docs, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var imb, rate bool
		for _, w := range allWarnings(rep) {
			imb = imb || strings.Contains(w, "RANK IMBALANCE")
			rate = rate || strings.Contains(w, "overstate the device rate as far as the ranks were not busy together")
		}
		if imb != tt.want || rate != tt.want {
			t.Errorf("%s: RANK IMBALANCE %v, device rate caveat %v, want %v: %q", tt.name, imb, rate, tt.want, allWarnings(rep))
		}
	}
}
