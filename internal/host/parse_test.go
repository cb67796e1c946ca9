package host

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mountinfoFixture is mountinfo text with escaped paths, optional fields
// of every count, a bind mount and two mounts stacked on one point.
const mountinfoFixture = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
30 27 0:27 / /tmp rw,nosuid,nodev shared:5 master:1 - tmpfs tmpfs rw,size=8g
31 27 259:3 / /mnt/fast\040disk rw,relatime shared:7 - xfs /dev/nvme1n1 rw,attr2,inode64
32 27 259:3 /sub /srv/bind rw,relatime - xfs /dev/nvme1n1 rw
33 27 0:40 / /mnt/back\134slash\011tab rw - nfs4 server:/export\040dir rw,vers=4.2
34 27 0:41 / /data rw - ext4 /dev/sda1 rw
35 27 0:42 / /data rw - overlay overlay rw,lowerdir=/a
`

func TestParseMountinfo(t *testing.T) {
	ms, err := parseMountinfo(strings.NewReader(mountinfoFixture))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 8 {
		t.Fatalf("%d mounts, want 8", len(ms))
	}
	want := []mount{
		{"0:21", "/", "/proc", "proc", "proc", "rw,relatime"},
		{"259:2", "/", "/", "ext4", "/dev/nvme0n1p2", "rw,relatime,errors=remount-ro"},
		{"0:27", "/", "/tmp", "tmpfs", "tmpfs", "rw,nosuid,nodev,size=8g"},
		{"259:3", "/", "/mnt/fast disk", "xfs", "/dev/nvme1n1", "rw,relatime,attr2,inode64"},
		{"259:3", "/sub", "/srv/bind", "xfs", "/dev/nvme1n1", "rw,relatime"},
		{"0:40", "/", "/mnt/back\\slash\ttab", "nfs4", "server:/export dir", "rw,vers=4.2"},
	}
	for i, w := range want {
		if ms[i] != w {
			t.Errorf("line %d: %+v, want %+v", i+1, ms[i], w)
		}
	}
}

func TestParseMountinfoErrors(t *testing.T) {
	for _, bad := range []string{
		"22 27 0:21 / /proc rw,relatime proc proc rw\n", // no separator
		"22 27 0:21 / /proc rw - proc\n",                // no source
		"22 27\n",
	} {
		if _, err := parseMountinfo(strings.NewReader(bad)); !errors.Is(err, errMountinfo) {
			t.Errorf("%q: err = %v, want errMountinfo", bad, err)
		}
	}
	if ms, err := parseMountinfo(strings.NewReader("\n")); err != nil || len(ms) != 0 {
		t.Errorf("blank text: %v, %v", ms, err)
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:        "/plain",
		`/a\040b`:       "/a b",
		`/a\040\040b`:   "/a  b",
		`\134`:          `\`,
		`/new\012line`:  "/new\nline",
		`/not\08octal`:  `/not\08octal`,
		`/short\04`:     `/short\04`,
		`/trailing\`:    `/trailing\`,
		`/utf\303\251`:  "/utf\u00e9",
		`/high\377byte`: "/high\xffbyte",
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFindMount(t *testing.T) {
	ms, err := parseMountinfo(strings.NewReader(mountinfoFixture))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/":                     "/",
		"/home/me":              "/",
		"/tmp":                  "/tmp",
		"/tmp/kv/x":             "/tmp",
		"/tmpfoo":               "/", // a mount point matches whole elements
		"/mnt/fast disk/objs":   "/mnt/fast disk",
		"/mnt/fast":             "/",
		"/srv/bind/a":           "/srv/bind",
		"/mnt/back\\slash\ttab": "/mnt/back\\slash\ttab",
	} {
		m, ok := findMount(ms, path)
		if !ok || m.point != want {
			t.Errorf("findMount(%q) = %q, %v; want %q", path, m.point, ok, want)
		}
	}
	if m, _ := findMount(ms, "/data/x"); m.fsType != "overlay" {
		t.Errorf("stacked mounts: got %s, want the later overlay", m.fsType)
	}
	if _, ok := findMount(ms[:1], "/home"); ok {
		t.Error("found a mount for a path no mount point holds")
	}
}

func TestCPUModel(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n", "Intel(R) Xeon(R) Platinum 8480+"},
		{"raspberry", "processor\t: 0\nBogoMIPS\t: 108.00\n\nHardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n", "Raspberry Pi 4 Model B Rev 1.4"},
		{"power", "processor\t: 0\ncpu\t\t: POWER9 (raw), altivec supported\n", "POWER9 (raw), altivec supported"},
		{"arm server", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", ""},
		{"empty", "", ""},
	} {
		if got := cpuModel(strings.NewReader(c.text)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestMemTotal(t *testing.T) {
	if got := memTotal(strings.NewReader("MemTotal:       131072000 kB\nMemFree: 1 kB\n")); got != 131072000*1024 {
		t.Errorf("memTotal = %d", got)
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: lots kB\n"} {
		if got := memTotal(strings.NewReader(bad)); got != 0 {
			t.Errorf("memTotal(%q) = %d, want 0", bad, got)
		}
	}
}

func TestMeminfo(t *testing.T) {
	text := "MemTotal:       24000000 kB\nMemFree: 1 kB\nMemAvailable:   20000000 kB\n"
	got := meminfo(strings.NewReader(text), "MemAvailable", "MemTotal", "SwapTotal")
	if got[0] != 20000000*1024 || got[1] != 24000000*1024 || got[2] != 0 {
		t.Errorf("meminfo = %v", got)
	}
	if a, tot := Memory(); tot <= 0 || a < 0 || a > tot {
		t.Errorf("Memory() = %d available of %d", a, tot)
	}
}

// fakeSys builds a sysfs tree under a temporary directory: an NVMe disk
// with a model and a partition, a virtio disk with only a vendor and a
// driver, and a device-mapper volume on the NVMe partition.
func fakeSys(t testing.TB) string {
	t.Helper()
	sys := t.TempDir()
	mk := func(p, contents string) {
		t.Helper()
		p = filepath.Join(sys, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		name = filepath.Join(sys, name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	nvme := "devices/pci0000:00/0000:00:04.0/nvme/nvme0"
	mk(nvme+"/model", "Samsung SSD 990 PRO 2TB                 \n")
	mk(nvme+"/nvme0n1/dev", "259:0\n")
	link("../../nvme0", nvme+"/nvme0n1/device")
	mk(nvme+"/nvme0n1/nvme0n1p1/partition", "1\n")
	vda := "devices/pci0000:00/0000:00:02.0/virtio1"
	mk(vda+"/vendor", "0x1af4\n")
	mk("bus/virtio/drivers/virtio_blk/bind", "")
	link("../../../../bus/virtio/drivers/virtio_blk", vda+"/driver")
	mk(vda+"/block/vda/dev", "254:0\n")
	link("../..", vda+"/block/vda/device")
	mk("devices/virtual/block/dm-0/dev", "253:0\n")
	link("../../../../../"+nvme+"/nvme0n1/nvme0n1p1", "devices/virtual/block/dm-0/slaves/nvme0n1p1")
	mk("devices/virtual/block/loop0/dev", "7:0\n")

	link("../../"+nvme+"/nvme0n1", "dev/block/259:0")
	link("../../"+nvme+"/nvme0n1/nvme0n1p1", "dev/block/259:1")
	link("../../"+vda+"/block/vda", "dev/block/254:0")
	link("../../devices/virtual/block/dm-0", "dev/block/253:0")
	link("../../devices/virtual/block/loop0", "dev/block/7:0")
	return sys
}

func TestDeviceModel(t *testing.T) {
	sys := fakeSys(t)
	for dev, want := range map[string]string{
		"259:0": "Samsung SSD 990 PRO 2TB",
		"259:1": "Samsung SSD 990 PRO 2TB", // partition -> disk
		"253:0": "Samsung SSD 990 PRO 2TB", // dm -> partition -> disk
		"254:0": "0x1af4 virtio_blk",       // no model: vendor and driver
		"7:0":   "",                        // a loop device has no hardware
		"0:27":  "",                        // tmpfs has no sysfs entry
	} {
		if got := deviceModel(sys, dev); got != want {
			t.Errorf("deviceModel(%s) = %q, want %q", dev, got, want)
		}
	}
}
