package setup

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBlockFamily: the devices that hold a device's data are found in
// sysfs: a partition's disk and siblings, a disk's partitions and their
// holders (device mapper), and a file system on any of them is refused.
func TestBlockFamily(t *testing.T) {
	root := t.TempDir()
	devices := filepath.Join(root, "devices")
	mk := func(rel, dev string, partition bool) string {
		d := filepath.Join(devices, rel)
		if err := os.MkdirAll(filepath.Join(d, "holders"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "dev"), []byte(dev+"\n"), 0o644)
		if partition {
			os.WriteFile(filepath.Join(d, "partition"), []byte("1\n"), 0o644)
		}
		return d
	}
	disk := mk("sdb", "8:16", false)
	p1 := mk("sdb/sdb1", "8:17", true)
	mk("sdb/sdb2", "8:18", true)
	dm := mk("dm-0", "253:0", false)
	if err := os.Symlink(dm, filepath.Join(p1, "holders", "dm-0")); err != nil {
		t.Fatal(err)
	}
	byNum := filepath.Join(root, "block")
	os.MkdirAll(byNum, 0o755)
	for num, d := range map[string]string{"8:16": disk, "8:17": p1, "253:0": dm} {
		os.Symlink(d, filepath.Join(byNum, num))
	}
	got := blockFamily(byNum, uint64(8<<8|17)) // the partition sdb1
	var names []string
	for _, d := range got {
		names = append(names, filepath.Base(d))
	}
	if strings.Join(names, ",") != "sdb,sdb1,dm-0,sdb2" {
		t.Fatalf("family of sdb1 = %v, want sdb, sdb1, dm-0, sdb2", names)
	}
	if got := blockFamily(byNum, uint64(9<<8)); got != nil {
		t.Fatalf("family of an unknown device = %v", got)
	}
}

// TestCheckDevice: --device is never a trace, its sidecar (a hard link to
// it too: --device t.csv.meta.json --device-overwrite replaced the sidecar
// with extent data), the result, a directory or
// a file of data (without --device-overwrite); a new file is fine, and
// without --layout extent there is nothing to check.
func TestCheckDevice(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "t.csv")
	data := filepath.Join(dir, "data")
	for _, f := range []string{tr, data} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "r.json")
	side := tr + ".meta.json"
	if err := os.WriteFile(side, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sideLink := filepath.Join(dir, "side-link")
	if err := os.Link(side, sideLink); err != nil {
		t.Fatal(err)
	}
	// The result file does not exist yet: named through a link to its
	// directory it is still the result.
	dirLink := filepath.Join(t.TempDir(), "dir-link")
	if err := os.Symlink(dir, dirLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Layout: "extent", Device: tr}, "is the trace " + tr},
		{Options{Layout: "extent", Device: out}, "is the result file (-o " + out + ")"},
		{Options{Layout: "extent", Device: filepath.Join(dirLink, "r.json")}, "is the result file (-o " + out + ")"},
		{Options{Layout: "extent", Device: side, DeviceOverwrite: true}, "is the sidecar of the trace " + tr},
		{Options{Layout: "extent", Device: sideLink, DeviceOverwrite: true}, "is the sidecar of the trace " + tr},
		{Options{Layout: "extent", Device: filepath.Join(dir, "u.csv.meta.json")}, ""},
		// Refused before any work (exit 2), not by the backend after the
		// setup (exit 1).
		{Options{Layout: "extent", Device: "/etc/kvbench-test.extent"}, "--device /etc/kvbench-test.extent: refusing a path under the system directory /etc"},
		{Options{Layout: "extent", Device: fifo}, "--device " + fifo + ": a named pipe: want a file or a block device"},
		{Options{Layout: "extent", Device: dir}, "a directory"},
		{Options{Layout: "extent", Device: data}, "an existing file of 1 B: the replay would overwrite it (pass --device-overwrite"},
		{Options{Layout: "extent", Device: data, DeviceOverwrite: true}, ""},
		{Options{Layout: "extent", Device: filepath.Join(dir, "new")}, ""},
		{Options{Layout: "dir", Device: tr}, ""},
	} {
		err := tc.o.CheckDevice([]string{"-", tr}, out)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.o, err, tc.want)
		}
	}
}
