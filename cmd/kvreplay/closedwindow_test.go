package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestClosedLoopWindowCutsWaitingRequests: a closed loop's --duration
// window closes on requests in flight, some of whose rows are due later
// or wait for their objects' turns; no row is released after it, and
// each request is counted once: completed (all its rows ran) or cut (and
// measured, as a miss, when its rows already took longer than its
// class's target: requests_cut_late). It
// once panicked here cutting a request twice (one run in three on a
// loaded machine), and ran each 2 s window about 10 s, the requests it
// had released running to their end at trace pace. The replay runs twice
// side by side; replay's TestWindowCutsRequests and
// TestClosedLoopWindowCutsWaitingRow hold the rule on a fake clock.
func TestClosedLoopWindowCutsWaitingRequests(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.csv.zst")
	if out, err := exec.Command(kvtrace, "--num-users", "10", "--duration", "10", "--generation-mode", "none",
		"--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", tr).CombinedOutput(); err != nil {
		t.Fatalf("kvtrace: %v\n%s", err, out)
	}
	for i := range 2 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			d := filepath.Join(dir, fmt.Sprint(i))
			out, err := exec.Command(kvreplay, "--closed-loop", "--duration", "2s", "--speed", "4", "--size-scale", "1/64",
				"--mkdir", "--dir", d, "-q", "-o", d+".json", tr).CombinedOutput()
			if err != nil {
				t.Fatalf("kvreplay: %v\n%s", err, out)
			}
			res := readResult(t, d+".json")
			cl := res.ClosedLoop
			if !res.Complete || cl.RequestsReleased != cl.RequestsCompleted+res.Replay.RequestsCut || res.Requests.Count != cl.RequestsCompleted+res.Replay.RequestsCutLate {
				t.Errorf("complete %v, closed_loop %+v, %d cut (%d late), %d requests measured: want released = completed + cut, the completed and the cut late measured",
					res.Complete, cl, res.Replay.RequestsCut, res.Replay.RequestsCutLate, res.Requests.Count)
			}
		})
	}
}
