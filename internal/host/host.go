// Package host owns the facts about the machine a result was measured on:
// the host (name, kernel, CPU, memory, Go version) and the storage behind
// each tier's path (file system type, device, device model), as the result
// document records them (design section 6).
//
// Facts are best effort: nothing here fails, and a fact that cannot be
// found is left empty. On Linux they come from uname, /proc/cpuinfo,
// /proc/meminfo, /proc/self/mountinfo, statfs and /sys/dev/block; on other
// systems only what the Go runtime knows is filled.
package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// Facts returns the facts of this machine. It never fails; a fact it
// cannot find is left empty (zero). TierPaths is left for the caller to
// fill with PathFacts.
func Facts() schema.Host {
	h := schema.Host{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPUs:      runtime.NumCPU(),
		GoVersion: runtime.Version(),
	}
	h.Hostname, _ = os.Hostname()
	h.Kernel = kernelRelease()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		h.CPUModel = cpuModel(f)
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		h.MemoryB = memTotal(f)
		f.Close()
	}
	if h.MemoryB == 0 {
		h.MemoryB = sysinfoMemory()
	}
	return h
}

// Memory returns the available and total memory in bytes this process
// may use: the machine's (/proc/meminfo's MemAvailable and MemTotal; the
// total from sysinfo where there is no /proc), or, where its cgroup sets
// a lower memory limit (a container's), that limit and what it leaves
// (cgroupMemory); 0 for what it cannot find.
func Memory() (available, total int64) {
	if f, err := os.Open("/proc/meminfo"); err == nil {
		v := meminfo(f, "MemAvailable", "MemTotal")
		f.Close()
		available, total = v[0], v[1]
	}
	if total == 0 {
		total = sysinfoMemory()
	}
	if self, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		if avail, limit, ok := cgroupMemory("/sys/fs/cgroup", string(self)); ok {
			if total == 0 || limit < total {
				total = limit
			}
			if available == 0 || avail < available {
				available = avail
			}
		}
	}
	return available, total
}

// PathFacts describes the storage behind path, which backend uses: the
// type of the file system holding it, its device (the mount's source when
// that is a device node such as /dev/nvme0n1p2, else the device number
// major:minor) and the device's model (the whole disk's, for a partition
// or a device-mapper volume; the vendor and driver when the disk reports
// no model, as virtio disks do). A path that does not exist yet is
// described by its nearest existing parent. Direct is left false for the
// caller to set. PathFacts never fails; what it cannot find is left empty.
func PathFacts(backend, path string) schema.PathInfo {
	info := schema.PathInfo{Backend: backend, Path: path}
	resolved := resolve(path)
	if resolved == "" {
		return info
	}
	m, found := mountOf(resolved)
	devNum := ""
	if found {
		info.FileSystem = m.fsType
		info.MountOptions = m.options
		if strings.HasPrefix(m.fsType, "fuse") {
			info.Gateway = Gateway(m.fsType, m.source)
			info.GatewayCommand = GatewayCommand("/proc", m.point, gatewayName(m.fsType, m.source))
		}
		info.Device, devNum = m.majMin, m.majMin
		if strings.HasPrefix(m.source, "/dev/") {
			info.Device = m.source
			// The node's own number names its sysfs entry; mountinfo's can
			// be an anonymous 0:n (btrfs).
			if n := blockDeviceNumber(m.source); n != "" {
				devNum = n
			}
		}
	} else {
		info.FileSystem = statfsType(resolved)
		info.Device = deviceNumber(resolved)
		devNum = info.Device
	}
	if devNum != "" {
		info.Model = deviceModel("/sys", devNum)
	}
	return info
}

// mountOf is the mount holding the resolved path, from this process's
// mountinfo; false when it cannot be read.
func mountOf(resolved string) (mount, bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mount{}, false
	}
	defer f.Close()
	ms, err := parseMountinfo(f)
	if err != nil {
		return mount{}, false
	}
	return findMount(ms, resolved)
}

// objectGateways are the FUSE programs that put an object store behind a
// POSIX path, by the name gatewayName gives them.
var objectGateways = []string{"s3fs", "rclone", "mountpoint-s3", "mount-s3", "goofys", "geesefs", "gcsfuse", "blobfuse", "blobfuse2"}

// ObjectGateway names the FUSE gateway of an object store that path is
// on (s3fs, rclone, mountpoint-s3, ...; the nearest existing parent of a
// path not made yet), "" for any other file system.
func ObjectGateway(path string) string {
	resolved := resolve(path)
	if resolved == "" {
		return ""
	}
	m, found := mountOf(resolved)
	if !found || !strings.HasPrefix(m.fsType, "fuse") {
		return ""
	}
	if name := gatewayName(m.fsType, m.source); slices.Contains(objectGateways, name) {
		return name
	}
	return ""
}

// Gateway names the program behind a FUSE mount of type fsType
// ("fuse.s3fs") from source ("s3fs"), with the first line its --version
// prints where it is on PATH and answers within two seconds: "s3fs
// (Amazon Simple Storage Service File System V1.91 ...)".
func Gateway(fsType, source string) string {
	name := gatewayName(fsType, source)
	if name == "" {
		return ""
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil && len(out) == 0 {
		return name
	}
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			return name + ": " + l
		}
	}
	return name
}

// gatewayName is the program behind a FUSE mount: its file system's
// subtype ("fuse.s3fs"), else its source's base name.
func gatewayName(fsType, source string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(fsType, "fuse"), ".")
	if name == "" || name == "fuseblk" {
		name = filepath.Base(source)
	}
	return name
}

// resolve makes path absolute and resolves its symbolic links; for a path
// that does not exist it resolves the nearest existing parent and appends
// the rest. It returns "" when nothing can be resolved.
func resolve(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return ""
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// Space is the file system that holds a path, as a message about its
// space names it: which one it is, and how full.
type Space struct {
	// FileSystem is its type: "ext4", "xfs", "tmpfs"; "" when unknown.
	FileSystem string
	// MountPoint is where it is mounted; "" when unknown.
	MountPoint string
	// Device is the mount's source where that is a device node, such as
	// /dev/nvme0n1p2; else "".
	Device string
	// Free is the bytes available to an unprivileged writer, Total the
	// file system's size; -1 when unknown.
	Free, Total int64
}

// SpaceOf describes the file system that holds path, or will hold it once
// made (its nearest existing parent), now. It never fails; what it cannot
// find is left unknown.
func SpaceOf(path string) Space {
	sp := Space{Free: -1, Total: -1}
	resolved := resolve(path)
	if resolved == "" {
		return sp
	}
	// statfs needs a path that exists: the nearest existing parent.
	existing := resolved
	for {
		if _, err := os.Stat(existing); err == nil || existing == filepath.Dir(existing) {
			break
		}
		existing = filepath.Dir(existing)
	}
	if m, found := mountOf(resolved); found {
		sp.FileSystem, sp.MountPoint = m.fsType, m.point
		if strings.HasPrefix(m.source, "/dev/") {
			sp.Device = m.source
		}
	} else {
		sp.FileSystem = statfsType(existing)
	}
	sp.Free, sp.Total = statfsSpace(existing)
	return sp
}

// FSType names the file system that holds path ("ext4", "xfs", "tmpfs",
// ...), for messages; "unknown file system" when statfs fails.
func FSType(path string) string {
	if t := statfsType(path); t != "" {
		return t
	}
	return "unknown file system"
}
