package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host/hosttest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/trace"
)

// TestUnplannedReplayBoundsTier2: a replay of traces not read before it
// (a pipe, --no-prescan) bounds Tier-2 on nvme at half the space free in
// --dir, evicting its least recently used objects beyond, and says so: on
// an 8 MiB file system, 12 objects of 1 MiB kept live complete, where the
// replay had filled the file system and stopped on ENOSPC, meeting every
// other writer there. A given --capacity, a prescan, or a sidecar's peak
// that fits in the half sets no bound.
func TestUnplannedReplayBoundsTier2(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "8m")
	var rows strings.Builder
	rows.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 12 {
		fmt.Fprintf(&rows, "%d.0,Write,1048576,Tier-2,k%d,Prefill\n", i, i)
	}
	rows.WriteString("20.0,Read,1048576,Tier-2,k0,Decode\n")
	tr := filepath.Join(t.TempDir(), "t.csv")
	if err := os.WriteFile(tr, []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A trace of 3 objects whose sidecar gives its peak, 3 MiB: within
	// the half, so no bound.
	small := filepath.Join(t.TempDir(), "small.csv")
	body := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0.0,Write,1048576,Tier-2,a,Prefill\n1.0,Write,1048576,Tier-2,b,Prefill\n2.0,Write,1048576,Tier-2,c,Prefill\n"
	if err := os.WriteFile(small, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	meta := &trace.Meta{FormatVersion: trace.FormatVersion, Tool: "kvtrace", Counts: trace.MetaCounts{Rows: 3, Objects: 3, WriteBytes: 3 << 20}, PeakLiveBytes: map[string]int64{"Tier-2": 3 << 20}}
	if err := trace.WriteMeta(small, meta); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		trace    string
		prescan  bool
		capacity int64
		bound    bool
	}{
		{"not read first", tr, false, 0, true},
		{"--capacity given", tr, false, 2 << 20, false},
		{"read first", small, true, 0, false},
		{"a sidecar's peak within the half", small, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.Speed, cfg.Prescan, cfg.Capacity = 0, tc.prescan, tc.capacity
			cfg.TierMap = [len(cfg.TierMap)]string{"", "", "nvme"}
			srcs, plan, err := Prescan(context.Background(), []string{tc.trace}, "", &cfg, Fitting{})
			if err != nil {
				t.Fatal(err)
			}
			free := cli.FreeBytes(mnt)
			res, err := Replay(context.Background(), &Env{}, &cfg, plan, srcs, Options{Dir: mnt, Stderr: &strings.Builder{}}, nil, nil)
			if err != nil || res == nil || !res.Complete {
				t.Fatalf("error %v, result %v: want a complete run", err, res != nil)
			}
			said := strings.Contains(strings.Join(res.Warnings, "\n"), "the traces were not read before the replay") &&
				strings.Contains(strings.Join(res.Warnings, "\n"), "kvreplay evicted")
			if want := int64(replay.FitShare*float64(free)) &^ (1<<20 - 1); tc.bound && (cfg.Capacity != want || !said || res.Replay.CapacityEvictions == 0) {
				t.Errorf("capacity %d (want %d of %d free), said %v, %d evictions: want the bound, said, and evictions", cfg.Capacity, want, free, said, res.Replay.CapacityEvictions)
			}
			if !tc.bound && (cfg.Capacity != tc.capacity || said) {
				t.Errorf("capacity %d, said %v: want the given %d, nothing said", cfg.Capacity, said, tc.capacity)
			}
		})
	}
}

// TestReadOnlyDirRefusedFirst: a --dir on a read-only file system is
// refused with the flags, before any plan: the plan had advised a smaller
// --size-scale for its 1 MiB free, and --fit had announced what it would
// replay with, before the run directory could not be made.
func TestReadOnlyDirRefusedFirst(t *testing.T) {
	dir := hosttest.Tmpfs(t, "1m")
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount read-only: %v", err)
	}
	errs := Options{Dir: dir, Layout: "dir"}.CheckPaths(nil, "", false)
	if len(errs) != 1 || !errors.Is(errs[0], syscall.EROFS) || !strings.Contains(errs[0].Error(), "--dir "+dir+": read-only file system") {
		t.Errorf("errors %v; want one: --dir %s: read-only file system", errs, dir)
	}
}
