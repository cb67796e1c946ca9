package launch

import (
	"strings"
	"testing"
)

// TestFindRank reads ranks from flags and from each launcher's variables.
func TestFindRank(t *testing.T) {
	tests := []struct {
		name        string
		rank, ranks int
		env         map[string]string
		want        Rank
		wantErr     string
	}{
		{name: "alone", rank: -1, ranks: -1, want: Rank{Ranks: 1}},
		{name: "flags", rank: 2, ranks: 4, want: Rank{Rank: 2, Ranks: 4, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flag rank only", rank: 2, ranks: -1, wantErr: "give both"},
		{name: "flag rank too big", rank: 4, ranks: 4, wantErr: "below --ranks"},
		{name: "open mpi", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
			want: Rank{Rank: 3, Ranks: 8, Local: 1, Source: "OMPI_COMM_WORLD_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "pmi", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"}, want: Rank{Rank: 1, Ranks: 2, Local: LocalUnknown, Source: "PMI_RANK", RanksFrom: "PMI_SIZE"}},
		{name: "jsrun", rank: -1, ranks: -1, env: map[string]string{"JSM_NAMESPACE_RANK": "5", "JSM_NAMESPACE_SIZE": "12", "JSM_NAMESPACE_LOCAL_RANK": "1"},
			want: Rank{Rank: 5, Ranks: 12, Local: 1, Source: "JSM_NAMESPACE_RANK", RanksFrom: "JSM_NAMESPACE_SIZE"}},
		{name: "jsrun with spectrum mpi", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "12", "OMPI_COMM_WORLD_LOCAL_RANK": "1",
			"JSM_NAMESPACE_RANK": "5", "JSM_NAMESPACE_SIZE": "12", "JSM_NAMESPACE_LOCAL_RANK": "1"},
			want: Rank{Rank: 5, Ranks: 12, Local: 1, Source: "OMPI_COMM_WORLD_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "slurm", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "2", "SLURM_STEP_ID": "0"},
			want: Rank{Rank: 5, Ranks: 6, Local: 2, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		// A batch script's own SLURM_PROCID is in the environment of the
		// ranks it starts with --rank.
		{name: "flags win", rank: 0, ranks: 2, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6"}, want: Rank{Rank: 0, Ranks: 2, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags as mpirun's", rank: 3, ranks: 4, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, want: Rank{Rank: 3, Ranks: 4, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags under mpirun -np 1", rank: 1, ranks: 2, env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}, want: Rank{Rank: 1, Ranks: 2, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags against mpirun's", rank: 0, ranks: 2, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"},
			wantErr: "--rank 0 --ranks 2, but OMPI_COMM_WORLD_RANK=3 and OMPI_COMM_WORLD_SIZE=4: this process is one of a launcher's 4"},
		{name: "flags against a pmi launcher's", rank: 1, ranks: 2, env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "3"},
			wantErr: "but PMI_RANK=1 and PMI_SIZE=3"},
		{name: "size missing", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5", "SLURM_STEP_ID": "0"}, wantErr: "SLURM_PROCID=5 but SLURM_NTASKS is not set"},
		{name: "rank at size", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"},
			wantErr: "OMPI_COMM_WORLD_RANK=2 but OMPI_COMM_WORLD_SIZE=2: a rank must be below the run's number of ranks"},
		{name: "size not a number", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "two"}, wantErr: `PMI_SIZE="two": not a number of ranks`},
		{name: "size zero", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "0", "SLURM_STEP_ID": "0"}, wantErr: `SLURM_NTASKS="0": not a number of ranks`},
		// Open MPI's rank with another launcher's size: refused, not mixed.
		{name: "rank of one launcher, size of another", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "PMI_SIZE": "2", "SLURM_NTASKS": "2"},
			wantErr: "OMPI_COMM_WORLD_RANK=1 but OMPI_COMM_WORLD_SIZE is not set"},
		// srun --mpi=pmix: PMIx's rank, Slurm's rank and size.
		{name: "srun pmix", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "3", "SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0"},
			want: Rank{Rank: 3, Ranks: 4, Local: 1, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		{name: "open mpi 5 pmix", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"},
			want: Rank{Rank: 1, Ranks: 2, Local: LocalUnknown, Source: "PMIX_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "pmix and slurm disagree", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_STEP_ID": "0"},
			wantErr: "PMIX_RANK=1 but SLURM_PROCID=0: two launchers give this process different ranks"},
		{name: "pmix without a size", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "1"}, wantErr: "PMIX_RANK=1 but neither"},
		{name: "not a number", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "x", "PMI_SIZE": "2"}, wantErr: "not a rank"},
		{name: "indexed job, --ranks", rank: -1, ranks: 4, env: map[string]string{"JOB_COMPLETION_INDEX": "3"},
			want: Rank{Rank: 3, Ranks: 4, Source: "JOB_COMPLETION_INDEX", RanksFrom: "--ranks"}},
		{name: "indexed job, KVBENCH_RANKS", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "2", "KVBENCH_RANKS": "4"},
			want: Rank{Rank: 2, Ranks: 4, Source: "JOB_COMPLETION_INDEX", RanksFrom: "KVBENCH_RANKS"}},
		{name: "indexed job, no size", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantErr: "give the Job's spec.completions as --ranks"},
		{name: "indexed job, index at KVBENCH_RANKS", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "2", "KVBENCH_RANKS": "2"},
			wantErr: "JOB_COMPLETION_INDEX=2 but KVBENCH_RANKS=2: a rank must be below"},
		{name: "indexed job, KVBENCH_RANKS not a number", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "1", "KVBENCH_RANKS": "x"},
			wantErr: `KVBENCH_RANKS="x": not a number of ranks`},
		{name: "indexed job, index beyond --ranks", rank: -1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantErr: "must be below --ranks 2"},
		{name: "indexed job, bad index", rank: -1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "-1"}, wantErr: "not a rank"},
		{name: "mpirun in an indexed job's pod", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "1", "OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8"},
			want: Rank{Rank: 5, Ranks: 8, Local: LocalUnknown, Source: "OMPI_COMM_WORLD_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "--rank wins over the index", rank: 1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "2"},
			want: Rank{Rank: 1, Ranks: 2, Source: "--rank", RanksFrom: "--ranks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.rank, tt.ranks, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestFromFlags reads --rank and --ranks as given: "" is not given, and
// anything but a non-negative integer is refused, naming the flag.
func TestFromFlags(t *testing.T) {
	env := map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_STEP_ID": "0"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		rank, ranks string
		want        Rank
		wantErr     string
	}{
		{rank: "", ranks: "", want: Rank{Rank: 1, Ranks: 2, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		{rank: "0", ranks: "3", want: Rank{Rank: 0, Ranks: 3, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks"}},
		{rank: "x", ranks: "3", wantErr: "--rank x: want a non-negative integer"},
		{rank: "1", ranks: "-2", wantErr: "--ranks -2: want a non-negative integer"},
		{rank: "1", ranks: "", wantErr: "--rank and --ranks: give both"},
	}
	for _, tt := range tests {
		t.Run(tt.rank+"/"+tt.ranks, func(t *testing.T) {
			got, err := FromFlags(tt.rank, tt.ranks, getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestTemplate fills {rank} and refuses a path several ranks would share.
func TestTemplate(t *testing.T) {
	four := Rank{Rank: 2, Ranks: 4}
	if p, err := Template("--dir", "/mnt/nvme/rank{rank}", four); err != nil || p != "/mnt/nvme/rank2" {
		t.Errorf("template: %q, %v", p, err)
	}
	if _, err := Template("-o", "out.json", four); err == nil || !strings.Contains(err.Error(), "{rank}") {
		t.Errorf("a shared -o under 4 ranks: %v", err)
	}
	const want = "--device /dev/nvme0n1: 4 ranks would share it: put {rank} in it (e.g. --device /mnt/nvme0/kv.{rank}.extent)"
	if _, err := Template("--device", "/dev/nvme0n1", four); err == nil || err.Error() != want {
		t.Errorf("a shared --device under 4 ranks: %v, want %q", err, want)
	}
	for _, p := range []string{"", "-"} {
		if got, err := Template("-o", p, four); err != nil || got != p {
			t.Errorf("%q: %q, %v", p, got, err)
		}
	}
	if p, err := Template("-o", "out.json", Rank{Ranks: 1}); err != nil || p != "out.json" {
		t.Errorf("alone: %q, %v", p, err)
	}
}

// TestFindSlurmBatchScript: a Slurm batch script's own environment
// (SLURM_PROCID=0, SLURM_NTASKS of the job, no SLURM_STEP_ID) is not
// srun's. kvreplay run in a script of 4 tasks took itself for rank 0 of 4
// and replayed a quarter of the trace, alone; it is refused, naming srun
// and --rank 0 --ranks 1. A script of one task, or of none given (which
// was refused for its missing SLURM_NTASKS), runs a process alone. srun's
// tasks are its job step's, of SLURM_STEP_NUM_TASKS (SLURM_NTASKS keeps the
// job's under srun --preserve-env), their run the job step.
func TestFindSlurmBatchScript(t *testing.T) {
	batch := map[string]string{"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NODEID": "0", "SLURM_NTASKS": "4"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	step := with(batch, "SLURM_STEP_ID", "3", "SLURM_STEPID", "3", "SLURM_STEP_NUM_TASKS", "4", "SLURM_PROCID", "2", "SLURM_LOCALID", "1")
	tests := []struct {
		name        string
		rank, ranks int
		env         map[string]string
		want        Rank
		wantErr     string
	}{
		{name: "batch script of 4 tasks", rank: -1, ranks: -1, env: batch,
			wantErr: "SLURM_PROCID=0 and SLURM_NTASKS=4, but no SLURM_STEP_ID: this is a Slurm job's own environment (its batch script's, or salloc's shell), not one of srun's 4 tasks: start kvreplay with srun"},
		{name: "batch script of 4 tasks, one process", rank: 0, ranks: 1, env: batch, want: Rank{Ranks: 1, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "batch script of one task", rank: -1, ranks: -1, env: with(batch, "SLURM_NTASKS", "1"), want: Rank{Ranks: 1}},
		{name: "batch script, no tasks given", rank: -1, ranks: -1, env: with(batch, "SLURM_NTASKS", ""), want: Rank{Ranks: 1}},
		{name: "srun in the script", rank: -1, ranks: -1, env: step,
			want: Rank{Rank: 2, Ranks: 4, Local: 1, Source: "SLURM_PROCID", RanksFrom: "SLURM_STEP_NUM_TASKS", Run: "77.3"}},
		{name: "srun, older Slurm's SLURM_STEPID alone", rank: -1, ranks: -1, env: with(step, "SLURM_STEP_ID", "", "SLURM_STEP_NUM_TASKS", ""),
			want: Rank{Rank: 2, Ranks: 4, Local: 1, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS", Run: "77.3"}},
		{name: "srun -n 2 --preserve-env", rank: -1, ranks: -1, env: with(step, "SLURM_STEP_NUM_TASKS", "2", "SLURM_PROCID", "1"),
			want: Rank{Rank: 1, Ranks: 2, Local: 1, Source: "SLURM_PROCID", RanksFrom: "SLURM_STEP_NUM_TASKS", Run: "77.3"}},
		{name: "srun, its rank as --rank", rank: 2, ranks: 4, env: step,
			want: Rank{Rank: 2, Ranks: 4, Local: 1, Source: "--rank", RanksFrom: "--ranks", Run: "77.3"}},
		{name: "pmix in the script", rank: -1, ranks: -1, env: with(batch, "PMIX_RANK", "0"), wantErr: "PMIX_RANK=0 but neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.rank, tt.ranks, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--rank 0 --ranks 1") && !strings.HasPrefix(tt.wantErr, "PMIX") {
					t.Fatalf("got %+v, %v; want an error with %q and --rank 0 --ranks 1", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if r, err := Find(-1, -1, func(k string) string { return step[k] }); err != nil || r.OneProcess() != "start one task (srun -n 1), or run it without srun" {
		t.Errorf("one process under srun: %q, %v; --rank 0 --ranks 1 in each task makes every task rank 0", r.OneProcess(), err)
	}
}

// TestFindLocalRank: PMI's launchers name a rank's local rank each their
// own way (Hydra MPI_LOCALRANKID, Cray PALS PMI_LOCAL_RANK and
// PALS_LOCAL_RANKID, MVAPICH2 MV2_COMM_WORLD_LOCAL_RANK, Flux
// FLUX_TASK_LOCAL_ID, srun --mpi=pmi2 Slurm's SLURM_LOCALID); one that
// names none, under several ranks, leaves it unknown, where every rank was
// local rank 0 and took the first GPU. So does --rank without a launcher
// that says the same rank. A local rank that is not one is refused.
func TestFindLocalRank(t *testing.T) {
	pmi := func(kv ...string) map[string]string {
		m := map[string]string{"PMI_RANK": "5", "PMI_SIZE": "8"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name        string
		rank, ranks int
		env         map[string]string
		local       int
		wantErr     string
	}{
		{name: "hydra", rank: -1, ranks: -1, env: pmi("MPI_LOCALRANKID", "1"), local: 1},
		{name: "cray pmi", rank: -1, ranks: -1, env: pmi("PMI_LOCAL_RANK", "3"), local: 3},
		{name: "pals", rank: -1, ranks: -1, env: pmi("PALS_LOCAL_RANKID", "2"), local: 2},
		{name: "mvapich2", rank: -1, ranks: -1, env: pmi("MV2_COMM_WORLD_LOCAL_RANK", "1"), local: 1},
		{name: "flux", rank: -1, ranks: -1, env: pmi("FLUX_TASK_LOCAL_ID", "1"), local: 1},
		{name: "srun --mpi=pmi2", rank: -1, ranks: -1, env: pmi("SLURM_PROCID", "5", "SLURM_STEP_ID", "0", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1"), local: 1},
		// Hydra started by srun, a proxy a host: Slurm's task is the
		// proxy, not this rank.
		{name: "hydra's proxy under srun", rank: -1, ranks: -1, env: pmi("SLURM_PROCID", "1", "SLURM_STEP_ID", "0", "SLURM_NTASKS", "2", "SLURM_LOCALID", "0"), local: LocalUnknown},
		{name: "none said", rank: -1, ranks: -1, env: pmi(), local: LocalUnknown},
		{name: "one rank", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "1"}, local: 0},
		{name: "open mpi", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, local: 1},
		{name: "an indexed job's pod", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "3", "KVBENCH_RANKS": "4"}, local: 0},
		{name: "--rank as mpirun's", rank: 3, ranks: 4, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "1"}, local: 1},
		{name: "--rank, no launcher", rank: 1, ranks: 2, local: LocalUnknown},
		{name: "--rank alone", rank: 0, ranks: 1, local: 0},
		// A script that starts its ranks on its host itself says each
		// one's local rank.
		{name: "--rank, KVBENCH_LOCAL_RANK", rank: 1, ranks: 2, env: map[string]string{"KVBENCH_LOCAL_RANK": "1"}, local: 1},
		{name: "KVBENCH_LOCAL_RANK beyond the ranks", rank: 1, ranks: 2, env: map[string]string{"KVBENCH_LOCAL_RANK": "2"}, wantErr: `KVBENCH_LOCAL_RANK="2": not a local rank (with --rank=1 of 2)`},
		{name: "--rank in a pod", rank: 1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, local: 0},
		{name: "not a number", rank: -1, ranks: -1, env: pmi("MPI_LOCALRANKID", "x"), wantErr: `MPI_LOCALRANKID="x": not a local rank (with PMI_RANK=5 of 8)`},
		{name: "beyond the ranks", rank: -1, ranks: -1, env: pmi("PMI_LOCAL_RANK", "8"), wantErr: `PMI_LOCAL_RANK="8": not a local rank`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.rank, tt.ranks, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Local != tt.local {
				t.Fatalf("got %+v, %v; want local rank %d", got, err, tt.local)
			}
		})
	}
}

// TestFindRun: a rank knows its run's id, for the start barrier: the
// launcher's job (Open MPI's and PMIx's namespace, srun --mpi=pmi2's
// PMI_JOBID), or KVBENCH_RUN_ID, which wins.
func TestFindRun(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "PMIX_NAMESPACE": "576585729", "OMPI_MCA_ess_base_jobid": "1"}, "576585729"},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "OMPI_MCA_ess_base_jobid": "576585729"}, "576585729"},
		{map[string]string{"PMI_RANK": "0", "PMI_SIZE": "1", "PMI_JOBID": "77.3"}, "77.3"},
		{map[string]string{"PMI_RANK": "0", "PMI_SIZE": "1"}, ""},
		{map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "2", "KVBENCH_RUN_ID": "5c0de"}, "5c0de"},
		{map[string]string{"PMI_RANK": "0", "PMI_SIZE": "1", "PMI_JOBID": "77.3", "KVBENCH_RUN_ID": "5c0de"}, "5c0de"},
		{map[string]string{"KVBENCH_RUN_ID": "5c0de"}, "5c0de"},
	} {
		r, err := Find(-1, -1, func(k string) string { return tt.env[k] })
		if err != nil || r.Run != tt.want {
			t.Errorf("%v: run %q, %v; want %q", tt.env, r.Run, err, tt.want)
		}
	}
	if r, err := Find(1, 2, func(k string) string { return map[string]string{"KVBENCH_RUN_ID": "5c0de"}[k] }); err != nil || r.Run != "5c0de" {
		t.Errorf("--rank 1 --ranks 2 with KVBENCH_RUN_ID: run %q, %v", r.Run, err)
	}
}

// TestJsrunRanks: under IBM's jsrun alone (no Open MPI variables, a
// program not started as an MPI one), what the other launchers' ranks
// get: the origin of the number of ranks says who set it, one process is
// asked of jsrun itself (--rank 0 --ranks 1 in each of its tasks would
// make every task rank 0, as under srun), and --rank that contradicts
// jsrun's environment is refused.
func TestJsrunRanks(t *testing.T) {
	env := map[string]string{"JSM_NAMESPACE_RANK": "5", "JSM_NAMESPACE_SIZE": "12", "JSM_NAMESPACE_LOCAL_RANK": "1"}
	getenv := func(k string) string { return env[k] }
	r, err := Find(-1, -1, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.RanksOrigin(), "JSM_NAMESPACE_SIZE=12 in the environment (IBM's jsrun sets it)"; got != want {
		t.Errorf("RanksOrigin() = %q, want %q", got, want)
	}
	if got, want := r.OneProcess(), "start one process (jsrun -n 1), or run it without jsrun"; got != want {
		t.Errorf("OneProcess() = %q, want %q", got, want)
	}
	if _, err := Find(0, 1, getenv); err == nil || !strings.Contains(err.Error(), "JSM_NAMESPACE_RANK=5 and JSM_NAMESPACE_SIZE=12") {
		t.Errorf("--rank 0 --ranks 1 in one of jsrun's 12 tasks: %v; want it refused, naming jsrun's variables", err)
	}
	if r, err := Find(5, 12, getenv); err != nil || r.Local != 1 {
		t.Errorf("jsrun's own rank as --rank: %+v, %v; want it taken, local rank 1", r, err)
	}
}
