package replay_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host/hosttest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/schema"
)

// TestFullFileSystemNamed: a replay whose NVMe tier's file system fills
// (ENOSPC: eight objects of 1 MiB on a tmpfs of 4 MiB, nothing bounding
// the tier) stops with an error, and keeps errors, that name the file
// system that filled: its type, its mount point, and its free and total
// bytes. They named the object's file and "no space left on device", and
// left the user to find out which device that was.
func TestFullFileSystemNamed(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "4m")
	var recs []schema.Record
	for i := range 8 {
		recs = append(recs, rec(0, schema.OpWrite, 1<<20, schema.TierNVMe, fmt.Sprint("k", i), schema.PhasePrefill, 0))
	}
	b, err := nvme.New(mnt, nvme.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	cfg.Speed = 0
	res, err := runReplay(t, cfg, memTrace(t, recs), map[string]backend.Backend{"nvme": b})
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, backend.ErrNoSpace) || res == nil {
		t.Fatalf("result %v, error %v; want a result and ENOSPC", res != nil, err)
	}
	named := func(msg string) bool {
		return strings.Contains(msg, "no space left on device (tmpfs on "+mnt+": ") && strings.HasSuffix(msg, " free of 4.00 MiB)")
	}
	if !named(err.Error()) || res.Complete || !named(res.IncompleteReason) {
		t.Errorf("error %q, complete %v, reason %q: want the tmpfs on %s named, with its free and total bytes", err, res.Complete, res.IncompleteReason, mnt)
	}
	if len(res.Errors.First) == 0 {
		t.Fatal("no error kept")
	}
	for _, e := range res.Errors.First {
		if !named(e) {
			t.Errorf("kept error %q: want the tmpfs on %s named", e, mnt)
		}
	}

	// Other errors are left as they were; a block device's names nothing.
	eio := fmt.Errorf("write: %w", syscall.EIO)
	if got := cli.FullFileSystem(mnt, eio); got != eio {
		t.Errorf("FullFileSystem(EIO) = %v, want it unchanged", got)
	}
	full := backend.FileError(syscall.ENOSPC)
	if got := cli.FullFileSystem("", full); got != full {
		t.Errorf(`FullFileSystem("", ENOSPC) = %v, want it unchanged`, got)
	}
	if got := cli.FullFileSystem(mnt, backend.FileError(syscall.EDQUOT)); !strings.HasPrefix(got.Error(), "disk quota exceeded (tmpfs on "+mnt+": ") ||
		!errors.Is(got, backend.ErrNoSpace) {
		t.Errorf("FullFileSystem(EDQUOT) = %v, want the tmpfs named, matching ErrNoSpace", got)
	}
}
