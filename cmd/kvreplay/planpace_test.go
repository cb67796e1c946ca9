package main

import (
	"strings"
	"testing"
)

// TestPlanOffersNoPaceForSpace: --plan's "Options that make it fit" are
// those a refusal offers (setup's notFitError): for a replay short of
// space, a pace's (--speed, --closed-loop) is not among them, since it
// saves none. A 64 TiB object fits no test machine's disk, and the pace
// of writing it and reading it back in a second asks too much bandwidth:
// the plan listed "--speed 1.42e-05 slows the trace's pace ... (the space
// must still fit)" among the options that make it fit, while kvreplay's
// refusal of the same replay left it out.
func TestPlanOffersNoPaceForSpace(t *testing.T) {
	dir := t.TempDir()
	tr := writeTrace(t, dir, "big.csv",
		"0.000000,Write,70368744177664,Tier-2,a,Prefill",
		"1.000000,Read,70368744177664,Tier-2,a,Decode")
	code, stdout, stderr := kvreplay("--plan", "--fit-time", "0", "--dir", dir, tr)
	if code != 0 {
		t.Fatalf("--plan: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "It does not fit") {
		t.Fatalf("want a plan that does not fit (64 TiB on %s):\n%s", dir, stdout)
	}
	_, offered, _ := strings.Cut(stdout, "\nOptions that make it fit:\n")
	for line := range strings.Lines(offered) {
		if f := strings.Fields(line); len(f) > 0 && (f[0] == "--speed" || f[0] == "--closed-loop") {
			t.Errorf("a pace offered to a replay short of space: %q\n%s", line, stdout)
		}
	}
	code, _, stderr = kvreplay("--dir", dir, tr)
	if code != 2 || strings.Contains(stderr, "--speed") {
		t.Errorf("the replay: exit %d, %q; want 2 and no --speed offered", code, stderr)
	}
}
