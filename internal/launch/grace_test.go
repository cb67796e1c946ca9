package launch

import (
	"strings"
	"testing"
)

// TestKillGrace: only a rank Open MPI's mpirun started, with less than
// MinKillGrace seconds between its SIGTERM and SIGKILL, gets the note.
func TestKillGrace(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" for no note
	}{
		{"alone", nil, ""},
		{"mpirun, default", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", ortePeer: "1.0;tcp://192.0.2.2:1"}, "kills its ranks 1 s after it asks them to stop (by default)"},
		{"mpirun, 2 s", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", ortePeer: "1.0;tcp://192.0.2.2:1", sigkillVar: "2"},
			"kills its ranks 2 s after it asks them to stop (with --mca odls_base_sigkill_timeout 2)"},
		{"mpirun, 5 s", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", ortePeer: "1.0;tcp://192.0.2.2:1", sigkillVar: "5"}, ""},
		{"mpirun, not a number", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", ortePeer: "1.0;tcp://192.0.2.2:1", sigkillVar: "x"}, ""},
		{"srun", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_STEP_ID": "0"}, ""},
		{"srun --mpi=pmix", map[string]string{"PMIX_RANK": "0", "SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_STEP_ID": "0"}, ""},
		{"Open MPI 5 (PRRTE)", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "PMIX_RANK": "0"}, ""},
		{"Kubernetes", map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "2"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			r, err := Find(-1, -1, getenv)
			if err != nil {
				t.Fatal(err)
			}
			got := KillGrace(r, getenv)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("KillGrace(%+v) = %q; want %q", r, got, tc.want)
			}
			if got != "" && !strings.Contains(got, "--mca odls_base_sigkill_timeout 10") {
				t.Errorf("the note names no fix: %q", got)
			}
		})
	}
}
