package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/launch"
	"github.com/kvbench/kvbench/replay"
)

// TestReplayPlansTheProbe: a capacity search plans the whole trace once
// (Fitting.WholeTrace) and its probes' --speed sets how far each one's
// --duration reaches; Replay plans each probe's window itself
// (replay.WindowPlan). Here the trace reads a cold object at 0 s and a
// cold object of twice the free space of Dir at 5 s. The whole trace does
// not fit (SearchFits warns, MayFill), but a probe whose window reaches
// 0.1 s replays, with only the first cold object written before its
// clock; one whose window reaches 10 s is not run: checked with its own
// plan, it would fill the disk, so it stops with ErrProbeNotRun, the
// search's failure (exit 1), and leaves nothing in Dir. Before, every
// probe replayed the whole trace's plan: the first wrote the 5 s object
// too (the extent layout preallocated for it), and the disk filled.
func TestReplayPlansTheProbe(t *testing.T) {
	dir := t.TempDir()
	free := cli.FreeBytes(dir)
	if free <= 0 {
		t.Skip("the free space of the temp dir is unknown")
	}
	big := (2*free + 4095) &^ 4095
	rows := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" +
		"0.0,Read,65536,Tier-2,early,Decode\n" +
		fmt.Sprintf("5.0,Read,%d,Tier-2,late,Decode\n", big)
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.Duration = 100 * time.Millisecond
	srcs, whole, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{WholeTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Cold) != 2 || whole.Window != 0 {
		t.Fatalf("the whole trace's plan: %d cold objects, window %v; want 2, the whole trace", len(whole.Cold), whole.Window)
	}
	opts := Options{Dir: dir, Buffered: true, Stderr: &strings.Builder{}}
	w, err := SearchFits("capacity", &cfg, whole, &opts)
	if err != nil || !opts.MayFill || !strings.Contains(w, "the first that does not fit is not run") {
		t.Fatalf("SearchFits: %q, %v; want a warning", w, err)
	}
	for _, layout := range []string{"dir", "extent"} {
		t.Run(layout, func(t *testing.T) {
			opts := opts
			opts.Layout = layout
			probe := cfg
			res, err := Replay(context.Background(), &Env{}, &probe, whole, srcs, opts, nil, nil)
			if err != nil {
				t.Fatalf("the probe of a 0.1 s window: %v", err)
			}
			if res.Replay.ColdPrepared != 1 {
				t.Errorf("the probe of a 0.1 s window wrote %d cold objects; want 1, its window's", res.Replay.ColdPrepared)
			}
			probe.Speed = 100 // a window of 10 s of trace
			res, err = Replay(context.Background(), &Env{}, &probe, whole, srcs, opts, nil, nil)
			if res != nil || !errors.Is(err, ErrProbeNotRun) || cli.ExitCode(err) != cli.ExitFailure ||
				!strings.Contains(err.Error(), "the probe does not fit this machine: disk: ") || !strings.Contains(err.Error(), "--fit") {
				t.Errorf("the probe of a 10 s window: %v; want it not run, exit 1", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("the probes left %d entries in Dir", len(ents))
			}
		})
	}
}

// TestNullSaysNoStorage: the tiers on the null backend are named in the
// result as measuring no storage; a replay of Tier-1 and Tier-2 on it
// gave bandwidths of petabytes a second and storage_health PASS without a
// word of it.
func TestNullSaysNoStorage(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap[1], cfg.TierMap[2] = "ram", "null"
	plan := nvmePlan(1 << 20)
	plan.Used[1] = true
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tiers.Close()
	w := strings.Join(tiers.Warnings, "\n")
	if !strings.Contains(w, "NO STORAGE: Tier-2 on the null backend, which moves no data") || strings.Contains(w, "Tier-1 on") {
		t.Errorf("warnings:\n%s", w)
	}
}

// TestSearchDurationZero: --duration 0 given to a search is refused,
// naming the window a probe takes without it: a probe is a window of the
// trace, and 0 (the whole trace, to a replay) became 30 s without a
// word. Not given, the window is DefaultProbeWindow.
func TestSearchDurationZero(t *testing.T) {
	for _, given := range []bool{true, false} {
		cfg := replay.DefaultConfig()
		so := SearchOptions{Kind: "capacity", Probes: 12, Repeats: 2, DurationGiven: given}
		errs := so.Check(&cfg)
		refused := len(errs) == 1 && strings.HasPrefix(errs[0].Error(), "--duration 0: a search's probes are windows of the trace (30s when --duration is not given)")
		if refused != given || (!given && (len(errs) != 0 || cfg.Duration != DefaultProbeWindow)) {
			t.Errorf("--duration 0 given %v: %v, window %v", given, errs, cfg.Duration)
		}
	}
}

// TestNoDataBackendSaysNoStorage: the note comes from the backend's
// capability (Caps().NoData), not from the null row, so a new tier that
// keeps no data (here the null backend under another name, as a copy of
// its package would be) says it too, with its own name.
func TestNoDataBackendSaysNoStorage(t *testing.T) {
	saved := factories
	t.Cleanup(func() { factories = saved })
	factories = append(append([]row(nil), saved...), row{Name: "nullx", New: factory("null").New})
	cfg := replay.DefaultConfig()
	cfg.TierMap[1], cfg.TierMap[2] = "ram", "nullx"
	plan := nvmePlan(1 << 20)
	plan.Used[1] = true
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tiers.Close()
	if w := strings.Join(tiers.Warnings, "\n"); !strings.Contains(w, "NO STORAGE: Tier-2 on the nullx backend") {
		t.Errorf("warnings:\n%s", w)
	}
}

// TestSearchUnderRanksSaysWhence: a search under several ranks is refused,
// and the error names where the ranks came from (an sbatch script's
// SLURM_NTASKS, met by a user who ran one kvreplay in it, was not said;
// now such a script is refused before, naming --rank 0 --ranks 1) and how
// to search as one process: --rank 0 --ranks 1, which the search then
// takes, or under a launcher of several processes (an MPI launcher
// refuses those flags, and in each of srun's tasks they make every task
// rank 0) one process of it.
func TestSearchUnderRanksSaysWhence(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rank, ranks  string
		env          map[string]string
		want, advice string
	}{
		{"sbatch", "", "", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, "", "give --rank 0 --ranks 1"},
		{"srun", "", "", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "4"},
			"(the 4 ranks: SLURM_STEP_NUM_TASKS=4 in the environment (srun sets it for its tasks))", "to search on one host, start one task (srun -n 1)"},
		{"flags", "0", "2", nil, "(the 2 ranks: --ranks 2)", "to search on one host, give --rank 0 --ranks 1"},
		{"mpirun", "", "", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "3"},
			"(the 3 ranks: OMPI_COMM_WORLD_SIZE=3 in the environment (Open MPI's mpirun sets it))", "to search on one host, start one process (mpirun -np 1)"},
		{"indexed job", "", "", map[string]string{"JOB_COMPLETION_INDEX": "1", "KVBENCH_RANKS": "2"},
			"(the 2 ranks: KVBENCH_RANKS=2 in the environment (kvbench's variable, set in a Kubernetes Indexed Job's manifest))", "give --rank 0 --ranks 1"},
		{"sbatch, one host", "0", "1", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := launch.FromFlags(tc.rank, tc.ranks, func(k string) string { return tc.env[k] })
			if tc.want == "" && tc.advice != "" {
				if err == nil || !strings.Contains(err.Error(), tc.advice) {
					t.Errorf("%+v, %v; want refused, saying %q", r, err, tc.advice)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg := replay.DefaultConfig()
			so := SearchOptions{Kind: "users", Probes: 12, Repeats: 2, Rank: r}
			errs := so.Check(&cfg)
			if tc.want == "" {
				if len(errs) != 0 {
					t.Errorf("%v; want the search taken", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "--search users under ") ||
				!strings.Contains(errs[0].Error(), tc.want) || !strings.Contains(errs[0].Error(), tc.advice) {
				t.Errorf("%v; want it refused, saying %q and %q", errs, tc.want, tc.advice)
			}
		})
	}
}
