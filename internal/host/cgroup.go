package host

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// noLimit is where a cgroup's memory limit means none: v1 writes
// "unlimited" as the largest page multiple below 2^63, v2 writes "max".
const noLimit = int64(1) << 62

// cgroupMemory returns the memory this process's cgroup lets it use, in
// bytes: limit, the smallest memory limit of its cgroup and the cgroups
// above it, and available, that limit less what the cgroup uses now,
// its inactive file cache counted as free (the kernel reclaims it before
// it kills); ok is false where no limit applies (no cgroup memory
// controller, or none set). root is the cgroup file system's mount point
// (/sys/fs/cgroup) and self the text of /proc/self/cgroup. A container's
// runtime sets such a limit (a Kubernetes pod's resources.limits.memory),
// below the machine's memory that /proc/meminfo reports: an arena sized
// from the machine's got the replay killed.
func cgroupMemory(root, self string) (available, limit int64, ok bool) {
	for line := range strings.SplitSeq(self, "\n") {
		id, rest, _ := strings.Cut(line, ":")
		ctrls, p, found := strings.Cut(rest, ":")
		switch {
		case !found:
			continue
		case id == "0" && ctrls == "":
			if available, limit, ok = cgroupLimit(root, p, "memory.max", "memory.current", "inactive_file"); ok {
				return available, limit, true
			}
		case slices.Contains(strings.Split(ctrls, ","), "memory"):
			if available, limit, ok = cgroupLimit(filepath.Join(root, "memory"), p, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"); ok {
				return available, limit, true
			}
		}
	}
	return 0, 0, false
}

// cgroupLimit reads the limit of the cgroup at path p below mount and of
// each cgroup above it, and the usage of the nearest that exists. A
// container that mounts its own cgroup at the mount's root (a cgroup
// namespace) sees p as "/": its own cgroup is the root.
func cgroupLimit(mount, p, limitFile, usageFile, inactiveKey string) (available, limit int64, ok bool) {
	limit = noLimit
	usageAt := ""
	for dir := path.Clean("/" + p); ; dir = path.Dir(dir) {
		d := filepath.Join(mount, filepath.FromSlash(dir))
		if v, found := cgroupValue(filepath.Join(d, limitFile)); found {
			limit = min(limit, v)
			if usageAt == "" {
				usageAt = d
			}
		}
		if dir == "/" {
			break
		}
	}
	if limit >= noLimit || usageAt == "" {
		return 0, 0, false
	}
	used, _ := cgroupValue(filepath.Join(usageAt, usageFile))
	if b, err := os.ReadFile(filepath.Join(usageAt, "memory.stat")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, _ := strings.Cut(sc.Text(), " "); k == inactiveKey {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
					used -= min(n, used)
				}
			}
		}
	}
	return max(0, limit-used), limit, true
}

// cgroupValue reads a cgroup file of one number ("max" is noLimit).
func cgroupValue(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return noLimit, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
