package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/report"
	"github.com/kvbench/kvbench/schema"
)

// TestRanksAsLaunched runs 4 real kvreplay processes as an mpirun (Open
// MPI's variables), an srun (Slurm's) and a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX) would start them, on a kv-cache.py trace, all
// waiting for one --start-at (the Job's at a --start-barrier): key-sharded,
// their merged bytes per tier equal a single process's replay exactly;
// tp-sharded, 4 times.
func TestRanksAsLaunched(t *testing.T) {
	t.Parallel()
	_, kvreplay := buildTools(t)
	ref := referenceTraces(t)[0]
	dir := t.TempDir()
	common := []string{"--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "--size-scale", "1/1024", "--speed", "max", "-q"}
	run := func(t *testing.T, env []string, args ...string) {
		cmd := exec.Command(kvreplay, append(append(args, common...), ref)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kvreplay %s (%s): %v\n%s", strings.Join(args, " "), strings.Join(env, " "), err, out)
		}
	}
	run(t, nil, "--mkdir", "--dir", dir, "-o", filepath.Join(dir, "single.json"))
	single := readResult(t, filepath.Join(dir, "single.json"))

	launch := func(t *testing.T, name string, env func(r int) []string, shard string) *schema.Result {
		// Time for the ranks (4 processes, 12 while the launches run side
		// by side) to read the trace and make their tiers on a loaded
		// 2-core machine (2 s was short of 4 processes: a rank ready 4 s
		// late started at once, and its skew failed the test; 6 s was
		// enough for 4 at once, and 12 under CI's -race run of every
		// package beside them have three times the work).
		start := time.Now().Add(15 * time.Second)
		startArgs := []string{"--start-at", strconv.FormatFloat(float64(start.UnixNano())/1e9, 'f', 3, 64)}
		if name == "k8s" {
			// An Indexed Job has no launcher to start its pods together.
			startArgs = []string{"--start-barrier", filepath.Join(dir, "barrier")}
		}
		var wg sync.WaitGroup
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(t, env(r), append(startArgs, "--shard", shard,
					"--mkdir", "--dir", filepath.Join(dir, name+"{rank}"), "-o", filepath.Join(dir, name+".{rank}.json"))...)
			}()
		}
		wg.Wait()
		var docs []*schema.Result
		for r := range 4 {
			d := readResult(t, filepath.Join(dir, fmt.Sprintf("%s.%d.json", name, r)))
			if d.Rank != r || d.Ranks != 4 || d.Replay.Shard != shard || d.StartAt == nil || d.StartSkewS < 0 || d.StartSkewS > 1.5 {
				t.Fatalf("%s rank %d: rank %d of %d, shard %q, start at %v, skew %v s", name, r, d.Rank, d.Ranks, d.Replay.Shard, d.StartAt, d.StartSkewS)
			}
			docs = append(docs, d)
		}
		if err := report.CheckRanks(docs, nil); err != nil {
			t.Fatal(err)
		}
		if err := report.CheckRanks(docs[:3], nil); err == nil || !strings.Contains(err.Error(), "missing rank 3") {
			t.Errorf("3 of 4 ranks: %v", err)
		}
		m, err := report.MergeRanks(docs)
		if err != nil {
			t.Fatal(err)
		}
		if m.RankImbalance == nil || m.RankImbalance.SlowestBytesShare <= 0 {
			t.Errorf("no rank imbalance: %+v", m.RankImbalance)
		}
		return m
	}
	ompi := func(r int) []string {
		return []string{"OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=4", "OMPI_COMM_WORLD_LOCAL_RANK=" + strconv.Itoa(r)}
	}
	slurm := func(r int) []string {
		// srun's job step (a batch script has no SLURM_STEP_ID).
		return []string{"SLURM_PROCID=" + strconv.Itoa(r), "SLURM_NTASKS=4", "SLURM_LOCALID=" + strconv.Itoa(r), "SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=4"}
	}
	bytesOf := func(r *schema.Result) map[string][2]int64 {
		m := map[string][2]int64{}
		for _, t := range r.Tiers {
			m[t.Tier] = [2]int64{t.ReadBytes, t.WriteBytes}
		}
		return m
	}
	k8s := func(r int) []string {
		return []string{"JOB_COMPLETION_INDEX=" + strconv.Itoa(r), "KVBENCH_RANKS=4"}
	}
	want := bytesOf(single)
	four := map[string][2]int64{}
	for k, v := range want {
		four[k] = [2]int64{4 * v[0], 4 * v[1]}
	}
	// The three launches, each in its own directories, run side by side:
	// most of their time is the wait for their --start-at.
	for _, c := range []struct {
		name  string
		env   func(r int) []string
		shard string
		want  map[string][2]int64
		what  string
	}{
		{"key", ompi, "key", want, "key-sharded ranks moved %v, one process %v"},
		{"k8s", k8s, "key", want, "an Indexed Job's key-sharded ranks moved %v, one process %v"},
		{"tp", slurm, "tp", four, "tp-sharded ranks moved %v, want 4x one process: %v"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := bytesOf(launch(t, c.name, c.env, c.shard)); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf(c.what, got, c.want)
			}
		})
	}
}

// TestRealMpirun runs kvreplay under a real Open MPI mpirun, 4 ranks on
// this machine: each finds its rank in mpirun's environment, and the
// merged bytes equal one process's replay.
func TestRealMpirun(t *testing.T) {
	t.Parallel()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun on PATH (Debian: apt-get install openmpi-bin; CI installs it)")
	}
	_, kvreplay := buildTools(t)
	ref := referenceTraces(t)[0]
	dir := t.TempDir()
	args := []string{"--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "--size-scale", "1/1024", "--speed", "max", "-q"}
	single := exec.Command(kvreplay, append(args, "--mkdir", "--dir", dir, "-o", filepath.Join(dir, "single.json"), ref)...)
	if out, err := single.CombinedOutput(); err != nil {
		t.Fatalf("kvreplay: %v\n%s", err, out)
	}
	cmd := exec.Command(mpirun, append([]string{"--oversubscribe", "-np", "4", kvreplay},
		append(args, "--mkdir", "--dir", filepath.Join(dir, "rank{rank}"), "-o", filepath.Join(dir, "mpi.{rank}.json"), ref)...)...)
	// Open MPI refuses root (CI runs as root) unless told twice.
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun: %v\n%s", err, out)
	}
	var docs []*schema.Result
	for r := range 4 {
		d := readResult(t, filepath.Join(dir, fmt.Sprintf("mpi.%d.json", r)))
		if d.Rank != r || d.Ranks != 4 || !strings.HasPrefix(d.RankSource, "OMPI_") && d.RankSource != "PMIX_RANK" {
			t.Fatalf("rank %d: %d of %d from %q", r, d.Rank, d.Ranks, d.RankSource)
		}
		docs = append(docs, d)
	}
	m, err := report.MergeRanks(docs)
	if err != nil {
		t.Fatal(err)
	}
	want := readResult(t, filepath.Join(dir, "single.json"))
	for i, tt := range want.Tiers {
		if i >= len(m.Tiers) || m.Tiers[i].Tier != tt.Tier || m.Tiers[i].ReadBytes != tt.ReadBytes || m.Tiers[i].WriteBytes != tt.WriteBytes {
			t.Errorf("merged tiers %+v, one process %+v", m.Tiers, want.Tiers)
			break
		}
	}
}

// TestStartAtRefusedBeforeWork: a --start-at that cannot be represented,
// or lies beyond the bounds, exits 2 before any work: no run directory in
// --dir, no result file. Before, 1e30 overflowed, the whole replay ran and
// its result could not be written ("year outside of range").
func TestStartAtRefusedBeforeWork(t *testing.T) {
	for _, at := range []string{"1e30", "-1e30", "NaN", "Inf", "9999-12-31T23:59:59Z", "0"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			tr := nvmeTrace(t, dir)
			nv := filepath.Join(dir, "nvme")
			if err := os.Mkdir(nv, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "r.json")
			code, _, stderr := kvreplay("--start-at", at, "--mkdir", "--dir", nv, "--speed", "max", "-o", out, tr)
			if code != 2 || !strings.Contains(stderr, "--start-at "+at+": ") {
				t.Fatalf("exit %d, stderr %q; want 2 and --start-at %s", code, stderr, at)
			}
			if entries, _ := os.ReadDir(nv); len(entries) != 0 {
				t.Errorf("--dir holds %v after a refused run", entries)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused run wrote its result")
			}
		})
	}
}

// TestStartAtPastWarns: a --start-at minutes in the past (bounds far from
// any test's run time) starts the replay at once, with a warning on stderr
// and in the result.
func TestStartAtPastWarns(t *testing.T) {
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	out := filepath.Join(dir, "r.json")
	at := time.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)
	code, _, stderr := kvreplay("--start-at", at, "--speed", "max", "-o", out, tr)
	if code != 0 || !strings.Contains(stderr, "warning: --start-at "+at+": ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	r := readResult(t, out)
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "--start-at "+at) && strings.Contains(w, "starts at once")
	}
	if !found || r.StartAt == nil || r.StartSkewS < 600 {
		t.Errorf("warnings %q, start at %v, skew %.1f s", r.Warnings, r.StartAt, r.StartSkewS)
	}
}

// mlperfScript is bench/mlperf-option.sh, run from this package.
var mlperfScript = filepath.Join("..", "..", "bench", "mlperf-option.sh")

// TestMLPerfScriptRefuses: bench/mlperf-option.sh refuses bad options
// (exit 2, the option named) before it makes anything in --results-dir.
// Before, --option 1,1 ran Option 1 twice, the second over the first's
// results (exit 0); --option ” made an empty run directory and exited 2
// from kvreport; --ranks 08 said "value too great for base" and then
// "must be at least 1".
func TestMLPerfScriptRefuses(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	empty := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--option", "1,1"}, "--option 1,1: Option 1 twice"},
		{[]string{"--option", ""}, "--option : want 1, 2, 3"},
		{[]string{"--option", "1,"}, "--option 1,: want"},
		{[]string{"--option", "all,2"}, "--option all,2: want"},
		{[]string{"--option", "4"}, "--option 4: want"},
		{[]string{"--ranks", "0"}, "--ranks 0: must be at least 1"},
		{[]string{"--ranks", "x"}, "--ranks x: must be a whole number"},
		{[]string{"--trials", "00"}, "--trials 0: must be at least 1"},
		{[]string{"--duration", "0"}, "--duration 0: must be at least 1 second"},
		{[]string{"--users", "0"}, "--users 0: must be at least 1"},
		{[]string{"--bin", empty}, "--bin " + empty + ": no kvtrace there"},
		{[]string{"--bin", filepath.Join(empty, "none")}, "--bin " + filepath.Join(empty, "none") + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cache, results := t.TempDir(), t.TempDir()
			args := append([]string{mlperfScript, "--cache-dir", cache, "--results-dir", results, "--settle", "0"}, tt.args...)
			cmd := exec.Command("bash", args...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "mlperf-option.sh: "+tt.want) {
				t.Fatalf("%v: exit %v, output:\n%s\nwant exit 2 and %q", tt.args, err, out, tt.want)
			}
			if strings.Contains(string(out), "value too great") {
				t.Errorf("bash's own error: %s", out)
			}
			for _, d := range []string{cache, results} {
				if left, _ := os.ReadDir(d); len(left) != 0 {
					t.Errorf("%s holds %v after a refusal", d, left)
				}
			}
		})
	}
}

// TestMLPerfScriptRankOf: a rank the script starts itself is the rank it
// gave (KVBENCH_RANK) even where a batch job's SLURM_PROCID=0 is in every
// process's environment (before, every rank was rank 0: their results one
// file); a rank a launcher starts is the launcher's.
func TestMLPerfScriptRankOf(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	tests := []struct {
		env  []string
		want string
	}{
		{[]string{"SLURM_PROCID=0", "SLURM_NTASKS=1", "KVBENCH_RANK=1"}, "rank_1"},
		{[]string{"OMPI_COMM_WORLD_RANK=3", "SLURM_PROCID=0"}, "rank_3"},
		{[]string{"SLURM_PROCID=2"}, "rank_2"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		cmd := exec.Command("bash", mlperfScript, "__probe", dir)
		cmd.Env = append(os.Environ(), tt.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", tt.env, err, out)
		}
		if got, _ := os.ReadDir(dir); len(got) != 1 || got[0].Name() != tt.want {
			t.Errorf("%v: sentinels %v, want %s", tt.env, got, tt.want)
		}
	}
}

// TestMLPerfScriptFailingRank runs bench/mlperf-option.sh with a rank
// whose cache directory is a file (a rank that fails at once), under
// mpirun when the machine has it: the other rank measures its whole trial
// (before, mpirun killed it mid-replay when rank 1 exited 2, leaving its
// cache files and a temporary result behind), the script exits 1 naming
// the rank, the summary says partial_failure, and the file the script did
// not make is left as it was. A long case: it builds and replays.
func TestMLPerfScriptFailingRank(t *testing.T) {
	if os.Getenv("KVBENCH_LONG") != "1" {
		t.Skip("builds kvreport and replays: a long case, run with KVBENCH_LONG=1 (CI does)")
	}
	bin := scriptTools(t)
	for _, launcher := range []string{"", "mpirun"} {
		t.Run("launcher="+launcher, func(t *testing.T) {
			cache, results := t.TempDir(), t.TempDir()
			stray := filepath.Join(cache, "rank_1")
			if err := os.WriteFile(stray, []byte("not kvbench's\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{mlperfScript, "--option", "1", "--ranks", "2", "--trials", "1", "--settle", "0", "--users", "2",
				"--duration", "3", "--replay-opt=--size-scale=1/1024", "--cache-dir", cache, "--results-dir", results, "--bin", bin}
			cmd := exec.Command("bash", args...)
			if launcher != "" {
				if _, err := exec.LookPath("mpirun"); err != nil {
					t.Skip("no mpirun on PATH")
				}
				cmd = exec.Command("bash", append(args, "--launcher", "mpirun --oversubscribe -np 2")...)
				cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "option 1 trial_0 rank_1 left no result") ||
				!strings.Contains(string(out), "1 rank run(s) missing, incomplete or failed (option_1/trial_0/rank_1)") {
				t.Fatalf("exit %v, want 1 naming rank_1:\n%s", err, out)
			}
			runs, _ := filepath.Glob(filepath.Join(results, "kvbench_mlperf_*"))
			if len(runs) != 1 {
				t.Fatalf("run directories %v", runs)
			}
			r0 := readResult(t, filepath.Join(runs[0], "option_1", "trial_0", "rank_0", "kvbench_result.json"))
			if !r0.Complete || r0.Rank != 0 || r0.Ranks != 2 {
				t.Errorf("rank 0: complete %v (%s), rank %d of %d", r0.Complete, r0.IncompleteReason, r0.Rank, r0.Ranks)
			}
			raw, err := os.ReadFile(filepath.Join(runs[0], "kvcache_run_summary_"+strings.TrimPrefix(filepath.Base(runs[0]), "kvbench_mlperf_")+".json"))
			if err != nil || !strings.Contains(string(raw), `"partial_failure": true`) {
				t.Errorf("summary (%v):\n%s", err, raw)
			}
			if b, err := os.ReadFile(stray); err != nil || string(b) != "not kvbench's\n" {
				t.Errorf("%s: %q, %v; want it as it was", stray, b, err)
			}
			if left, _ := os.ReadDir(cache); len(left) != 1 {
				t.Errorf("the cache directory holds %v, want the stray file alone", left)
			}
			tmp, _ := filepath.Glob(filepath.Join(runs[0], "option_1", "trial_0", "rank_*", ".*"))
			if len(tmp) != 0 {
				t.Errorf("left behind: %v", tmp)
			}
		})
	}
}

// TestMLPerfScriptStopped sends SIGTERM to bench/mlperf-option.sh while
// its ranks replay: it passes the signal on and stops once they have
// ended, exit 1, each rank's result there and marked incomplete, the
// cache directory empty. Before, the script ended at once and its ranks
// ran on unseen, their results written after it. A long case.
func TestMLPerfScriptStopped(t *testing.T) {
	if os.Getenv("KVBENCH_LONG") != "1" {
		t.Skip("builds and replays: a long case, run with KVBENCH_LONG=1 (CI does)")
	}
	bin := scriptTools(t)
	cache, results := t.TempDir(), t.TempDir()
	cmd := exec.Command("bash", mlperfScript, "--option", "1", "--ranks", "2", "--trials", "2", "--settle", "0", "--users", "2",
		"--duration", "60", "--replay-opt=--size-scale=1/1024", "--cache-dir", cache, "--results-dir", results, "--bin", bin)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Both ranks replay once kvreplay has made their cache directories.
	deadline := time.Now().Add(time.Minute)
	for {
		a, _ := os.Stat(filepath.Join(cache, "rank_0"))
		b, _ := os.Stat(filepath.Join(cache, "rank_1"))
		if a != nil && b != nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the ranks did not start:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "stopped by SIGTERM: the ranks have ended") {
		t.Fatalf("exit %v, want 1 and the ranks ended:\n%s", err, out.String())
	}
	runs, _ := filepath.Glob(filepath.Join(results, "kvbench_mlperf_*"))
	if len(runs) != 1 {
		t.Fatalf("run directories %v", runs)
	}
	for r := range 2 {
		res := readResult(t, filepath.Join(runs[0], "option_1", "trial_0", fmt.Sprintf("rank_%d", r), "kvbench_result.json"))
		if res.Complete || res.WallS > 30 {
			t.Errorf("rank %d: complete %v after %.1f s, want a replay cut short by the signal", r, res.Complete, res.WallS)
		}
	}
	if left, _ := os.ReadDir(cache); len(left) != 0 {
		t.Errorf("the cache directory holds %v", left)
	}
	if _, err := os.Stat(filepath.Join(runs[0], "option_1", "trial_1")); err == nil {
		t.Error("a second trial started after the signal")
	}
}

// scriptTools builds kvreport beside kvtrace and kvreplay (buildTools'):
// the --bin bench/mlperf-option.sh wants.
func scriptTools(t *testing.T) string {
	t.Helper()
	kvtrace, kvreplay := buildTools(t)
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator), "./cmd/kvreport")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tool := range []string{kvtrace, kvreplay} {
		if err := os.Symlink(tool, filepath.Join(bin, filepath.Base(tool))); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}
