package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestKillGraceNote: rank 0 of Open MPI 4's mpirun, whose SIGKILL follows
// its SIGTERM by 1 s unless --mca odls_base_sigkill_timeout says more,
// says how to give the ranks time to write their results and remove
// their files; with the grace given, and rank 1 (quiet), it says nothing.
// The environment is mpirun's (OMPI_* as 4.1.4 sets them), not a real
// launch: TestRealMpirun runs one.
func TestKillGraceNote(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	for _, tc := range []struct {
		name string
		env  map[string]string
		note bool
	}{
		{"rank 0, default", map[string]string{"OMPI_COMM_WORLD_RANK": "0"}, true},
		{"rank 0, 10 s", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_MCA_odls_base_sigkill_timeout": "10"}, false},
		{"rank 1, default", map[string]string{"OMPI_COMM_WORLD_RANK": "1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
			t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
			t.Setenv("OMPI_MCA_orte_hnp_uri", "1317208064.0;tcp://127.0.0.1:44003")
			t.Setenv("OMPI_MCA_odls_base_sigkill_timeout", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out := filepath.Join(dir, tc.env["OMPI_COMM_WORLD_RANK"]+strings.ReplaceAll(tc.name, " ", "")+".{rank}.json")
			code, _, stderr := kvreplay("--mkdir", "--dir", filepath.Join(dir, "rank{rank}"), "--speed", "max", "--shard", "key", "-o", out, tr)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			const want = "kvreplay: note: an interrupted mpirun kills its ranks 1 s after it asks them to stop (by default), which may be too soon for them to write their partial results and remove their files: run mpirun --mca odls_base_sigkill_timeout 10"
			if got := strings.Contains(stderr, want); got != tc.note {
				t.Errorf("the note on stderr: %v, want %v:\n%s", got, tc.note, stderr)
			}
		})
	}
}
