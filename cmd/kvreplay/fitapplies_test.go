package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/setup"
)

// TestPlanSaysWhatFitApplies: where --fit bounds the replay to a
// --duration window first, --plan says what --fit then applies, planned
// over that window, and does not mark the whole trace's option as
// --fit's. kvreplay --plan of MLPerf's 8B trace offered --size-scale
// 1/8192 "(--fit applies this)" while --fit applied --duration 2m0s
// --size-scale 1/4096. Here the first second holds 1 GiB written and read
// back, and 64 TiB come at 10 s: the whole trace's option scales for the
// 64 TiB, the window's for the 1 GiB.
func TestPlanSaysWhatFitApplies(t *testing.T) {
	dir := t.TempDir()
	tr := writeTrace(t, dir, "late.csv",
		"0.000000,Write,1073741824,Tier-2,a,Prefill",
		"0.500000,Read,1073741824,Tier-2,a,Decode",
		"10.000000,Write,70368744177664,Tier-2,b,Prefill",
		"10.001000,Read,70368744177664,Tier-2,b,Decode")
	code, stdout, stderr := kvreplay("--plan", "--format", "json", "--fit-time", "1s", "--dir", dir, tr)
	var doc setup.PlanDoc
	if err := json.Unmarshal([]byte(stdout), &doc); code != 0 || err != nil {
		t.Fatalf("--plan --format json: exit %d, %v, %q: %s", code, err, stderr, stdout)
	}
	whole := doc.Advice.Fit
	if whole == nil || len(doc.FitApplies) != 2 || doc.FitApplies[0] != "--duration 1s" || slices.Equal(whole.Flags, doc.FitApplies[1:]) {
		t.Fatalf("fit_applies %q beside the whole trace's option %+v; want --duration 1s and the window's own --size-scale", doc.FitApplies, whole)
	}

	code, stdout, _ = kvreplay("--plan", "--fit-time", "1s", "--dir", dir, tr)
	if want := "kvreplay --fit applies " + strings.Join(doc.FitApplies, " ") + "."; code != 0 || !strings.Contains(stdout, want) || strings.Contains(stdout, "(--fit applies this)") {
		t.Errorf("exit %d; the plan's text should say %q and mark no option of the whole trace as --fit's:\n%s", code, want, stdout)
	}

	out := dir + "/r.json"
	code, _, stderr = kvreplay("--fit", "--fit-time", "1s", "--dir", dir, "-o", out, tr)
	if code != 0 {
		t.Fatalf("--fit: exit %d, %s", code, stderr)
	}
	if res := readResult(t, out); res.Fit == nil || !slices.Equal(res.Fit.Applied, doc.FitApplies) {
		t.Errorf("--fit applied %+v; --plan said %q", res.Fit, doc.FitApplies)
	}
}
