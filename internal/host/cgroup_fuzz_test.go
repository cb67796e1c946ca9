package host

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzCgroupMemory: whatever /proc/self/cgroup and a limit file say, the
// memory a cgroup grants is found or not, never negative and never above
// the limit, and an escape from the cgroup file system (a path of "..")
// reads nothing outside it.
func FuzzCgroupMemory(f *testing.F) {
	for _, s := range []struct{ self, limit, usage string }{
		{"0::/kubepods/pod1\n", "8589934592\n", "1073741824\n"},
		{"0::/\n", "max\n", "0\n"},
		{"12:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n", "4294967296", "5000000000"},
		{"0::/../../etc\n", "1", "2"},
		{"", "-1", "x"},
		{"0::\n0::/a\n", "9223372036854771712", "9223372036854775807"},
	} {
		f.Add(s.self, s.limit, s.usage)
	}
	f.Fuzz(func(t *testing.T, self, limit, usage string) {
		root := cgroupTree(t, map[string]string{
			"kubepods/pod1/memory.max":                limit,
			"kubepods/pod1/memory.current":            usage,
			"kubepods/pod1/memory.stat":               "inactive_file " + usage + "\n",
			"memory/docker/abc/memory.limit_in_bytes": limit,
			"memory/docker/abc/memory.usage_in_bytes": usage,
			"memory/docker/abc/memory.stat":           "total_inactive_file 7\n",
			"memory.max":                              limit,
			"memory.current":                          usage,
		})
		avail, lim, ok := cgroupMemory(root, self)
		if !ok {
			if avail != 0 || lim != 0 {
				t.Fatalf("no limit found, but %d available of %d", avail, lim)
			}
			return
		}
		if avail < 0 || lim < 0 || avail > lim || lim >= noLimit {
			t.Fatalf("%d available of a limit of %d", avail, lim)
		}
		// The only limit files are the tree's: a limit found is one of
		// them.
		if want, err := strconv.ParseInt(strings.TrimSpace(limit), 10, 64); err != nil || want != lim {
			t.Fatalf("limit %d; the files say %q", lim, limit)
		}
	})
}
