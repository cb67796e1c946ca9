package launch

import (
	"strings"
	"testing"
)

// FuzzFind: whatever the launchers' variables and the flags say, a rank
// found stands within its run (0 <= Rank < Ranks), and its local rank
// within its run too, or unknown; a refusal is one line.
func FuzzFind(f *testing.F) {
	for _, s := range []struct {
		env         string
		rank, ranks int
	}{
		{"OMPI_COMM_WORLD_RANK=1\nOMPI_COMM_WORLD_SIZE=2\nOMPI_COMM_WORLD_LOCAL_RANK=1", -1, -1},
		{"PMI_RANK=5\nPMI_SIZE=8\nPALS_LOCAL_RANKID=2", -1, -1},
		{"SLURM_PROCID=0\nSLURM_NTASKS=4\nSLURM_JOB_ID=7", -1, -1},
		{"SLURM_PROCID=3\nSLURM_NTASKS=4\nSLURM_STEP_ID=0\nSLURM_STEP_NUM_TASKS=4\nSLURM_LOCALID=1", -1, -1},
		{"PMIX_RANK=2\nSLURM_PROCID=2\nSLURM_NTASKS=3\nSLURM_STEP_ID=1", -1, -1},
		{"JOB_COMPLETION_INDEX=3\nKVBENCH_RANKS=4\nKVBENCH_RUN_ID=x", -1, 4},
		{"KVBENCH_LOCAL_RANK=1", 1, 2},
		{"PMI_RANK=-1\nPMI_SIZE=0", 0, 1},
		{"OMPI_COMM_WORLD_RANK=9\nOMPI_COMM_WORLD_SIZE=4", 9, 4},
	} {
		f.Add(s.env, s.rank, s.ranks)
	}
	f.Fuzz(func(t *testing.T, env string, rank, ranks int) {
		vars := map[string]string{}
		for line := range strings.SplitSeq(env, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				vars[k] = v
			}
		}
		r, err := Find(max(rank, -1), max(ranks, -1), func(k string) string { return vars[k] })
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a refusal of several lines: %q", err)
			}
			return
		}
		if r.Ranks < 1 || r.Rank < 0 || r.Rank >= r.Ranks {
			t.Fatalf("rank %d of %d", r.Rank, r.Ranks)
		}
		if r.Local != LocalUnknown && (r.Local < 0 || r.Local >= r.Ranks) {
			t.Fatalf("local rank %d of a run of %d", r.Local, r.Ranks)
		}
		if r.Ranks > 1 && r.Source == "" {
			t.Fatalf("a run of %d ranks that nothing said: %+v", r.Ranks, r)
		}
	})
}
