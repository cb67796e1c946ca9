package setup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host/hosttest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/results"
)

// TestBuildFailureIsAResult: a replay whose tiers cannot be made, the
// extent file's preallocation finding the file system full (ENOSPC: a
// 4 MiB tmpfs has room for the trace's peak and largest object, which the
// free-space check asks, not for the 10.25 MiB file), returns a result
// marked incomplete with the phase and the cause named (and the file
// system, its type, mount point and space), nothing measured,
// and the error, which kvreplay writes where the result goes (exit 1):
// before, it returned no result, and a launcher found no file for the
// rank. A refusal of the input (a tier that does not fit the memory)
// still returns none: the input is to change, exit 2.
func TestBuildFailureIsAResult(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "4m")
	tr := filepath.Join(t.TempDir(), "t.csv")
	const rows = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" +
		"0.0,Write,1048576,Tier-2,a,Prefill\n" +
		"0.1,Read,1048576,Tier-2,a,Decode\n"
	if err := os.WriteFile(tr, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := replay.DefaultConfig()
	cfg.Speed = 0
	cfg.TierMap = [len(cfg.TierMap)]string{"", "", "nvme"}
	srcs, plan, err := Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Dir: mnt, Layout: "extent", Stderr: &strings.Builder{}}
	res, err := Replay(context.Background(), &Env{}, &cfg, plan, srcs, opts, nil, nil)
	if !errors.Is(err, syscall.ENOSPC) || res == nil {
		t.Fatalf("result %v, error %v; want a result and ENOSPC", res != nil, err)
	}
	if cli.ExitCode(err) != cli.ExitFailure {
		t.Errorf("exit %d for %v; want a failure's, 1", cli.ExitCode(err), err)
	}
	const want = "replay: before the clock: making the tiers: extent: preallocate "
	if res.Complete || !strings.HasPrefix(res.IncompleteReason, want) || !strings.Contains(res.IncompleteReason, "no space left on device") || res.IncompleteReason != err.Error() {
		t.Errorf("complete %v, reason %q, error %q; want incomplete, %q... no space left on device", res.Complete, res.IncompleteReason, err, want)
	}
	if res.WallS != 0 || len(res.Cells) != 0 || len(res.Tiers) != 0 || res.Replay.RowsDone != 0 || len(res.Traces) != 1 || res.Traces[0].Rows != 2 || res.Host.Hostname == "" {
		t.Errorf("wall %g s, %d cells, %d tiers, %d rows done, traces %+v, host %q: want nothing measured, the trace and the host named",
			res.WallS, len(res.Cells), len(res.Tiers), res.Replay.RowsDone, res.Traces, res.Host.Hostname)
	}
	// The file system that is too small is named, with its type and
	// size, as the replay names one that fills later.
	if fs := "no space left on device (tmpfs on " + mnt + ": 4.00 MiB free of 4.00 MiB)"; !strings.HasSuffix(res.IncompleteReason, fs) {
		t.Errorf("reason %q, want it to end with %q", res.IncompleteReason, fs)
	}
	if h := res.Summary.StorageHealth.OverallStatus; h != results.HealthIncomplete {
		t.Errorf("storage_health %s, want INCOMPLETE", h)
	}
	if left, _ := os.ReadDir(mnt); len(left) != 0 {
		t.Errorf("left on the file system: %v", left)
	}

	// A refusal: the RAM tier asks more than the machine's memory.
	cfg.TierMap = [len(cfg.TierMap)]string{"", "", "ram"}
	cfg.SizeScale = 1 << 24 // 16 TiB objects
	srcs, plan, err = Prescan(context.Background(), []string{tr}, "", &cfg, Fitting{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = Replay(context.Background(), &Env{}, &cfg, plan, srcs, Options{Stderr: &strings.Builder{}}, nil, nil)
	if res != nil || cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("a RAM tier larger than memory: result %v, exit %d (%v); want no result, the input's error (2)", res != nil, cli.ExitCode(err), err)
	}
}
