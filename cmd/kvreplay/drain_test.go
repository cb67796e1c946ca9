package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPipelineWindowEndsCleanly: kvtrace piping a trace into a kvreplay
// whose --duration window ends long before the trace does exits 0, as
// does the pipeline under pipefail: kvreplay reads what is left of the
// pipe rather than leaving kvtrace to die of a broken pipe.
func TestPipelineWindowEndsCleanly(t *testing.T) {
	t.Parallel()
	kvtrace, kvreplay := buildTools(t)
	dir := t.TempDir()
	// 150 users for 600 s of virtual time (about 2 MB of zstd, far more
	// than a pipe and a reader's buffers hold), and the 0.3 s window at
	// --speed 10 reaches its first 3 s.
	script := `set -o pipefail; "$1" --num-users 150 --duration 600 --generation-mode none --gpu-mem-gb 0 --cpu-mem-gb 1 -o - |
		"$2" --speed 10 --duration 0.3 --size-scale 1/4096 --mkdir --dir "$3/nvme" -q -o "$3/r.json" -; echo "status ${PIPESTATUS[*]}"`
	out, err := exec.Command("bash", "-c", script, "bash", kvtrace, kvreplay, dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "status 0 0") {
		t.Fatalf("pipeline: %v\n%s", err, out)
	}
	if _, err := exec.Command("test", "-s", filepath.Join(dir, "r.json")).CombinedOutput(); err != nil {
		t.Fatalf("no result: %v", err)
	}
}
