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

// TestFindRank reads ranks from flags and from each launcher's variables.
func TestFindRank(t *testing.T) {
	tests := []struct {
		name        string
		rank, ranks int
		env         map[string]string
		want        rankInfo
		wantErr     string
	}{
		{name: "alone", rank: -1, ranks: -1, want: rankInfo{ranks: 1}},
		{name: "flags", rank: 2, ranks: 4, want: rankInfo{rank: 2, ranks: 4, source: "--rank"}},
		{name: "flag rank only", rank: 2, ranks: -1, wantErr: "give both"},
		{name: "flag rank too big", rank: 4, ranks: 4, wantErr: "below --ranks"},
		{name: "open mpi", rank: -1, ranks: -1, env: map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
			want: rankInfo{rank: 3, ranks: 8, local: 1, source: "OMPI_COMM_WORLD_RANK"}},
		{name: "pmi", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "1", "PMI_SIZE": "2"}, want: rankInfo{rank: 1, ranks: 2, source: "PMI_RANK"}},
		{name: "slurm", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6", "SLURM_LOCALID": "2"},
			want: rankInfo{rank: 5, ranks: 6, local: 2, source: "SLURM_PROCID"}},
		{name: "flags win", rank: 0, ranks: 2, env: map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6"}, want: rankInfo{rank: 0, ranks: 2, source: "--rank"}},
		{name: "size missing", rank: -1, ranks: -1, env: map[string]string{"SLURM_PROCID": "5"}, wantErr: "SLURM_NTASKS"},
		{name: "not a number", rank: -1, ranks: -1, env: map[string]string{"PMI_RANK": "x", "PMI_SIZE": "2"}, wantErr: "not a rank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findRank(tt.rank, tt.ranks, func(k string) string { return tt.env[k] })
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

// TestRankTemplates fills {rank} and refuses a path several ranks would
// share; --start-at takes RFC 3339 and Unix seconds.
func TestRankTemplates(t *testing.T) {
	four := rankInfo{rank: 2, ranks: 4}
	if p, err := rankTemplate("--dir", "/mnt/nvme/rank{rank}", four); err != nil || p != "/mnt/nvme/rank2" {
		t.Errorf("template: %q, %v", p, err)
	}
	if _, err := rankTemplate("-o", "out.json", four); err == nil || !strings.Contains(err.Error(), "{rank}") {
		t.Errorf("a shared -o under 4 ranks: %v", err)
	}
	for _, p := range []string{"", "-"} {
		if got, err := rankTemplate("-o", p, four); err != nil || got != p {
			t.Errorf("%q: %q, %v", p, got, err)
		}
	}
	if p, err := rankTemplate("-o", "out.json", rankInfo{ranks: 1}); err != nil || p != "out.json" {
		t.Errorf("alone: %q, %v", p, err)
	}
	a, err := parseStartAt("2026-11-24T20:00:00Z")
	b, err2 := parseStartAt(strconv.FormatInt(a.Unix(), 10))
	if err != nil || err2 != nil || !a.Equal(b) {
		t.Errorf("start-at: %v %v, %v %v", a, err, b, err2)
	}
	if _, err := parseStartAt("soon"); err == nil {
		t.Errorf("start-at soon: no error")
	}
}

// TestRanksAsLaunched runs 4 real kvreplay processes as an mpirun (Open
// MPI's variables) and an srun (Slurm's) would start them, on a kv-cache.py
// trace, all waiting for one --start-at: key-sharded, their merged bytes
// per tier equal a single process's replay exactly; tp-sharded, 4 times.
func TestRanksAsLaunched(t *testing.T) {
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
	run(nil, "--dir", dir, "-o", filepath.Join(dir, "single.json"))
	single := readResult(t, filepath.Join(dir, "single.json"))

	launch := func(name string, env func(r int) []string, shard string) *schema.Result {
		start := time.Now().Add(2 * time.Second)
		var wg sync.WaitGroup
		for r := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				run(env(r), "--shard", shard, "--start-at", strconv.FormatFloat(float64(start.UnixNano())/1e9, 'f', 3, 64),
					"--dir", filepath.Join(dir, name+"{rank}"), "-o", filepath.Join(dir, name+".{rank}.json"))
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
		if err := report.CheckRanks(docs[:3], nil); err == nil || !strings.Contains(err.Error(), "rank 3 is missing") {
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
	want := bytesOf(single)
	if got := bytesOf(launch("key", ompi, "key")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("key-sharded ranks moved %v, one process %v", got, want)
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
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("no mpirun on PATH (Debian: apt-get install openmpi-bin; CI installs it)")
	}
	_, kvreplay := buildTools(t)
	ref := referenceTraces(t)[0]
	dir := t.TempDir()
	args := []string{"--tier-map", "Tier-0=ram,Tier-1=ram,Tier-2=nvme", "--size-scale", "1/1024", "--speed", "max", "-q"}
	single := exec.Command(kvreplay, append(args, "--dir", dir, "-o", filepath.Join(dir, "single.json"), ref)...)
	if out, err := single.CombinedOutput(); err != nil {
		t.Fatalf("kvreplay: %v\n%s", err, out)
	}
	cmd := exec.Command(mpirun, append([]string{"--oversubscribe", "-np", "4", kvreplay},
		append(args, "--dir", filepath.Join(dir, "rank{rank}"), "-o", filepath.Join(dir, "mpi.{rank}.json"), ref)...)...)
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
