package main

import (
	"context"
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
		{name: "indexed job, --ranks", rank: -1, ranks: 4, env: map[string]string{"JOB_COMPLETION_INDEX": "3"},
			want: rankInfo{rank: 3, ranks: 4, source: "JOB_COMPLETION_INDEX"}},
		{name: "indexed job, KVBENCH_RANKS", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "2", "KVBENCH_RANKS": "4"},
			want: rankInfo{rank: 2, ranks: 4, source: "JOB_COMPLETION_INDEX"}},
		{name: "indexed job, no size", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantErr: "give the Job's spec.completions as --ranks"},
		{name: "indexed job, index beyond --ranks", rank: -1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, wantErr: "must be below --ranks 2"},
		{name: "indexed job, bad index", rank: -1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "-1"}, wantErr: "not a rank"},
		{name: "mpirun in an indexed job's pod", rank: -1, ranks: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "1", "OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8"},
			want: rankInfo{rank: 5, ranks: 8, source: "OMPI_COMM_WORLD_RANK"}},
		{name: "--rank wins over the index", rank: 1, ranks: 2, env: map[string]string{"JOB_COMPLETION_INDEX": "0", "KVBENCH_RANKS": "2"},
			want: rankInfo{rank: 1, ranks: 2, source: "--rank"}},
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
	now := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	a, _, err := parseStartAt("2026-11-24T20:00:00Z", now)
	b, _, err2 := parseStartAt(strconv.FormatInt(a.Unix(), 10), now)
	if err != nil || err2 != nil || !a.Equal(b) {
		t.Errorf("start-at: %v %v, %v %v", a, err, b, err2)
	}
	if _, _, err := parseStartAt("soon", now); err == nil {
		t.Errorf("start-at soon: no error")
	}
}

// TestStartAtBounds: --start-at is checked against the clock when it is
// parsed (a fixed one here): instants that cannot be represented, or lie
// more than a day ahead or an hour behind, are refused; one a few seconds
// or more behind starts at once with a warning.
func TestStartAtBounds(t *testing.T) {
	now := time.Date(2026, 11, 24, 19, 0, 0, 500_000_000, time.UTC)
	unix := func(d time.Duration) string {
		return strconv.FormatFloat(float64(now.Add(d).UnixNano())/1e9, 'f', 3, 64)
	}
	tests := []struct {
		in       string
		want     time.Time
		wantErr  string
		wantWarn string
	}{
		{in: unix(time.Minute), want: now.Add(time.Minute)},
		{in: unix(0), want: now},
		{in: unix(-2 * time.Second), want: now.Add(-2 * time.Second)},
		{in: unix(-10 * time.Minute), want: now.Add(-10 * time.Minute), wantWarn: "10m0s ago"},
		{in: "2026-11-24T18:59:50Z", want: now.Add(-10500 * time.Millisecond), wantWarn: "starts at once"},
		{in: unix(23 * time.Hour), want: now.Add(23 * time.Hour)},
		{in: unix(25 * time.Hour), wantErr: "more than 24h after now (2026-11-24T19:00:00Z)"},
		{in: unix(-2 * time.Hour), wantErr: "more than 1h before now"},
		{in: "2026-11-26T20:00:00Z", wantErr: "more than 24h after now"},
		{in: "2026-11-24T17:00:00Z", wantErr: "more than 1h before now"},
		{in: "9999-12-31T23:59:59Z", wantErr: "after now"},
		{in: "0001-01-01T00:00:00Z", wantErr: "before now"},
		{in: "1e30", wantErr: "--start-at 1e30: more than 24h after now"},
		{in: "-1e30", wantErr: "--start-at -1e30: more than 1h before now"},
		{in: "9.3e18", wantErr: "after now"},
		{in: "0", wantErr: "before now"},
		{in: "NaN", wantErr: "want RFC 3339"},
		{in: "Inf", wantErr: "want RFC 3339"},
		{in: "-Inf", wantErr: "want RFC 3339"},
		{in: "1e400", wantErr: "want RFC 3339"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, warn, err := parseStartAt(tt.in, now)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("%v, %q, %v: want an error with %q", got, warn, err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case got.Sub(tt.want).Abs() > time.Millisecond:
				t.Errorf("%v, want %v", got, tt.want)
			case tt.wantWarn == "" && warn != "", tt.wantWarn != "" && !strings.Contains(warn, tt.wantWarn):
				t.Errorf("warning %q, want %q", warn, tt.wantWarn)
			}
		})
	}
}

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

// TestStartBarrier: 4 ranks sharing a directory each mark themselves ready
// and wait; all pass when all are there, at one start instant.
func TestStartBarrier(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "barrier")
	starts := make([]time.Time, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := newBarrier(dir, time.Minute)
			b.poll = time.Millisecond
			starts[r], errs[r] = b.wait(t.Context(), rankInfo{rank: r, ranks: 4})
		}()
	}
	wg.Wait()
	for r := range 4 {
		if errs[r] != nil || !starts[r].Equal(starts[0]) || starts[r].IsZero() {
			t.Errorf("rank %d: start %v, %v; rank 0's %v", r, starts[r], errs[r], starts[0])
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d ready files, want 4", len(entries))
	}
	// The same directory again: the earlier run's files would let the
	// barrier pass at once.
	_, err := newBarrier(dir, time.Minute).wait(t.Context(), rankInfo{rank: 1, ranks: 4})
	if err == nil || !strings.Contains(err.Error(), "kvreplay-ready.1-of-4 exists, from an earlier run") {
		t.Errorf("a used barrier directory: %v", err)
	}
}

// TestStartBarrierTimeout: on a fake clock, a rank whose peers never come
// gives up after the timeout, naming the ranks missing; a rank of another
// --ranks is an error.
func TestStartBarrierTimeout(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	b := newBarrier(dir, 10*time.Minute)
	slept := time.Duration(0)
	b.now = func() time.Time { return now.Add(slept) }
	b.sleep = func(_ context.Context, d time.Duration) error { slept += d; return nil }
	_, err := b.wait(t.Context(), rankInfo{rank: 0, ranks: 3})
	if err == nil || !strings.Contains(err.Error(), "1 of 3 ranks ready after 10m0s (missing: 1, 2)") {
		t.Errorf("timeout: %v", err)
	}
	if slept < 10*time.Minute || slept > 10*time.Minute+startBarrierPoll {
		t.Errorf("waited %v on the fake clock, want the 10 min timeout", slept)
	}
	other := newBarrier(dir, time.Minute)
	other.sleep = b.sleep
	if _, err := other.wait(t.Context(), rankInfo{rank: 1, ranks: 2}); err == nil || !strings.Contains(err.Error(), "a rank of a run of 3 ranks, this one has 2") {
		t.Errorf("another --ranks: %v", err)
	}
}
