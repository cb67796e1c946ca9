package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/internal/host/hosttest"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

// Tests written from mutation testing: each pins a rule that a one-token
// change of the code broke without another test failing.

// TestObjectsOfForTheMemoryLimit: the memory limit counts the prescan's
// objects when there was one, else the sidecars' sum, and none (0) when
// a trace has no sidecar (a partial sum would undercount).
func TestObjectsOfForTheMemoryLimit(t *testing.T) {
	meta := func(n int64) *trace.Meta { return &trace.Meta{Counts: trace.MetaCounts{Objects: n}} }
	for _, c := range []struct {
		name string
		plan replay.Plan
		srcs []replay.Source
		want int64
	}{
		{"scanned", replay.Plan{Scanned: true, Objects: 5}, []replay.Source{{Meta: meta(9)}}, 5},
		{"sidecars", replay.Plan{}, []replay.Source{{Meta: meta(9)}, {Meta: meta(4)}}, 13},
		{"one without", replay.Plan{}, []replay.Source{{Meta: meta(9)}, {}}, 0},
	} {
		if got := objectsOf(&c.plan, c.srcs); got != c.want {
			t.Errorf("%s: %d objects, want %d", c.name, got, c.want)
		}
	}
}

// TestSuggestScaleBringsWithinAQuarter: the --size-scale a refusal
// suggests brings the need within a quarter of the memory (rounded to a
// power of two upward, never short of it).
func TestSuggestScaleBringsWithinAQuarter(t *testing.T) {
	if got := suggestScale(5<<30, 8<<30); got != "1/4" {
		t.Errorf("5 GiB in 8 GiB: %s, want 1/4 (1/2 leaves 2.5 GiB, above a quarter)", got)
	}
}

// TestUnplannedRAMLeavesTheEngineItsMemory: an arena sized by guess takes
// FitShare of the memory available less the engine's own, not all of it.
// The memory available moves while other processes run: RAMSize reads it
// between two readings of the test's, and its arena lies between theirs.
func TestUnplannedRAMLeavesTheEngineItsMemory(t *testing.T) {
	cfg := replay.DefaultConfig()
	share := func() (int64, int64) {
		avail, _ := host.Memory()
		return avail, int64(replay.FitShare*float64(avail)) - replay.EngineMemory(&cfg, 0)
	}
	avail, before := share()
	if floor := min(int64(defaultRAM), avail/4); avail <= 0 || before <= 2*floor {
		t.Skipf("%d bytes available: the floor applies", avail)
	}
	size, prefault := RAMSize(&cfg, &replay.Plan{}, 0)
	_, after := share()
	lo, hi := min(before, after), max(before, after)
	if size > hi || size < lo-(1<<20) || prefault != 0 {
		t.Errorf("arena %d, prefault %d; want %d to %d (FitShare of the memory available less the engine's memory, in MiB), none prefaulted", size, prefault, lo&^(1<<20-1), hi)
	}
}

// TestPlannedRAMSaysNothingOfALoop: an arena of the plan's peak, all
// prefaulted, gets no closed loop's note.
func TestPlannedRAMSaysNothingOfALoop(t *testing.T) {
	cfg := replay.DefaultConfig()
	plan := &replay.Plan{Scanned: true, Peak: map[string]int64{"ram": 8 << 20}}
	plan.Used[schema.TierCPU] = true
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tiers.Close()
	if w := strings.Join(tiers.Warnings, "\n"); strings.Contains(w, "closed loop") {
		t.Errorf("warnings %q: a note of a closed loop's arena for a plain replay", w)
	}
}

// TestExtentSizeFromTheNVMeTier: the extent file is sized from the NVMe
// tier's largest object, not the largest of all tiers.
func TestExtentSizeFromTheNVMeTier(t *testing.T) {
	plan := &replay.Plan{Peak: map[string]int64{"nvme": 64 << 20}, MaxObject: 1 << 30, MaxObjectOf: map[string]int64{"nvme": 1 << 20, "ram": 1 << 30}}
	if got, want := ExtentSize(plan), replay.ExtentBytes(64<<20, 1<<20); got != want {
		t.Errorf("extent %d bytes, want %d", got, want)
	}
	if !(&Options{Layout: "extent"}).sizing().Extent {
		t.Error("--layout extent without --device: the sizing is not the extent layout's")
	}
}

// TestCheckFreeCountsTheLargestObject: a peak that fits the free space
// but not with one more of its largest objects is refused.
func TestCheckFreeCountsTheLargestObject(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "8m")
	free := cli.FreeBytes(mnt)
	cfg := replay.DefaultConfig()
	plan := nvmePlan(free - 1<<20)
	plan.MaxObjectOf["nvme"] = 2 << 20
	tiers, err := Build(context.Background(), &Env{}, &cfg, plan, Options{Dir: mnt, Layout: "dir", Stderr: &strings.Builder{}})
	if err == nil {
		tiers.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "at its peak") {
		t.Errorf("a peak 1 MiB under the free space, objects of 2 MiB: %v, want refused", err)
	}
}

// TestExistingDeviceFileCountsAsFree: the blocks of an existing --device
// file are reused: they count as free, for the free-space check and the
// plan's machine.
func TestExistingDeviceFileCountsAsFree(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "8m")
	dev := filepath.Join(mnt, "kv.extent")
	f, err := os.Create(dev)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 64 MiB of size and no blocks; a real file of data would
	// hold its size in blocks.
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	o := Options{Layout: "extent", Device: dev, DeviceOverwrite: true, Stderr: &strings.Builder{}}
	if m := o.space(); m.DiskFree < 64<<20 {
		t.Errorf("DiskFree %d, want the file's 64 MiB counted", m.DiskFree)
	}
	b := &builder{plan: nvmePlan(16 << 20), opts: &o}
	if err := b.checkFree(mnt); err != nil {
		t.Errorf("a 16 MiB peak on a 64 MiB --device file: %v, want it to fit", err)
	}
}

// TestUnplannedBound: the bound on Tier-2 of a replay not read first is
// for the dir layout only (the extent file is sized by the plan, and
// nothing sizes it without one: refused, extentSize), and a sidecar that
// gives no NVMe peak does not lift it.
func TestUnplannedBound(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "8m")
	for _, c := range []struct {
		name   string
		layout string
		plan   *replay.Plan
		bound  bool
	}{
		{"extent layout", "extent", &replay.Plan{}, false},
		{"a sidecar without an NVMe peak", "dir", &replay.Plan{FromMeta: true, Peak: map[string]int64{}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
			c.plan.Used[schema.TierNVMe] = true
			if c.plan.Peak == nil {
				c.plan.Peak = map[string]int64{}
			}
			tiers, err := Build(context.Background(), &Env{}, &cfg, c.plan, Options{Dir: mnt, Layout: c.layout, Stderr: &strings.Builder{}})
			switch {
			case c.layout == "extent" && (err == nil || cli.ExitCode(err) != cli.ExitUsage):
				t.Errorf("an extent file nothing sizes: %v, want refused (exit 2)", err)
			case c.layout != "extent" && err != nil:
				t.Fatal(err)
			case err == nil:
				tiers.Close()
			}
			if (cfg.Capacity > 0) != c.bound {
				t.Errorf("capacity %d (%q), want a bound: %v", cfg.Capacity, cfg.CapacityWhy, c.bound)
			}
		})
	}
}

// TestFreeBytesForAnUnprivilegedWriter: the free space is what a writer
// other than root may take (f_bavail), not the blocks root keeps.
func TestFreeBytesForAnUnprivilegedWriter(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Bavail == st.Bfree {
		t.Skip("no blocks reserved here")
	}
	want := int64(st.Bavail) * st.Bsize
	if got := cli.FreeBytes(dir); got > want+(64<<20) || got < want-(64<<20) {
		t.Errorf("FreeBytes %d, want about %d (f_bavail)", got, want)
	}
}

// TestCheckDeviceEmptyFileAndBlockDevice: an existing empty file is
// refused without --device-overwrite (the replay would leave data in
// it), and a block device without --allow-device.
func TestCheckDeviceEmptyFileAndBlockDevice(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (Options{Layout: "extent", Device: empty}).CheckDevice(nil, ""); err == nil || !strings.Contains(err.Error(), "--device-overwrite") {
		t.Errorf("an empty existing file: %v, want refused", err)
	}
	const loop = "/dev/loop0"
	if fi, err := os.Stat(loop); err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		t.Skipf("%s is not a block device here", loop)
	}
	if err := (Options{Layout: "extent", Device: loop}).CheckDevice(nil, ""); err == nil || !strings.Contains(err.Error(), "--allow-device") {
		t.Errorf("a block device without --allow-device: %v, want refused", err)
	}
}

// TestCheckBlockDeviceRunFiles: a block device whose file system holds
// the result's directory, or a trace's sidecar only (through a link),
// is refused, and so is a loop device over a trace whose backing file
// sysfs marks deleted.
func TestCheckBlockDeviceRunFiles(t *testing.T) {
	other := hosttest.Tmpfs(t, "1m") // a file system of its own: the "device"
	var st syscall.Stat_t
	if err := syscall.Stat(other, &st); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	fake := filepath.Join(root, "devices", "fake")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	num := devName(uint64(st.Dev))
	os.WriteFile(filepath.Join(fake, "dev"), []byte(num+"\n"), 0o644)
	byNum := filepath.Join(root, "block")
	os.MkdirAll(byNum, 0o755)
	if err := os.Symlink(fake, filepath.Join(byNum, num)); err != nil {
		t.Fatal(err)
	}
	rdev := uint64(st.Dev)

	dir := t.TempDir() // another file system than other
	tr := filepath.Join(dir, "t.csv")
	os.WriteFile(tr, []byte("x"), 0o644)
	if err := checkBlockDevice(byNum, "/dev/fake", rdev, runFiles([]string{tr}, filepath.Join(other, "r.json"))); err == nil || !strings.Contains(err.Error(), "the result's directory") {
		t.Errorf("the result's directory on the device: %v, want refused", err)
	}
	side := filepath.Join(other, "side.json")
	os.WriteFile(side, []byte("{}"), 0o644)
	if err := os.Symlink(side, tr+cli.SidecarSuffix); err != nil {
		t.Fatal(err)
	}
	if err := checkBlockDevice(byNum, "/dev/fake", rdev, runFiles([]string{tr}, "")); err == nil || !strings.Contains(err.Error(), "the sidecar") {
		t.Errorf("the trace's sidecar on the device: %v, want refused", err)
	}

	// A loop device (another number) over the trace, deleted and made
	// again at its path: sysfs says "(deleted)".
	loop := filepath.Join(root, "devices", "loop9")
	os.MkdirAll(filepath.Join(loop, "loop"), 0o755)
	os.WriteFile(filepath.Join(loop, "dev"), []byte("7:9\n"), 0o644)
	os.WriteFile(filepath.Join(loop, "loop", "backing_file"), []byte(tr+" (deleted)\n"), 0o644)
	os.Symlink(loop, filepath.Join(byNum, "7:9"))
	if err := checkBlockDevice(byNum, "/dev/loop9", unix.Mkdev(7, 9), runFiles([]string{tr}, "")); err == nil || !strings.Contains(err.Error(), "a loop device over") {
		t.Errorf("a loop device over the trace: %v, want refused", err)
	}
}

// TestCheckFitsPlansFromSidecars: a replay planned from its sidecars (a
// pipe) that cannot fit is stopped before any I/O as a prescanned one is;
// --fit-time goes with --plan, which shows what --fit would bound.
func TestCheckFitsPlansFromSidecars(t *testing.T) {
	cfg := replay.DefaultConfig()
	cfg.TierMap = [schema.NumTiers]string{"", "", "nvme"}
	plan := &replay.Plan{FromMeta: true, Peak: map[string]int64{"nvme": 1 << 60}, MaxObjectOf: map[string]int64{}}
	plan.Used[schema.TierNVMe] = true
	if err := CheckFits(&cfg, plan, &Options{Dir: t.TempDir()}); err == nil || cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("a sidecar's 1 EiB peak: %v, want refused as input", err)
	}
	f := Fitting{Print: true, Format: "text", Time: time.Minute}
	if errs := f.Check("", "", false, true); len(errs) != 0 {
		t.Errorf("--plan --fit-time 1m: %v, want accepted", errs)
	}
}
