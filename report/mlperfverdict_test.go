package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// TestMLPerfOptionVerdict: an Option whose figures include a rank with
// failed operations or one cut short (which the rule sums as whole, and
// mlpstorage's partial_failure does not say) has the verdict FAIL on its
// own line and record, naming those ranks, in every format --aggregate
// renders (json, text, md; it writes no CSV or XLSX): only a run-level
// WARNING named them, and the Option's line read "partial_failure
// false". An Option with a rank missing fails too; a whole one passes.
func TestMLPerfOptionVerdict(t *testing.T) {
	dir, docs := writeMLPerfRun(t)
	rewrite := func(option, trial, rank int, edit func(*schema.Result)) {
		d := docs[[3]int{option, trial, rank}]
		edit(d)
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "option_"+itoa(option), "trial_"+itoa(trial), "rank_"+itoa(rank), "kvbench_result.json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(1, 0, 1, func(d *schema.Result) { d.Errors.Count, d.Errors.First = 2, []string{"read /x: input/output error"} })
	rewrite(1, 1, 0, func(d *schema.Result) { d.Complete, d.IncompleteReason = false, "interrupt signal received" })
	// Option 2 ran trial 1 as well (the same documents): a whole Option.
	for rank := range 2 {
		d := *docs[[3]int{2, 0, rank}]
		d.Trial, d.Started = 1, d.Started.Add(time.Minute)
		raw, err := json.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		rd := filepath.Join(dir, "option_2", "trial_1", "rank_"+itoa(rank))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := aggregateDir(t, dir)

	tests := []struct {
		option             string
		verdict            string
		failed, incomplete []string
		why                []string // each in one of Why, in order
	}{
		{"1", VerdictFail, []string{"trial 0 rank 1"}, []string{"trial 1 rank 0"}, []string{
			"1 rank run(s) with failed operations in these figures: trial 0 rank 1: 2 operation(s) failed (" +
				filepath.Join(dir, "option_1/trial_0/rank_1/kvbench_result.json") + ")",
			"1 rank run(s) cut short, in these figures as if whole: trial 1 rank 0 cut short (interrupt signal received)"}},
		{"2", VerdictPass, nil, nil, nil},
		{"3", VerdictFail, nil, nil, []string{"partial_failure: 1 rank result(s) missing: " + filepath.Join(dir, "option_3/trial_1/rank_1")}},
	}
	for _, tt := range tests {
		v := s.Options[tt.option].KVBench
		if v == nil {
			t.Fatalf("option %s: no verdict", tt.option)
		}
		if v.Verdict != tt.verdict || !slices.Equal(v.FailedRanks, tt.failed) || !slices.Equal(v.IncompleteRanks, tt.incomplete) ||
			len(v.Why) != len(tt.why) {
			t.Errorf("option %s: %+v, want %s failed %q incomplete %q, %d reason(s)", tt.option, v, tt.verdict, tt.failed, tt.incomplete, len(tt.why))
			continue
		}
		for i, w := range tt.why {
			if !strings.HasPrefix(v.Why[i], w) {
				t.Errorf("option %s: why[%d] %q, want it to start %q", tt.option, i, v.Why[i], w)
			}
		}
	}

	// JSON: the Option's own record says it, beside mlpstorage's fields.
	var js bytes.Buffer
	if err := RenderMLPerf(&js, s, nil, "json"); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Options map[string]struct {
			PartialFailure bool           `json:"partial_failure"`
			KVBench        *MLPerfVerdict `json:"kvbench"`
		} `json:"options"`
	}
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if o := raw.Options["1"]; o.PartialFailure || o.KVBench == nil || o.KVBench.Verdict != VerdictFail ||
		!slices.Equal(o.KVBench.FailedRanks, []string{"trial 0 rank 1"}) || !slices.Equal(o.KVBench.IncompleteRanks, []string{"trial 1 rank 0"}) {
		t.Errorf("json option 1: %+v", o)
	}
	if back, ok, err := decodeRunSummary(js.Bytes()); !ok || err != nil || back.Options["1"].KVBench.Verdict != VerdictFail {
		t.Errorf("the summary does not read back with its verdicts: %v %v", ok, err)
	}

	// Text and md: the Option's title and its line.
	for _, format := range []string{"text", "md"} {
		var b bytes.Buffer
		if err := RenderMLPerf(&b, s, nil, format); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			"option 1: 2 trial(s) x 2 rank(s): NOT A MEASUREMENT\n",
			"verdict NOT A MEASUREMENT, partial_failure false, missing_files [], cpu_tier_ranks [], failed_ranks [trial 0 rank 1], incomplete_ranks [trial 1 rank 0]\n",
			"NOT A MEASUREMENT: 1 rank run(s) with failed operations in these figures: trial 0 rank 1: 2 operation(s) failed",
			"NOT A MEASUREMENT: 1 rank run(s) cut short, in these figures as if whole: trial 1 rank 0 cut short (interrupt signal received)",
			"option 2: 2 trial(s) x 2 rank(s): MEASURED\n",
			"verdict MEASURED, partial_failure false",
			"option 3: 2 trial(s) x 2 rank(s): NOT A MEASUREMENT\n",
			"verdict NOT A MEASUREMENT, partial_failure true, missing_files [" + filepath.Join(dir, "option_3/trial_1/rank_1") + "]",
			"FAILED (2 ops)", "CUT SHORT",
		} {
			if format == "md" {
				want = mdCell(want) // its brackets escaped
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in\n%s", format, want, out)
			}
		}
		// The Option's verdict is not storage_health's: it never says
		// PASS or FAIL, which mean one thing everywhere.
		for _, no := range []string{": PASS", ": FAIL", "verdict PASS", "verdict FAIL"} {
			if strings.Contains(out, no) {
				t.Errorf("%s: the Option's verdict says %q:\n%s", format, no, out)
			}
		}
	}
}
