package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// layTrials writes a run of Option 1 under dir: trials[t] is how many
// ranks trial t left a result (-1: no trial_<t> directory at all; 0: the
// directory, empty); edit, when not nil, changes each document first.
func layTrials(t *testing.T, dir string, trials map[int]int, edit ...func(trial, rank int, d *schema.Result)) {
	t.Helper()
	for tr, ranks := range trials {
		if ranks < 0 {
			continue
		}
		td := filepath.Join(dir, "option_1", fmt.Sprintf("trial_%d", tr))
		if err := os.MkdirAll(td, 0o755); err != nil {
			t.Fatal(err)
		}
		for r := range ranks {
			d := mlperfDoc(t, rankSpec{option: 1, trial: tr, rank: r, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
			for _, e := range edit {
				e(tr, r, d)
			}
			raw, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			rd := filepath.Join(td, fmt.Sprintf("rank_%d", r))
			if err := os.MkdirAll(rd, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestMLPerfTrialsMissing: a trial that is not a measurement (a trial_<T>
// directory with no rank result, a trial number missing between the
// others, or below them) is listed in kvbench's missing_trials with why,
// and warned of; a trial directory with no result, when no trial says how
// many ranks the run had, is a partial failure whose missing_files names
// it (total_ranks 0 was a whole run). A whole run lists none.
func TestMLPerfTrialsMissing(t *testing.T) {
	tests := []struct {
		name    string
		trials  map[int]int
		missing []string // "trial T: reason prefix"
		partial bool
		files   []string // missing_files, relative to option_1
	}{
		{"whole", map[int]int{0: 2, 1: 2, 2: 2}, nil, false, nil},
		{"the only trial empty", map[int]int{0: 0}, []string{"0: no rank result"}, true, []string{"trial_0"}},
		{"every trial empty", map[int]int{0: 0, 1: 0}, []string{"0: no rank result", "1: no rank result"}, true, []string{"trial_0", "trial_1"}},
		{"one trial empty", map[int]int{0: 2, 1: 0, 2: 2}, []string{"1: no rank result"}, true,
			[]string{"trial_1/rank_0", "trial_1/rank_1"}},
		{"a trial with fewer ranks", map[int]int{0: 2, 1: 1}, nil, true, []string{"trial_1/rank_1"}},
		// A trial the run ran that left no directory is, as mlpstorage
		// makes it, a trial of missing ranks.
		{"a trial number missing", map[int]int{0: 2, 1: -1, 2: 2}, []string{"1: no trial_1"}, true, []string{"trial_1/rank_0", "trial_1/rank_1"}},
		{"numbered from 1, a gap", map[int]int{1: 2, 3: 2}, []string{"2: no trial_2"}, true, []string{"trial_2/rank_0", "trial_2/rank_1"}},
		{"numbered from 1, whole", map[int]int{1: 2, 2: 2, 3: 2}, nil, false, nil},
		{"the first trials missing", map[int]int{3: 2}, []string{"1: no trial_1", "2: no trial_2"}, true,
			[]string{"trial_1/rank_0", "trial_1/rank_1", "trial_2/rank_0", "trial_2/rank_1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			layTrials(t, dir, tt.trials)
			s := aggregateDir(t, dir)
			var got []string
			if s.KVBench != nil {
				for _, m := range s.KVBench.MissingTrials {
					if m.Option != "1" {
						t.Errorf("option %q", m.Option)
					}
					got = append(got, fmt.Sprintf("%d: %s", m.Trial, m.Reason))
				}
			}
			if len(got) != len(tt.missing) {
				t.Fatalf("missing trials %q, want %q", got, tt.missing)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.missing[i]) {
					t.Errorf("missing trial %q, want %q...", got[i], tt.missing[i])
				}
			}
			o := s.Options["1"]
			var files []string
			for _, f := range o.MissingFiles {
				rel, _ := filepath.Rel(filepath.Join(dir, "option_1"), f)
				files = append(files, filepath.ToSlash(rel))
			}
			if o.PartialFailure != tt.partial || s.PartialFailure != tt.partial || !slices.Equal(files, tt.files) {
				t.Errorf("partial_failure %v (run %v), missing_files %q; want %v %q", o.PartialFailure, s.PartialFailure, files, tt.partial, tt.files)
			}
			if len(tt.missing) > 0 && !strings.Contains(strings.Join(s.KVBench.Warnings, "\n"), "option 1 trial "+strings.SplitN(tt.missing[0], ":", 2)[0]+": ") {
				t.Errorf("no warning naming the trial: %q", s.KVBench.Warnings)
			}
		})
	}
}

// TestMLPerfTrialsAcrossOptions: an Option that ran fewer trials than
// another of the run lacks the others' trials.
func TestMLPerfTrialsAcrossOptions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 1, 1: 1})
	d := mlperfDoc(t, rankSpec{option: 2, trial: 0, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	raw, _ := json.Marshal(d)
	rd := filepath.Join(dir, "option_2", "trial_0", "rank_0")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s := aggregateDir(t, dir)
	want := []MLPerfMissingTrial{{Option: "2", Trial: 1, Path: filepath.Join(dir, "option_2", "trial_1"),
		Reason: "no trial_1 directory or document: the run's trials are 0, 1"}}
	if !slices.Equal(s.KVBench.MissingTrials, want) {
		t.Errorf("missing trials %+v, want %+v", s.KVBench.MissingTrials, want)
	}
}

// TestMLPerfRankDocWarnings: what the rank documents say of themselves
// reaches the aggregate's warnings, naming the ranks (a scaled run, which
// the aggregate did not say at all, and failed operations), the size
// scale is in the kvbench block; an Option whose ranks or trials ran at
// different size scales is refused (ErrScales), as a merge of them is:
// the rule would add and average bytes of two scales.
func TestMLPerfRankDocWarnings(t *testing.T) {
	const scale = 1.0 / 4096
	const scaledWarning = "SCALED RUN: every object is 0.000244140625 of its trace size (--size-scale)"
	scaled := func(_, _ int, d *schema.Result) {
		d.SizeScale = scale
		d.Warnings = append(d.Warnings, scaledWarning)
	}
	dir := filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 2, 1: 2}, scaled, func(tr, r int, d *schema.Result) {
		if tr == 1 && r == 0 {
			d.Errors.Count = 3
			// A document that says a warning twice, apart, names its
			// rank once.
			d.Warnings = append(d.Warnings, "buffered I/O: /tmp is tmpfs", scaledWarning, "buffered I/O: /tmp is tmpfs")
		}
	})
	s := aggregateDir(t, dir)
	w := strings.Join(s.KVBench.Warnings, "\n")
	for _, want := range []string{
		"option 1, every rank of every trial: " + scaledWarning,
		"option 1 trial 1 rank 0: buffered I/O: /tmp is tmpfs",
		"option 1 trial 1 rank 0: 3 operations failed",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("no warning %q in\n%s", want, w)
		}
	}
	if got := s.KVBench.Options["1"].SizeScale; got != scale {
		t.Errorf("size_scale %v, want %v", got, scale)
	}

	// Trial 1 at another scale: refused, naming a document of each.
	dir = filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 1, 1: 1}, scaled, func(tr, _ int, d *schema.Result) {
		if tr == 1 {
			d.SizeScale = 1.0 / 1024
		}
	})
	run, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = AggregateMLPerf(context.Background(), run, time.Time{})
	want := filepath.Join(dir, "option_1", "trial_0", "rank_0", "kvbench_result.json") + " and " +
		filepath.Join(dir, "option_1", "trial_1", "rank_0", "kvbench_result.json") + ": incompatible documents: they ran at different size scales, 0.000244140625 and 0.0009765625"
	if !errors.Is(err, ErrScales) || !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want ErrScales and %q", err, want)
	}
}

// TestMLPerfRankCounts: trials whose documents are of runs of different
// numbers of ranks (2, then 3) are warned of, beside the smaller trial's
// rank counted missing.
func TestMLPerfRankCounts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 2, 1: 3}, func(tr, _ int, d *schema.Result) { d.Ranks = tr + 2 })
	s := aggregateDir(t, dir)
	want := "option 1: its trials ran different numbers of ranks, as their documents say (kvreplay --ranks): trial 0 of 2, trial 1 of 3"
	if w := strings.Join(s.KVBench.Warnings, "\n"); !strings.Contains(w, want) || !s.PartialFailure {
		t.Errorf("partial_failure %v, warnings:\n%s\nwant %q", s.PartialFailure, w, want)
	}
}

// TestMayBeResult: a rank directory's JSON file is its result when
// decode would read it as one, its member names in any case.
func TestMayBeResult(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{`{"format":"kvbench-result"}`, true},
		{`{"FORMAT":"kvbench-result"}`, true},
		{`{"Summary":{},"requests_completed":3}`, true},
		{`{"summary":{}}`, false},
		{`{"notes":"harness metadata"}`, false},
		{`{"format":"kvbench-result"`, true}, // cut short
		{`{"schema_version":"1.0","options":{}}`, false},
	} {
		if got := mayBeResult([]byte(tt.doc), keysOf([]byte(tt.doc))); got != tt.want {
			t.Errorf("mayBeResult(%s) = %v, want %v", tt.doc, got, tt.want)
		}
	}
}

// TestMLPerfMergedDocument: a merged document (kvreport merge) given as a
// rank is refused, naming its ranks: it was summed as one rank's figures,
// its run's other ranks counted missing.
func TestMLPerfMergedDocument(t *testing.T) {
	r0 := mlperfDoc(t, rankSpec{option: 1, rank: 0, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	r1 := mlperfDoc(t, rankSpec{option: 1, rank: 1, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
	m, err := MergeRanks([]*schema.Result{r0, r1})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m)
	p := filepath.Join(t.TempDir(), "merged.json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadMLPerf(context.Background(), []string{p}, nil, nil)
	if want := p + ": incompatible documents: a merged document of ranks 0, 1 (kvreport merge)"; !errors.Is(err, ErrIncompatible) || !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestMLPerfRankImbalance: a trial whose ranks started seconds apart gets
// the report's RANK IMBALANCE warning in the aggregate too (it gave none).
func TestMLPerfRankImbalance(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 2, 1: 2}, func(tr, r int, d *schema.Result) {
		if tr == 1 && r == 1 {
			d.Started = d.Started.Add(5 * time.Second)
		}
	})
	s := aggregateDir(t, dir)
	w := strings.Join(s.KVBench.Warnings, "\n")
	if want := "option 1: RANK IMBALANCE: trial 1: "; !strings.Contains(w, want) || !strings.Contains(w, "the ranks started 5.00 s apart") ||
		strings.Contains(w, "RANK IMBALANCE: trial 0") {
		t.Errorf("warnings:\n%s\nwant %q for trial 1 only", w, want)
	}
}

// TestMLPerfOptionWithoutTrials: an option_<O> directory of the run with
// no trial in it lacks every trial of the run (it was left out of the
// summary without a word).
func TestMLPerfOptionWithoutTrials(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	layTrials(t, dir, map[int]int{0: 1, 1: 1})
	if err := os.MkdirAll(filepath.Join(dir, "option_2"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := aggregateDir(t, dir)
	var got []string
	for _, m := range s.KVBench.MissingTrials {
		got = append(got, m.String())
	}
	want := []string{
		"option 2 trial 0: no trial_0 directory or document: the run's trials are 0, 1 (" + filepath.Join(dir, "option_2", "trial_0") + ")",
		"option 2 trial 1: no trial_1 directory or document: the run's trials are 0, 1 (" + filepath.Join(dir, "option_2", "trial_1") + ")",
	}
	if !slices.Equal(got, want) {
		t.Errorf("missing trials %q, want %q", got, want)
	}
}

// aggregateDir aggregates the MLPerf run in dir, failing the test on an
// error.
func aggregateDir(t *testing.T, dir string) *MLPerfRunSummary {
	t.Helper()
	run, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := AggregateMLPerf(context.Background(), run, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMLPerfOptionPlacedElsewhere: a kvreplay result in an option_<O>
// directory whose label or trace names another Option is refused, naming
// both: the rule would have scored one Option's workload as another's
// (an Option 1 run copied into option_2 was aggregated as Option 2). A
// result that names its own Option, or none, is placed by its directory.
func TestMLPerfOptionPlacedElsewhere(t *testing.T) {
	meta := func(option int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"command_line": ["kvtrace", "--mlperf-option", "%d"]}`, option))
	}
	tests := []struct {
		name string
		edit func(d *schema.Result)
		want string // "" for no error
	}{
		{"its own label", func(d *schema.Result) { d.Label = "option_1" }, ""},
		{"no label, no sidecar", func(d *schema.Result) { d.Label = "sysA" }, ""},
		{"its own trace", func(d *schema.Result) { d.Traces[0].Meta = meta(1) }, ""},
		{"another Option's label", func(d *schema.Result) { d.Label = "option_2" },
			`it is in an option_1 directory, but its label "option_2" names Option 2`},
		{"another Option's trace", func(d *schema.Result) { d.Label, d.Traces[0].Meta = "sysA", meta(3) },
			"it is in an option_1 directory, but its trace's sidecar (kvtrace --mlperf-option, or Table KVCache-1's parameters) names Option 3"},
		{"its label, another Option's trace", func(d *schema.Result) { d.Label, d.Traces[0].Meta = "option_1", meta(2) },
			"names Option 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			layTrials(t, dir, map[int]int{0: 2}, func(trial, rank int, d *schema.Result) {
				if len(d.Traces) == 0 {
					d.Traces = []schema.TraceInfo{{File: "t.csv.zst"}}
				}
				if rank == 1 {
					tc.edit(d)
				}
			})
			_, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrIncompatible) || !strings.Contains(fmt.Sprint(err), tc.want) ||
				!strings.Contains(fmt.Sprint(err), filepath.Join("option_1", "trial_0", "rank_1"))):
				t.Errorf("err %v, want ErrIncompatible naming rank 1's file and %q", err, tc.want)
			}
		})
	}
}

// TestMLPerfClosedDepartures: a run is told how it departs from a CLOSED
// submission, among what its documents say (Rules.md 6.3.1.1, 6.3.2.1,
// 6.3.2.2): Options of Table KVCache-1 missing, trials other than 3, and
// traces made with other parameters, seeds other than 42+rank, or
// autoscaling, or replays below full size or without --fsync. A run of
// the three Options, 3 trials each, with their parameters, has none; it
// was told nothing, an OPEN run of 4 s and 5 users aggregating as if
// CLOSED.
func TestMLPerfClosedDepartures(t *testing.T) {
	meta := func(option, rank int, edit func(c map[string]any)) json.RawMessage {
		o := schema.MLPerfOptions()[option-1]
		c := map[string]any{"model": o.Model, "num_users": o.Users, "duration": int64(o.DurationS) * int64(time.Second),
			"gpu_mem_gb": o.GPUMemGB, "cpu_mem_gb": o.CPUMemGB, "max_concurrent_allocs": o.MaxConcurrentAllocs,
			"generation_mode": o.GenerationMode, "enable_autoscaling": false}
		seed := schema.MLPerfSeed + rank
		var notes any // the sidecar's notes, which an edit sets as c["notes"]
		if edit != nil {
			edit(c)
			if s, ok := c["seed"]; ok {
				seed = s.(int)
			}
			notes = c["notes"]
			delete(c, "notes")
		}
		m := map[string]any{"seed": seed, "config": c}
		if notes != nil {
			m["notes"] = notes
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	// lay writes options x trials x 2 ranks; edit changes a rank's
	// document and its trace's configuration.
	lay := func(options []int, trials int, edit func(option, trial, rank int, d *schema.Result, c map[string]any)) string {
		dir := t.TempDir()
		for _, o := range options {
			for tr := range trials {
				for r := range 2 {
					d := mlperfDoc(t, rankSpec{option: o, trial: tr, rank: r, readGB: 2, writeGB: 1, readMS: 10, writeMS: 20, tokens: 100, ioS: 1})
					d.Replay.Fsync = true
					var ce func(map[string]any)
					if edit != nil {
						ce = func(c map[string]any) { edit(o, tr, r, d, c) }
					}
					d.Traces = []schema.TraceInfo{{File: fmt.Sprintf("rank_%d.csv.zst", r), Meta: meta(o, r, ce)}}
					raw, err := json.Marshal(d)
					if err != nil {
						t.Fatal(err)
					}
					p := filepath.Join(dir, fmt.Sprintf("option_%d", o), fmt.Sprintf("trial_%d", tr), fmt.Sprintf("rank_%d", r), "kvbench_result.json")
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, raw, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		return dir
	}
	tests := []struct {
		name    string
		options []int
		trials  int
		edit    func(option, trial, rank int, d *schema.Result, c map[string]any)
		want    []string
	}{
		{"closed", []int{1, 2, 3}, 3, nil, nil},
		{"one Option, 2 trials", []int{1}, 2, nil, []string{
			"the run lacks Option(s) 2, 3: a CLOSED submission runs Options 1, 2 and 3 (Rules.md 6.3.1.1)",
			"option 1: 2 trial(s): a CLOSED run has 3 (Rules.md 6.3.2.1); a trial missing after the last one found cannot be told from a run of fewer"}},
		{"an OPEN workload, scaled", []int{1, 2, 3}, 3, func(o, tr, r int, d *schema.Result, c map[string]any) {
			if o == 2 {
				c["num_users"], c["duration"] = 5, int64(4*time.Second)
				d.SizeScale = 1.0 / 1024
			}
		}, []string{
			"option 2: replayed at --size-scale 0.0009765625: a CLOSED run replays the objects at their size",
			"option 2: traces made with num-users 5 (not 100), duration 4 s (not 300 s): Table KVCache-1 fixes them (Rules.md 6.3.1.1)"}},
		{"writes not made durable", []int{1, 2, 3}, 3, func(o, tr, r int, d *schema.Result, c map[string]any) {
			d.Replay.Fsync = o != 1
		}, []string{"option 1: replayed without --fsync: the rules' device write latency is the write's fsync span " +
			"(Rules.md 6.3.4.3, 6.4.2), which kvreplay measures under --fsync only"}},
		// kvtrace's verdict that an option beside --mlperf-option made
		// the workload OPEN (RAG, here, which the Option's parameters do
		// not show) is in its traces' sidecars: kvreport said nothing of
		// it, the run CLOSED as far as it could see.
		{"an option beside --mlperf-option", []int{1, 2, 3}, 3, func(o, tr, r int, d *schema.Result, c map[string]any) {
			if o == 2 {
				c["enable_rag"] = true
				c["notes"] = []string{"departs from kv-cache.py: RAG chunks are chosen from kvtrace's one random stream",
					"--mlperf-option 2 (Storage Throughput) with --enable-rag true: an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)"}
			}
		}, []string{"option 2: its traces' sidecars say: --mlperf-option 2 (Storage Throughput) with --enable-rag true: " +
			"an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)"}},
		{"one seed for every rank, autoscaling", []int{1, 2, 3}, 3, func(o, tr, r int, d *schema.Result, c map[string]any) {
			if o == 3 {
				c["seed"], c["enable_autoscaling"] = 42, true
			}
		}, []string{
			"option 3: traces made with --enable-autoscaling, which a CLOSED run must not set (Rules.md 6.3.2.2)",
			"option 3: rank 1's trace made with --seed 42: a CLOSED run seeds rank R with 42+R (Rules.md 6.3.2.1, mlpstorage's wrapper)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := aggregateDir(t, lay(tc.options, tc.trials, tc.edit))
			if got := s.KVBench.ClosedDepartures; !slices.Equal(got, tc.want) {
				t.Errorf("closed_departures:\n%q\nwant\n%q", got, tc.want)
			}
			for _, w := range tc.want {
				if !slices.Contains(s.KVBench.Warnings, "NOT CLOSED: "+w) {
					t.Errorf("no warning %q in %q", w, s.KVBench.Warnings)
				}
			}
		})
	}
}

// TestMLPerfRankPlacedElsewhere: a kvreplay result of a run of several
// ranks in another rank's rank_<N> directory (another trial's rank 0
// filling a missing rank 1) is refused, naming both ranks: the rule added
// it as the rank it stood in for. A result of a run of one (kvreplay
// without --rank, a client started on its own) is placed by its
// directory.
func TestMLPerfRankPlacedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks int
		want  string
	}{
		{"a rank of two", 2, "it is in a rank_1 directory, but it is rank 0 of its run of 2 (kvreplay --rank)"},
		{"a run of one", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			layTrials(t, dir, map[int]int{0: 2, 1: 2}, func(trial, rank int, d *schema.Result) {
				d.Ranks = tc.ranks
				if trial == 1 && rank == 1 {
					// Trial 0's rank 0, started a minute before.
					d.Rank, d.Started = 0, d.Started.Add(-time.Minute)
				}
			})
			_, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrIncompatible) || !strings.Contains(fmt.Sprint(err), tc.want) ||
				!strings.Contains(fmt.Sprint(err), filepath.Join("trial_1", "rank_1"))):
				t.Errorf("err %v, want ErrIncompatible naming trial_1/rank_1 and %q", err, tc.want)
			}
		})
	}
}

// TestMLPerfTrialPlacedElsewhere: a kvreplay result in a trial_<T>
// directory that says it is another trial (kvreplay --trial) is refused,
// naming the file, its directory's trial and its own: another trial's
// result filling a trial would be averaged as that trial's. A result
// that does not say (no --trial: trial 0, its command line without it)
// is placed by its directory, and one that says --trial 0 in trial_0
// is where it belongs.
func TestMLPerfTrialPlacedElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(d *schema.Result) // trial 1 rank 1's document
		want  string
		trial int // where it is counted, when accepted
	}{
		{"trial 0 in trial_1", func(d *schema.Result) { d.Trial = 0; d.CommandLine = []string{"kvreplay", "--trial", "0", "t.csv"} },
			"it is in a trial_1 directory, but it is trial 0 (kvreplay --trial 0)", 0},
		{"--trial=2 in trial_1", func(d *schema.Result) { d.Trial = 2; d.CommandLine = []string{"kvreplay", "--trial=2", "t.csv"} },
			"it is in a trial_1 directory, but it is trial 2 (kvreplay --trial 2)", 0},
		{"a trial the document holds", func(d *schema.Result) { d.Trial = 3 },
			"it is in a trial_1 directory, but it is trial 3 (kvreplay --trial 3)", 0},
		{"no --trial", func(d *schema.Result) { d.Trial = 0; d.CommandLine = []string{"kvreplay", "t.csv", "--", "--trial"} }, "", 1},
		{"its own trial", func(d *schema.Result) { d.CommandLine = []string{"kvreplay", "--trial", "1"} }, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			layTrials(t, dir, map[int]int{0: 2, 1: 2}, func(trial, rank int, d *schema.Result) {
				if trial == 1 && rank == 1 {
					tc.edit(d)
				}
			})
			run, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				i := slices.IndexFunc(run.Ranks, func(rk MLPerfRank) bool { return strings.Contains(rk.Path, filepath.Join("trial_1", "rank_1")) })
				if i < 0 || run.Ranks[i].Trial != tc.trial {
					t.Errorf("trial_1/rank_1's document placed as %+v, want trial %d", run.Ranks, tc.trial)
				}
				return
			}
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(fmt.Sprint(err), tc.want) ||
				!strings.Contains(fmt.Sprint(err), filepath.Join("trial_1", "rank_1", "kvbench_result.json")) {
				t.Errorf("err %v, want ErrIncompatible naming trial_1/rank_1's file and %q", err, tc.want)
			}
		})
	}
}

// TestMLPerfDamagedFigures: a figure the rule reads that no run gives (a
// negative bandwidth, a latency of a billion ms) or that contradicts the
// document's own data (a kvreplay summary's Tier-2 bandwidth that is not
// its Tier-2 bytes over its run) is refused, naming the file, the key
// and the figures, where the rule summed it without a word.
func TestMLPerfDamagedFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *schema.Result)
		want string
	}{
		{"negative", func(d *schema.Result) { d.Summary.TierStorageReadBandwidthGBps = -3 },
			"summary.tier_storage_read_bandwidth_gbps is -3: want a number from 0 to 1e+09"},
		{"huge latency", func(d *schema.Result) { d.Summary.StorageWriteDeviceP95MS = 2e12 },
			"summary.storage_write_device_p95_ms is 2e+12: want a number from 0 to 1e+09"},
		{"not its data", func(d *schema.Result) { d.Summary.TierStorageWriteBandwidthGBps = 7 },
			"summary.tier_storage_write_bandwidth_gbps is 7, but its Tier-2 wrote 0.5 GB/s over its run (tiers[].write_offered_bytes_per_s)"},
		{"as written", func(*schema.Result) {}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			layTrials(t, dir, map[int]int{0: 1}, func(_, _ int, d *schema.Result) { tc.edit(d) })
			_, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), filepath.Join("trial_0", "rank_0", "kvbench_result.json"))):
				t.Errorf("err %v, want one naming the file and %q", err, tc.want)
			}
		})
	}
	// kv-cache.py's figures, which mlpstorage reads by key: one that is
	// not a number from 0 to a billion is refused.
	for _, bad := range []string{`"avg_throughput_tokens_per_sec": -5`, `"avg_throughput_tokens_per_sec": "fast"`} {
		dir := filepath.Join(t.TempDir(), "option_1", "trial_0", "rank_0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		doc := `{"requests_completed": 1, "summary": {"total_requests": 1, ` + bad + `, "cache_stats": {"storage_entries": 3, "tier_storage_read_bandwidth_gbps": 1.5}}}`
		f := filepath.Join(dir, "kvcache_results_1.json")
		if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadMLPerf(context.Background(), []string{f}, nil, nil); err == nil || !strings.Contains(err.Error(), "summary.avg_throughput_tokens_per_sec") || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: err %v, want one naming the file and the key", bad, err)
		}
	}
}

// TestMLPerfOldSummaryGiB: kvreplay documents of format 1 (and format 2
// before 3fa26f6) wrote their summary's tier_storage_*_bandwidth_gbps in
// GiB/s, as kv-cache.py does; the rule takes a rank's storage bandwidths
// from its Tier-2 bytes over its run (its tiers' offered loads, in bytes
// a second in every format), so such a rank adds GB/s as every other
// does, and the rule agrees with the pooled view for one rank. It took
// the summary's 0.5655 (GiB/s) for u10_t1.json's 0.6072 GB/s: 6.9 % low.
func TestMLPerfOldSummaryGiB(t *testing.T) {
	run, err := LoadMLPerf(context.Background(), []string{"testdata/u10_t1.json"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := run.Ranks[0].result.FormatVersion; v != 1 {
		t.Fatalf("fixture: format_version %d, want 1", v)
	}
	s, err := AggregateMLPerf(context.Background(), run, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range s.Options {
		p := s.KVBench.Options[k].Pooled
		if !nearly(o.AggregatedReadBandwidthGBps, 0.6072212550374602) || !nearly(o.AggregatedReadBandwidthGBps, p.ReadBandwidthGBps) ||
			!nearly(o.AggregatedWriteBandwidthGBps, p.WriteBandwidthGBps) {
			t.Errorf("option %s: rule read %v write %v GB/s, pooled %v %v: want its Tier-2 offered load, 0.6072 GB/s read, in both",
				k, o.AggregatedReadBandwidthGBps, o.AggregatedWriteBandwidthGBps, p.ReadBandwidthGBps, p.WriteBandwidthGBps)
		}
	}
}

// TestMLPerfStoppedBeforeClockNotCPUTier: a rank that stopped before its
// clock (kvreplay failed writing the trace's cold objects: a result with
// no tier, nothing measured) is an incomplete rank, not one whose working
// set stayed in the CPU tier: with it the only rank of its Option, the
// Option was called CPU-tier only (Rules.md 6.3.4.4) and the rank listed
// in cpu_tier_ranks.
func TestMLPerfStoppedBeforeClockNotCPUTier(t *testing.T) {
	dir := t.TempDir()
	layTrials(t, dir, map[int]int{0: 1}, func(_, _ int, d *schema.Result) {
		d.Complete, d.IncompleteReason = false, "replay: before the clock: writing the trace's cold objects: no space left on device"
		d.Tiers, d.Cells, d.WallS = nil, nil, 0
		d.Summary.TierStorageReadBandwidthGBps, d.Summary.TierStorageWriteBandwidthGBps = 0, 0
		d.Summary.StorageReadDeviceP95MS, d.Summary.StorageWriteDeviceP95MS = 0, 0
	})
	s := aggregateDir(t, dir)
	o := s.Options["1"]
	if len(o.CPUTierRanks) != 0 || len(s.KVBench.CPUTierOptions) != 0 {
		t.Errorf("cpu_tier_ranks %v, cpu_tier_options %v: want none", o.CPUTierRanks, s.KVBench.CPUTierOptions)
	}
	if len(s.KVBench.IncompleteRanks) != 1 || !strings.Contains(s.KVBench.IncompleteRanks[0].Reason, "before the clock") {
		t.Errorf("incomplete_ranks %+v: want the rank, with its reason", s.KVBench.IncompleteRanks)
	}
}
