package host

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFacts checks the facts this machine has.
func TestFacts(t *testing.T) {
	h := Facts()
	t.Logf("%+v", h)
	if h.OS != runtime.GOOS || h.Arch != runtime.GOARCH || h.GoVersion != runtime.Version() {
		t.Errorf("OS/arch/Go %s/%s/%s", h.OS, h.Arch, h.GoVersion)
	}
	if h.CPUs < 1 {
		t.Errorf("CPUs %d", h.CPUs)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if h.Hostname == "" || h.Kernel == "" || h.MemoryB <= 0 {
		t.Errorf("hostname %q, kernel %q, memory %d: want all set on Linux", h.Hostname, h.Kernel, h.MemoryB)
	}
	if h.CPUModel == "" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "386") {
		t.Error("no CPU model on x86, where /proc/cpuinfo has one")
	}
}

// TestPathFacts checks the storage facts of the temporary directory on
// this machine, and of a path below it that does not exist yet.
func TestPathFacts(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("storage facts come from Linux's /proc and /sys")
	}
	dir := t.TempDir()
	p := PathFacts("file", dir)
	t.Logf("%+v", p)
	if p.Backend != "file" || p.Path != dir || p.Direct {
		t.Errorf("backend %q path %q direct %v", p.Backend, p.Path, p.Direct)
	}
	if p.FileSystem == "" || p.Device == "" {
		t.Errorf("file system %q, device %q: want both", p.FileSystem, p.Device)
	}
	if want := statfsType(dir); want != "" && !sameFS(p.FileSystem, want) {
		t.Errorf("mountinfo says %q, statfs %q", p.FileSystem, want)
	}
	if q := PathFacts("file", filepath.Join(dir, "not", "yet")); q.FileSystem != p.FileSystem || q.Device != p.Device {
		t.Errorf("a path to be created: %+v, want its parent's %+v", q, p)
	}
	// Through a symbolic link, the target's file system.
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/proc", link); err != nil {
		t.Fatal(err)
	}
	if q := PathFacts("file", link); q.FileSystem != "proc" {
		t.Errorf("a link to /proc: file system %q, want proc", q.FileSystem)
	}
	if q := PathFacts("file", "/tmp"); q.FileSystem == "" {
		t.Errorf("/tmp: %+v, want a file system", q)
	}
}

// sameFS reports whether mountinfo's type name and the statfs magic's name
// agree (ext2 and ext3 share ext4's magic).
func sameFS(mountinfo, statfs string) bool {
	if statfs == "ext4" {
		return mountinfo == "ext2" || mountinfo == "ext3" || mountinfo == "ext4"
	}
	return mountinfo == statfs
}
