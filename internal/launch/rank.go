package launch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// launcherVars are the environment variables launchers set, in the order
// they are trusted: rank, size and local rank (empty when the launcher
// sets none). A launcher's rank is read with its own size only: one
// without it is refused, but for PMIx's, which srun --mpi=pmix sets
// beside Slurm's rank and size (then taken when they name the same rank).
var launcherVars = []struct{ rank, size, local string }{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
	{"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
	{"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
	// A Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in each pod, but
	// not the number of completions: --ranks gives it, or KVBENCH_RANKS,
	// set in the manifest from spec.completions. A pod is a host of its
	// own: its local rank is 0.
	{k8sIndex, k8sRanks, ""},
}

// The variables of a Kubernetes Indexed Job's ranks.
const (
	k8sIndex = "JOB_COMPLETION_INDEX"
	k8sRanks = "KVBENCH_RANKS"
)

// Rank is where a process stands in its run: its rank of Ranks, its rank
// among the ranks of its host (Local), and what said so (Source: "--rank",
// a launcher variable's name, or "" for a process alone, rank 0 of 1;
// RanksFrom, of Ranks: "--ranks", a launcher variable's name, or "").
type Rank struct {
	Rank, Ranks, Local int
	Source, RanksFrom  string
}

// launchers name who sets each variable of a number of ranks.
var launchers = map[string]string{
	"OMPI_COMM_WORLD_SIZE": "Open MPI's mpirun sets it",
	"PMI_SIZE":             "an MPI launcher (MPICH's, Intel MPI's mpirun) sets it",
	"SLURM_NTASKS":         "Slurm sets it for srun's tasks, and in an sbatch script's own environment",
	k8sRanks:               "kvbench's variable, set in a Kubernetes Indexed Job's manifest",
}

// RanksOrigin says, for a message, where r's number of ranks came from:
// "--ranks 4", or "SLURM_NTASKS=4 in the environment (Slurm sets it ...)";
// "" for a process alone.
func (r Rank) RanksOrigin() string {
	switch r.RanksFrom {
	case "":
		return ""
	case "--ranks":
		return fmt.Sprintf("--ranks %d", r.Ranks)
	}
	return fmt.Sprintf("%s=%d in the environment (%s)", r.RanksFrom, r.Ranks, launchers[r.RanksFrom])
}

// OneProcess says how to run what r's run of several ranks refuses (a
// search) as one process: --rank 0 --ranks 1, which wins over Slurm's and
// a pod's variables; an MPI launcher's of several processes contradict
// it (mpiDisagrees), so there it is one process of the launcher's.
func (r Rank) OneProcess() string {
	if r.RanksFrom == "OMPI_COMM_WORLD_SIZE" || r.RanksFrom == "PMI_SIZE" {
		return "start one process (mpirun -np 1), or run it without mpirun"
	}
	return "give --rank 0 --ranks 1 (one host, one process; it wins over the environment's ranks)"
}

// Find reads the rank from the flags (flagRank >= 0; -1 when not given) or
// from the environment, read through getenv (os.Getenv, or a test's map).
// --rank wins over the launchers (but an MPI launcher of several processes
// that says otherwise is an error), and a launcher other than Kubernetes
// over a pod's JOB_COMPLETION_INDEX (mpirun inside an MPIJob). Without either
// it returns rank 0 of 1.
func Find(flagRank, flagRanks int, getenv func(string) string) (Rank, error) {
	if idx := getenv(k8sIndex); flagRank < 0 && flagRanks >= 1 && idx != "" && !otherLauncher(getenv) {
		// An Indexed Job with --ranks (its spec.completions).
		rank, err := strconv.Atoi(idx)
		if err != nil || rank < 0 {
			return Rank{}, fmt.Errorf("%s=%q: not a rank", k8sIndex, idx)
		}
		if rank >= flagRanks {
			return Rank{}, fmt.Errorf("%s=%d: must be below --ranks %d (the Job's spec.completions)", k8sIndex, rank, flagRanks)
		}
		return Rank{Rank: rank, Ranks: flagRanks, Source: k8sIndex, RanksFrom: "--ranks"}, nil
	}
	if flagRank >= 0 || flagRanks >= 0 {
		if flagRank < 0 || flagRanks < 1 {
			return Rank{}, errors.New("--rank and --ranks: give both, or neither (the launcher's environment then says)")
		}
		if flagRank >= flagRanks {
			return Rank{}, fmt.Errorf("--rank %d: must be below --ranks %d", flagRank, flagRanks)
		}
		if err := mpiDisagrees(flagRank, flagRanks, getenv); err != nil {
			return Rank{}, err
		}
		return Rank{Rank: flagRank, Ranks: flagRanks, Source: "--rank", RanksFrom: "--ranks"}, nil
	}
	// PMIx sets its rank but no size: under srun --mpi=pmix, Slurm's
	// variables, later in the order, say the same rank with its size.
	var pmix struct{ val string }
	for _, v := range launcherVars {
		r := getenv(v.rank)
		if r == "" {
			continue
		}
		rank, err := strconv.Atoi(r)
		if err != nil || rank < 0 {
			return Rank{}, fmt.Errorf("%s=%q: not a rank", v.rank, r)
		}
		if pmix.val != "" && r != pmix.val {
			return Rank{}, fmt.Errorf("PMIX_RANK=%s but %s=%s: two launchers give this process different ranks (give --rank and --ranks)", pmix.val, v.rank, r)
		}
		s := getenv(v.size)
		if s == "" && v.rank == "PMIX_RANK" {
			pmix.val = r
			continue
		}
		if s == "" {
			if v.rank == k8sIndex {
				return Rank{}, fmt.Errorf("%s=%s but %s is not set: give the Job's spec.completions as --ranks, or set %s from it in the pod's env", v.rank, r, v.size, v.size)
			}
			return Rank{}, fmt.Errorf("%s=%s but %s is not set: the launcher's environment has a rank without its size (give --rank and --ranks)", v.rank, r, v.size)
		}
		size, err := strconv.Atoi(s)
		if err != nil || size < 1 {
			return Rank{}, fmt.Errorf("%s=%q: not a number of ranks (with %s=%s)", v.size, s, v.rank, r)
		}
		if rank >= size {
			return Rank{}, fmt.Errorf("%s=%d but %s=%d: a rank must be below the run's number of ranks", v.rank, rank, v.size, size)
		}
		local := 0
		if v.local != "" {
			local, _ = strconv.Atoi(getenv(v.local))
		}
		return Rank{Rank: rank, Ranks: size, Local: local, Source: v.rank, RanksFrom: v.size}, nil
	}
	if pmix.val != "" {
		return Rank{}, fmt.Errorf("PMIX_RANK=%s but neither OMPI_COMM_WORLD_SIZE nor SLURM_PROCID and SLURM_NTASKS are set: the launcher's environment has a rank without its size (give --rank and --ranks)", pmix.val)
	}
	return Rank{Ranks: 1}, nil
}

// FromFlags is Find with --rank and --ranks as given on the command line
// ("" when not given): each must be a non-negative integer.
func FromFlags(rank, ranks string, getenv func(string) string) (Rank, error) {
	num := func(flag, v string) (int, error) {
		if v == "" {
			return -1, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s %s: want a non-negative integer", flag, v)
		}
		return n, nil
	}
	r, err := num("--rank", rank)
	if err != nil {
		return Rank{}, err
	}
	n, err := num("--ranks", ranks)
	if err != nil {
		return Rank{}, err
	}
	return Find(r, n, getenv)
}

// mpiDisagrees refuses --rank and --ranks that an MPI launcher of several
// processes contradicts: under mpirun -np 4, --rank 0 --ranks 2 would make
// every process rank 0, each writing over the others' result. Slurm's
// variables are not asked: a batch script's own (SLURM_PROCID=0 of the
// job's tasks) are in the environment of the processes it starts itself.
func mpiDisagrees(rank, ranks int, getenv func(string) string) error {
	for _, v := range launcherVars[:3] {
		r, err1 := strconv.Atoi(getenv(v.rank))
		n, err2 := strconv.Atoi(getenv(v.size))
		if err1 != nil || err2 != nil || n <= 1 {
			continue
		}
		if r != rank || n != ranks {
			return fmt.Errorf("--rank %d --ranks %d, but %s=%d and %s=%d: this process is one of a launcher's %d; leave --rank and --ranks out (the launcher's environment says), or give its values",
				rank, ranks, v.rank, r, v.size, n, n)
		}
		return nil
	}
	return nil
}

// otherLauncher reports whether a launcher other than Kubernetes set its
// rank: mpirun inside a pod (an MPIJob) is trusted before the pod's index.
func otherLauncher(getenv func(string) string) bool {
	for _, v := range launcherVars {
		if v.rank != k8sIndex && getenv(v.rank) != "" {
			return true
		}
	}
	return false
}

// Template puts r's rank into path, the value of flag, for each {rank} in
// it. "" and "-" (stdout) are returned as they are. Under several ranks a
// path without {rank} would be shared by all of them, which is an error
// for what a rank writes; the error shows flag with {rank} in it.
func Template(flag, path string, r Rank) (string, error) {
	if path == "" || path == "-" {
		return path, nil
	}
	if !strings.Contains(path, "{rank}") {
		if r.Ranks > 1 {
			return "", fmt.Errorf("%s %s: %d ranks would share it: put {rank} in it (e.g. %s)", flag, path, r.Ranks, example(flag))
		}
		return path, nil
	}
	return strings.ReplaceAll(path, "{rank}", strconv.Itoa(r.Rank)), nil
}

// example is flag with a template of {rank}, for an error's hint.
func example(flag string) string {
	switch flag {
	case "-o":
		return "-o out.{rank}.json"
	case "--device":
		return "--device /mnt/nvme0/kv.{rank}.extent"
	}
	return "--dir /mnt/nvme0/rank{rank}"
}
