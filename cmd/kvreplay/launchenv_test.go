package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/launch"
)

// launcherEnv sets env for the test, and empties every other launcher
// variable kvreplay reads.
func launcherEnv(t *testing.T, env map[string]string) {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
		"MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "MV2_COMM_WORLD_LOCAL_RANK", "FLUX_TASK_LOCAL_ID",
		"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NUM_TASKS",
		"JOB_COMPLETION_INDEX", "KVBENCH_RANKS", "KVBENCH_RUN_ID"} {
		t.Setenv(k, env[k])
	}
}

// TestSbatchScriptRefused: kvreplay run in a Slurm batch script of 4 tasks
// (not under srun) took the script's SLURM_PROCID=0 and SLURM_NTASKS=4 for
// its rank, and replayed a quarter of the trace as rank 0 of 4, alone,
// exit 0. It exits 2 before any work, naming srun and --rank 0 --ranks 1,
// with which it replays the whole trace as one process.
func TestSbatchScriptRefused(t *testing.T) {
	launcherEnv(t, map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0"})
	t.Setenv("SLURM_JOB_ID", "77")
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	nv := filepath.Join(dir, "nvme")
	if err := os.Mkdir(nv, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.{rank}.json")
	rankDir := filepath.Join(nv, "rank{rank}")
	code, _, stderr := kvreplay("--mkdir", "--dir", rankDir, "--speed", "max", "-q", "-o", out, tr)
	if code != 2 || !strings.Contains(stderr, "a Slurm job's own environment (its batch script's") || !strings.Contains(stderr, "start kvreplay with srun") || !strings.Contains(stderr, "--rank 0 --ranks 1") {
		t.Fatalf("exit %d, stderr %q; want 2, naming srun and --rank 0 --ranks 1", code, stderr)
	}
	if entries, _ := os.ReadDir(nv); len(entries) != 0 {
		t.Errorf("--dir holds %v after a refused run", entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.0.json")); err == nil {
		t.Error("a refused run wrote its result")
	}
	code, _, stderr = kvreplay("--rank", "0", "--ranks", "1", "--mkdir", "--dir", rankDir, "--speed", "max", "-q", "-o", out, tr)
	if code != 0 {
		t.Fatalf("--rank 0 --ranks 1 in the script: exit %d, %s", code, stderr)
	}
	if r := readResult(t, filepath.Join(dir, "r.0.json")); r.Rank != 0 || r.Ranks != 1 {
		t.Errorf("--rank 0 --ranks 1: rank %d of %d", r.Rank, r.Ranks)
	}
}

// TestLocalRankUnknownRecorded: a rank of a PMI launcher that sets no
// local rank variable says so in its result (local_rank -1), where it
// said 0 (and took the first GPU, as every rank on its host).
func TestLocalRankUnknownRecorded(t *testing.T) {
	launcherEnv(t, map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"})
	dir := t.TempDir()
	tr := nvmeTrace(t, dir)
	out := filepath.Join(dir, "r.{rank}.json")
	if code, _, stderr := kvreplay("--speed", "max", "-q", "-o", out, tr); code != 0 {
		t.Fatalf("exit %d, %s", code, stderr)
	}
	if r := readResult(t, filepath.Join(dir, "r.1.json")); r.Rank != 1 || r.Ranks != 2 || r.LocalRank != launch.LocalUnknown || r.RankSource != "PMI_RANK" {
		t.Errorf("rank %d of %d, local rank %d, from %q; want 1 of 2, local rank unknown (%d), from PMI_RANK", r.Rank, r.Ranks, r.LocalRank, r.RankSource, launch.LocalUnknown)
	}
}
