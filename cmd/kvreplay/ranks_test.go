package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	run := func(env []string, args ...string) {
		cmd := exec.Command(kvreplay, append(append(args, common...), ref)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kvreplay %s (%s): %v\n%s", strings.Join(args, " "), strings.Join(env, " "), err, out)
		}
	}
	run(nil, "--mkdir", "--dir", dir, "-o", filepath.Join(dir, "single.json"))
	single := readResult(t, filepath.Join(dir, "single.json"))

	launch := func(name string, env func(r int) []string, shard string) *schema.Result {
		start := time.Now().Add(2 * time.Second)
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
				run(env(r), append(startArgs, "--shard", shard,
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
		return []string{"SLURM_PROCID=" + strconv.Itoa(r), "SLURM_NTASKS=4", "SLURM_LOCALID=" + strconv.Itoa(r)}
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
	if got := bytesOf(launch("key", ompi, "key")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("key-sharded ranks moved %v, one process %v", got, want)
	}
	if got := bytesOf(launch("k8s", k8s, "key")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("an Indexed Job's key-sharded ranks moved %v, one process %v", got, want)
	}
	four := map[string][2]int64{}
	for k, v := range want {
		four[k] = [2]int64{4 * v[0], 4 * v[1]}
	}
	if got := bytesOf(launch("tp", slurm, "tp")); fmt.Sprint(got) != fmt.Sprint(four) {
		t.Errorf("tp-sharded ranks moved %v, want 4x one process: %v", got, four)
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
