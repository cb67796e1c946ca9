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
		{name: "flags", rank: 2, ranks: 4, want: Rank{Rank: 2, Ranks: 4, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flag rank only", rank: 2, ranks: -1, wantErr: "give both"},
		{name: "flag rank too big", rank: 4, ranks: 4, wantErr: "below --ranks"},
		{name: "open mpi", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
			want: Rank{Rank: 3, Ranks: 8, Local: 1, Source: "OMPI_COMM_WORLD_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "pmi", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"}, want: Rank{Rank: 1, Ranks: 2, Source: "PMI_RANK", RanksFrom: "PMI_SIZE"}},
		{name: "slurm", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "2"},
			want: Rank{Rank: 5, Ranks: 6, Local: 2, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		// A batch script's own SLURM_PROCID is in the environment of the
		// ranks it starts with --rank.
		{name: "flags win", rank: 0, ranks: 2, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6"}, want: Rank{Rank: 0, Ranks: 2, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags as mpirun's", rank: 3, ranks: 4, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"}, want: Rank{Rank: 3, Ranks: 4, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags under mpirun -np 1", rank: 1, ranks: 2, env: map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}, want: Rank{Rank: 1, Ranks: 2, Source: "--rank", RanksFrom: "--ranks"}},
		{name: "flags against mpirun's", rank: 0, ranks: 2, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4"},
			wantErr: "--rank 0 --ranks 2, but OMPI_COMM_WORLD_RANK=3 and OMPI_COMM_WORLD_SIZE=4: this process is one of a launcher's 4"},
		{name: "flags against a pmi launcher's", rank: 1, ranks: 2, env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "3"},
			wantErr: "but PMI_RANK=1 and PMI_SIZE=3"},
		{name: "size missing", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5"}, wantErr: "SLURM_PROCID=5 but SLURM_NTASKS is not set"},
		{name: "rank at size", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2"},
			wantErr: "OMPI_COMM_WORLD_RANK=2 but OMPI_COMM_WORLD_SIZE=2: a rank must be below the run's number of ranks"},
		{name: "size not a number", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "0", "PMI_SIZE": "two"}, wantErr: `PMI_SIZE="two": not a number of ranks`},
		{name: "size zero", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "0"}, wantErr: `SLURM_NTASKS="0": not a number of ranks`},
		// Open MPI's rank with another launcher's size: refused, not mixed.
		{name: "rank of one launcher, size of another", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "1", "PMI_SIZE": "2", "SLURM_NTASKS": "2"},
			wantErr: "OMPI_COMM_WORLD_RANK=1 but OMPI_COMM_WORLD_SIZE is not set"},
		// srun --mpi=pmix: PMIx's rank, Slurm's rank and size.
		{name: "srun pmix", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "3", "SLURM_PROCID": "3", "SLURM_NTASKS": "4", "SLURM_LOCALID": "1"},
			want: Rank{Rank: 3, Ranks: 4, Local: 1, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		{name: "open mpi 5 pmix", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2"},
			want: Rank{Rank: 1, Ranks: 2, Source: "PMIX_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
		{name: "pmix and slurm disagree", rank: -1, ranks: -1, env: map[string]string{"PMIX_RANK": "1", "SLURM_PROCID": "0", "SLURM_NTASKS": "4"},
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
			want: Rank{Rank: 5, Ranks: 8, Source: "OMPI_COMM_WORLD_RANK", RanksFrom: "OMPI_COMM_WORLD_SIZE"}},
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
	env := map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		rank, ranks string
		want        Rank
		wantErr     string
	}{
		{rank: "", ranks: "", want: Rank{Rank: 1, Ranks: 2, Source: "SLURM_PROCID", RanksFrom: "SLURM_NTASKS"}},
		{rank: "0", ranks: "3", want: Rank{Rank: 0, Ranks: 3, Source: "--rank", RanksFrom: "--ranks"}},
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
