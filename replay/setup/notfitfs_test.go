package setup

import (
	"context"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/host/hosttest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
)

// TestNotFitNamesFileSystem: a replay refused before any I/O because the
// NVMe tier's peak does not fit the free space names the file system as
// a replay that fills it does (type, mount point, free of total), both
// where the plan refuses it (CheckFits) and where the tier is made
// (checkFree). They named the directory and its free space only.
func TestNotFitNamesFileSystem(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "8m")
	space := "(tmpfs on " + mnt + ": "
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	plan := nvmePlan(64 << 20)
	opts := Options{Dir: mnt, Layout: "dir", Stderr: &strings.Builder{}}
	named := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), space) && strings.Contains(err.Error(), " free of 8.00 MiB)")
	}
	if err := CheckFits(&cfg, plan, &opts); !named(err) {
		t.Errorf("CheckFits: %v\nwant the tmpfs on %s named", err, mnt)
	}
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, opts)
	if err == nil {
		tiers.Close()
	}
	if !named(err) || !strings.Contains(err.Error(), "at its peak") {
		t.Errorf("Build: %v\nwant refused, the tmpfs on %s named", err, mnt)
	}
	if m := opts.machine(); !strings.HasPrefix(m.DiskSpace, "tmpfs on "+mnt+": ") {
		t.Errorf("the plan's machine names %q, want the tmpfs on %s", m.DiskSpace, mnt)
	}
}
