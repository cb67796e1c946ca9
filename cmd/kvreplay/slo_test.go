package main

import (
	"strings"
	"testing"
)

// TestClosedLoopSLO replays 6 users closed-loop for 1 s with --slo-ms: the
// result carries the requests' SLO attainment, its counts those of the
// requests measured (batch requests only: their class's target, the
// overall one for the rest); an SLO no request can miss is attained by
// all. A malformed --slo-ms is refused with exit 2.
func TestClosedLoopSLO(t *testing.T) {
	t.Parallel()
	tr := usersFile(t, 6, 200)
	dir := t.TempDir()
	res, _ := replayDoc(t, "--closed-loop", "--duration", "1s", "--slo-ms", "5000,batch=60000", "--mkdir", "--dir", dir, "-q", "-o", "-", tr)
	slo := res.Requests.SLO
	if slo == nil || slo.Count != res.Requests.Count || slo.Count == 0 || slo.Within != slo.Count || slo.Attainment != 1 || slo.TargetMS != 5000 {
		t.Fatalf("slo %+v of %d requests: want every request within a minute", slo, res.Requests.Count)
	}
	if len(slo.ByQoS) != 3 || slo.ByQoS[2].QoS != "batch" || slo.ByQoS[2].TargetMS != 60000 || slo.ByQoS[2].Count != slo.Count {
		t.Errorf("by class %+v: want batch's 60 s target and every request (the trace's are batch)", slo.ByQoS)
	}
	res, _ = replayDoc(t, "--closed-loop", "--duration", "1s", "--slo-ms", "0.000001", "--mkdir", "--dir", dir, "-q", "-o", "-", tr)
	if s := res.Requests.SLO; s == nil || s.Within != 0 || s.Attainment != 0 || s.Count == 0 {
		t.Errorf("an SLO of 1 ns: %+v, want none within", s)
	}
	code, _, stderr := kvreplay("--slo-ms", "fast=3", "--closed-loop", tr)
	if code != 2 || !strings.Contains(stderr, `--slo-ms fast=3: class "fast"`) {
		t.Errorf("--slo-ms fast=3: exit %d, %q", code, stderr)
	}
}
