package host

import (
	"os"
	"path/filepath"
	"testing"
)

// cgroupTree writes files (path relative to a fresh root: content) and
// returns the root.
func cgroupTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCgroupMemory: a container's memory limit (its cgroup's, or a
// parent's below it) bounds the memory a replay may use, less what the
// cgroup uses beyond its inactive file cache; where no limit is set, or
// no memory controller, there is none. /proc/meminfo reports the
// machine's memory, and an arena sized from it in a pod limited to 8 GiB
// got the replay killed.
func TestCgroupMemory(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name       string
		files      map[string]string
		self       string
		avail, lim int64
		ok         bool
	}{
		{"v2 limit", map[string]string{
			"kubepods/pod1/memory.max":     "8589934592\n",
			"kubepods/pod1/memory.current": "2147483648\n",
			"kubepods/pod1/memory.stat":    "anon 1073741824\ninactive_file 1073741824\n",
		}, "0::/kubepods/pod1\n", 7 * gib, 8 * gib, true},
		{"v2 parent's lower limit", map[string]string{
			"kubepods/memory.max":          "4294967296\n",
			"kubepods/pod1/memory.max":     "max\n",
			"kubepods/pod1/memory.current": "1073741824\n",
		}, "0::/kubepods/pod1\n", 3 * gib, 4 * gib, true},
		{"v2 namespaced root", map[string]string{
			"memory.max":     "2147483648\n",
			"memory.current": "0\n",
		}, "0::/\n", 2 * gib, 2 * gib, true},
		{"v2 none", map[string]string{
			"user.slice/memory.max":     "max\n",
			"user.slice/memory.current": "1073741824\n",
		}, "0::/user.slice\n", 0, 0, false},
		{"v1 limit", map[string]string{
			"memory/docker/abc/memory.limit_in_bytes": "6442450944\n",
			"memory/docker/abc/memory.usage_in_bytes": "3221225472\n",
			"memory/docker/abc/memory.stat":           "cache 100\ntotal_inactive_file 1073741824\n",
		}, "12:blkio:/docker/abc\n4:memory:/docker/abc\n0::/\n", 4 * gib, 6 * gib, true},
		{"v1 unlimited", map[string]string{
			"memory/memory.limit_in_bytes":               "9223372036854771712\n",
			"memory/process_api/x/memory.limit_in_bytes": "9223372036854771712\n",
			"memory/process_api/x/memory.usage_in_bytes": "1449164800\n",
		}, "4:memory:/process_api/x\n0::/\n", 0, 0, false},
		{"usage past the limit", map[string]string{
			"a/memory.max":     "1073741824\n",
			"a/memory.current": "2147483648\n",
		}, "0::/a\n", 0, gib, true},
		{"no cgroup files", map[string]string{}, "0::/a\n", 0, 0, false},
		{"garbage", map[string]string{"a/memory.max": "lots\n"}, "garbage\n0::/a\n", 0, 0, false},
	} {
		root := cgroupTree(t, c.files)
		avail, lim, ok := cgroupMemory(root, c.self)
		if avail != c.avail || lim != c.lim || ok != c.ok {
			t.Errorf("%s: available %d, limit %d, %v; want %d, %d, %v", c.name, avail, lim, ok, c.avail, c.lim, c.ok)
		}
	}
}
