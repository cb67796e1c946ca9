package launch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// launcherVars are the environment variables launchers set, in the order
// they are trusted: rank, size, the variables of the local rank and those
// of the run's id, each list in the order it is read (the first set is
// taken). A launcher's rank is read with its own size only: one without
// it is refused, but for PMIx's, which srun --mpi=pmix sets beside Slurm's
// rank and size (then taken when they name the same rank). Slurm's are a
// job step's, which srun starts (slurmStep): a batch script's own are not
// a launcher's (slurmBatch).
var launcherVars = []struct {
	rank, size string
	local, run []string
}{
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", []string{"OMPI_COMM_WORLD_LOCAL_RANK"}, []string{"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"}},
	{"PMIX_RANK", "OMPI_COMM_WORLD_SIZE", []string{"OMPI_COMM_WORLD_LOCAL_RANK"}, []string{"PMIX_NAMESPACE"}},
	// PMI's launchers each name the local rank their own way: Hydra
	// (MPICH's and Intel MPI's mpiexec) MPI_LOCALRANKID, HPE Cray's PALS
	// PMI_LOCAL_RANK and PALS_LOCAL_RANKID, MVAPICH2 MV2_COMM_WORLD_LOCAL_RANK,
	// Flux FLUX_TASK_LOCAL_ID; srun --mpi=pmi2 none, but Slurm's own
	// (localRank). PMI_JOBID is srun --mpi=pmi2's job step.
	{"PMI_RANK", "PMI_SIZE", []string{"MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "MV2_COMM_WORLD_LOCAL_RANK", "FLUX_TASK_LOCAL_ID"}, []string{"PMI_JOBID"}},
	// IBM's jsrun (LSF's job step launcher, as on Summit and Sierra) sets
	// its own beside Spectrum MPI's (Open MPI's, first above) for any
	// program it starts; nothing there names one jsrun of a job apart.
	{"JSM_NAMESPACE_RANK", "JSM_NAMESPACE_SIZE", []string{"JSM_NAMESPACE_LOCAL_RANK"}, nil},
	// Its size is SLURM_STEP_NUM_TASKS where srun sets it (slurmSize),
	// its run the job step (slurmRun).
	{"SLURM_PROCID", "SLURM_NTASKS", []string{"SLURM_LOCALID"}, nil},
	// A Kubernetes Indexed Job sets JOB_COMPLETION_INDEX in each pod, but
	// not the number of completions: --ranks gives it, or KVBENCH_RANKS,
	// set in the manifest from spec.completions. A pod is a host of its
	// own: its local rank is 0.
	{k8sIndex, k8sRanks, nil, nil},
}

// runVar, when set, is the run's id, whatever the launcher's: the same in
// every rank of a run and new for each run (a Kubernetes Job's uid, set in
// the manifest), so that the start barrier tells an earlier run's ready
// files from this one's.
const runVar = "KVBENCH_RUN_ID"

// localVar, with --rank, is the rank's local rank, where no launcher says
// it: a script that starts several ranks on its host itself sets it (as
// bench/mlperf-option.sh does).
const localVar = "KVBENCH_LOCAL_RANK"

// LocalUnknown is Rank.Local when the launcher does not say where a rank
// stands among the ranks of its host, and several ranks run.
const LocalUnknown = -1

// The variables of a Kubernetes Indexed Job's ranks.
const (
	k8sIndex = "JOB_COMPLETION_INDEX"
	k8sRanks = "KVBENCH_RANKS"
)

// Rank is where a process stands in its run: its rank of Ranks, its rank
// among the ranks of its host (Local; LocalUnknown when the launcher does
// not say and several ranks run), and what said so (Source: "--rank", a
// launcher variable's name, or "" for a process alone, rank 0 of 1;
// RanksFrom, of Ranks: "--ranks", a launcher variable's name, or ""). Run
// is the run's id, the same in each of its ranks (KVBENCH_RUN_ID, or the
// launcher's job: Slurm's job step, Open MPI's or PMIx's namespace); ""
// when none is known.
type Rank struct {
	Rank, Ranks, Local int
	Source, RanksFrom  string
	Run                string
}

// launchers name who sets each variable of a number of ranks.
var launchers = map[string]string{
	"OMPI_COMM_WORLD_SIZE": "Open MPI's mpirun sets it",
	"PMI_SIZE":             "an MPI launcher (MPICH's, Intel MPI's mpirun) sets it",
	"JSM_NAMESPACE_SIZE":   "IBM's jsrun sets it",
	"SLURM_NTASKS":         "Slurm sets it for srun's tasks",
	"SLURM_STEP_NUM_TASKS": "srun sets it for its tasks",
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
// search) as one process: --rank 0 --ranks 1, which wins over a pod's
// variables; an MPI launcher's or jsrun's of several processes contradict
// it (mpiDisagrees), and in each of srun's tasks it would make every task
// rank 0, so there it is one process of the launcher's.
func (r Rank) OneProcess() string {
	switch r.RanksFrom {
	case "OMPI_COMM_WORLD_SIZE", "PMI_SIZE":
		return "start one process (mpirun -np 1), or run it without mpirun"
	case "JSM_NAMESPACE_SIZE":
		return "start one process (jsrun -n 1), or run it without jsrun"
	case "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS":
		// --rank 0 --ranks 1 in each of srun's tasks would make each rank
		// 0 of 1, writing over the others' result.
		return "start one task (srun -n 1), or run it without srun"
	}
	return "give --rank 0 --ranks 1 (one host, one process; it wins over the environment's ranks)"
}

// Find reads the rank from the flags (flagRank >= 0; -1 when not given) or
// from the environment, read through getenv (os.Getenv, or a test's map).
// --rank wins over the launchers (but an MPI launcher, or jsrun, of several
// processes that says otherwise is an error), and a launcher other than Kubernetes
// over a pod's JOB_COMPLETION_INDEX (mpirun inside an MPIJob). Without either
// it returns rank 0 of 1; so it does in a Slurm batch script of one task,
// and refuses one of several, whose SLURM_PROCID=0 is its own, not srun's
// (slurmBatch).
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
		return Rank{Rank: rank, Ranks: flagRanks, Source: k8sIndex, RanksFrom: "--ranks", Run: getenv(runVar)}, nil
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
		r := Rank{Rank: flagRank, Ranks: flagRanks, Local: LocalUnknown, Source: "--rank", RanksFrom: "--ranks", Run: getenv(runVar)}
		// A launcher that says the same rank (a script that gives its
		// launcher's rank as --rank) says where it stands on its host,
		// and its run; else KVBENCH_LOCAL_RANK, set by a script that
		// starts its ranks on one host itself; a pod is a host of its
		// own.
		switch env, err := fromEnv(getenv); {
		case err == nil && env.Source != "" && env.Rank == flagRank && env.Ranks == flagRanks:
			r.Local, r.Run = env.Local, env.Run
		case getenv(localVar) != "":
			local, err := localRank("--rank", []string{localVar}, strconv.Itoa(flagRank), flagRanks, getenv)
			if err != nil {
				return Rank{}, err
			}
			r.Local = local
		case flagRanks == 1 || getenv(k8sIndex) != "":
			r.Local = 0
		}
		return r, nil
	}
	return fromEnv(getenv)
}

// fromEnv is Find without the flags: the launcher's rank, or rank 0 of 1.
func fromEnv(getenv func(string) string) (Rank, error) {
	// PMIx sets its rank but no size: under srun --mpi=pmix, Slurm's
	// variables, later in the order, say the same rank with its size.
	var pmix struct{ val string }
	for _, v := range launcherVars {
		r := getenv(v.rank)
		if r == "" || v.rank == "SLURM_PROCID" && !slurmStep(getenv) {
			continue
		}
		rank, err := strconv.Atoi(r)
		if err != nil || rank < 0 {
			return Rank{}, fmt.Errorf("%s=%q: not a rank", v.rank, r)
		}
		if pmix.val != "" && r != pmix.val {
			return Rank{}, fmt.Errorf("PMIX_RANK=%s but %s=%s: two launchers give this process different ranks (give --rank and --ranks)", pmix.val, v.rank, r)
		}
		sizeVar := v.size
		if v.rank == "SLURM_PROCID" {
			sizeVar = slurmSize(getenv)
		}
		s := getenv(sizeVar)
		if s == "" && v.rank == "PMIX_RANK" {
			pmix.val = r
			continue
		}
		if s == "" {
			if v.rank == k8sIndex {
				return Rank{}, fmt.Errorf("%s=%s but %s is not set: give the Job's spec.completions as --ranks, or set %s from it in the pod's env", v.rank, r, v.size, v.size)
			}
			return Rank{}, fmt.Errorf("%s=%s but %s is not set: the launcher's environment has a rank without its size (give --rank and --ranks)", v.rank, r, sizeVar)
		}
		size, err := strconv.Atoi(s)
		if err != nil || size < 1 {
			return Rank{}, fmt.Errorf("%s=%q: not a number of ranks (with %s=%s)", sizeVar, s, v.rank, r)
		}
		if rank >= size {
			return Rank{}, fmt.Errorf("%s=%d but %s=%d: a rank must be below the run's number of ranks", v.rank, rank, sizeVar, size)
		}
		local, err := localRank(v.rank, v.local, r, size, getenv)
		if err != nil {
			return Rank{}, err
		}
		run := getenv(runVar)
		if run == "" {
			run = firstSet(v.run, getenv)
		}
		if run == "" && v.rank == "SLURM_PROCID" {
			run = slurmRun(getenv)
		}
		return Rank{Rank: rank, Ranks: size, Local: local, Source: v.rank, RanksFrom: sizeVar, Run: run}, nil
	}
	if pmix.val != "" {
		return Rank{}, fmt.Errorf("PMIX_RANK=%s but neither OMPI_COMM_WORLD_SIZE nor SLURM_PROCID and SLURM_NTASKS are set: the launcher's environment has a rank without its size (give --rank and --ranks)", pmix.val)
	}
	if err := slurmBatch(getenv); err != nil {
		return Rank{}, err
	}
	return Rank{Ranks: 1, Run: getenv(runVar)}, nil
}

// slurmStep reports whether this process is a task of a Slurm job step,
// which srun starts: Slurm sets SLURM_STEP_ID (and SLURM_STEPID, its older
// name) for a job step's tasks only, not in a batch script's environment
// (its batch step's id is none), whose SLURM_PROCID is 0 and SLURM_NTASKS
// the job's.
func slurmStep(getenv func(string) string) bool {
	return getenv("SLURM_STEP_ID") != "" || getenv("SLURM_STEPID") != ""
}

// slurmSize is the variable of a Slurm job step's number of tasks:
// SLURM_STEP_NUM_TASKS, which srun sets for its step (SLURM_NTASKS keeps
// the job's under srun --preserve-env), or else SLURM_NTASKS.
func slurmSize(getenv func(string) string) string {
	if getenv("SLURM_STEP_NUM_TASKS") != "" {
		return "SLURM_STEP_NUM_TASKS"
	}
	return "SLURM_NTASKS"
}

// slurmRun is a Slurm job step's id, JOB.STEP; "" without a job id.
func slurmRun(getenv func(string) string) string {
	job := getenv("SLURM_JOB_ID")
	if job == "" {
		return ""
	}
	return job + "." + firstSet([]string{"SLURM_STEP_ID", "SLURM_STEPID"}, getenv)
}

// slurmBatch refuses a Slurm batch script of several tasks that runs
// kvreplay itself: its SLURM_PROCID=0 and SLURM_NTASKS=N are the script's,
// in every process it starts, so that kvreplay took itself for rank 0 of
// N and replayed 1/N of the trace, alone. A job of one task (or none
// given) is a process alone.
func slurmBatch(getenv func(string) string) error {
	r := getenv("SLURM_PROCID")
	if r == "" || slurmStep(getenv) {
		return nil
	}
	n, err := strconv.Atoi(getenv("SLURM_NTASKS"))
	if err != nil || n <= 1 {
		return nil
	}
	return fmt.Errorf("SLURM_PROCID=%s and SLURM_NTASKS=%d, but no SLURM_STEP_ID: this is a Slurm job's own environment (its batch script's, or salloc's shell), not one of srun's %d tasks: start kvreplay with srun (srun kvreplay ..., one rank a task), or give --rank 0 --ranks 1 to replay the whole trace as one process", r, n, n)
}

// localRank reads the local rank of a launcher's rank (rank, of size) from
// the first of vars set; none set is LocalUnknown under several ranks, 0
// alone, and 0 for a launcher without such variables (a pod, a host of its
// own). Under srun --mpi=pmi2, PMI_RANK is Slurm's task's, whose local
// rank is SLURM_LOCALID.
func localRank(rankVar string, vars []string, rank string, size int, getenv func(string) string) (int, error) {
	if rankVar == "PMI_RANK" && firstSet(vars, getenv) == "" && slurmStep(getenv) && getenv("SLURM_PROCID") == rank {
		vars = []string{"SLURM_LOCALID"}
	}
	if vars == nil || size == 1 {
		return 0, nil
	}
	for _, v := range vars {
		s := getenv(v)
		if s == "" {
			continue
		}
		local, err := strconv.Atoi(s)
		if err != nil || local < 0 || local >= size {
			return 0, fmt.Errorf("%s=%q: not a local rank (with %s=%s of %d)", v, s, rankVar, rank, size)
		}
		return local, nil
	}
	return LocalUnknown, nil
}

// firstSet returns the value of the first of vars set, or "".
func firstSet(vars []string, getenv func(string) string) string {
	for _, v := range vars {
		if s := getenv(v); s != "" {
			return s
		}
	}
	return ""
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
			return 0, fmt.Errorf("%s %s: want a non-negative integer", flag, parsemsg.Arg(v))
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

// mpiDisagrees refuses --rank and --ranks that an MPI launcher (or jsrun)
// of several processes contradicts: under mpirun -np 4, --rank 0 --ranks 2
// would make every process rank 0, each writing over the others' result.
// Slurm's variables are not asked: a batch script's own (SLURM_PROCID=0 of
// the job's tasks) are in the environment of the processes it starts
// itself; nor a pod's index, which --rank is given to override.
func mpiDisagrees(rank, ranks int, getenv func(string) string) error {
	for _, v := range launcherVars {
		if v.rank == "SLURM_PROCID" || v.rank == k8sIndex {
			continue
		}
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
		if v.rank != k8sIndex && getenv(v.rank) != "" && (v.rank != "SLURM_PROCID" || slurmStep(getenv)) {
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
			return "", fmt.Errorf("%s %s: %d ranks would share it: put {rank} in it (e.g. %s)", flag, parsemsg.Arg(path), r.Ranks, example(flag))
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
