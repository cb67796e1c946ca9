package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestClosedLoopWindowCutsWaitingRequests: when a closed loop's --duration
// window closes on requests whose rows wait for their objects' turns,
// they are cut, each once. Cutting one hands its objects' turns to others
// that wait; walking the waiting list while that changed it cut a request
// twice, after its rows were gone (a panic in about one run in three of
// this trace on a loaded machine, rarer on a quiet one: the replay runs
// twice side by side; replay's TestClosedLoopWindow* hold the rule).
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
			out, err := exec.Command(kvreplay, "--closed-loop", "--duration", "2s", "--speed", "4", "--size-scale", "1/8",
				"--mkdir", "--dir", d, "-q", "-o", d+".json", tr).CombinedOutput()
			if err != nil {
				t.Fatalf("kvreplay: %v\n%s", err, out)
			}
		})
	}
}
