//go:build linux

package host

import (
	"strings"
	"testing"
)

func TestMajMin(t *testing.T) {
	// makedev as glibc encodes it: minor's low 8 bits, major's low 12
	// bits, then minor's and major's high bits.
	makedev := func(major, minor uint64) uint64 {
		return minor&0xff | (major&0xfff)<<8 | (minor&^0xff)<<12 | (major&^0xfff)<<32
	}
	for _, c := range []struct {
		major, minor uint64
		want         string
	}{
		{8, 1, "8:1"}, {259, 3, "259:3"}, {254, 0, "254:0"}, {0, 45, "0:45"},
		{4096, 1 << 19, "4096:524288"},
	} {
		if got := majMin(makedev(c.major, c.minor)); got != c.want {
			t.Errorf("majMin(makedev(%d, %d)) = %s, want %s", c.major, c.minor, got, c.want)
		}
	}
}

func TestStatfsFallback(t *testing.T) {
	if got := statfsType("/proc"); got != "proc" && got != "0x9fa0" {
		t.Errorf("statfsType(/proc) = %q", got)
	}
	if got := statfsType("/no/such/path"); got != "" {
		t.Errorf("statfsType of a missing path = %q, want empty", got)
	}
	if got := deviceNumber("/"); got == "" {
		t.Error("no device number for /")
	}
}

// TestSpaceOf: the file system that holds a path, and one that does not
// exist yet (its nearest existing parent), is named with its type, a
// mount point above the path, and its free and total bytes, as df shows
// them.
func TestSpaceOf(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, dir + "/not/yet"} {
		sp := SpaceOf(p)
		if sp.FileSystem == "" || sp.MountPoint == "" || sp.Total <= 0 || sp.Free < 0 || sp.Free > sp.Total {
			t.Errorf("SpaceOf(%s) = %+v: want a type, a mount point, 0 <= free <= total", p, sp)
		}
		if resolved := resolve(p); sp.MountPoint != "/" && !strings.HasPrefix(resolved+"/", sp.MountPoint+"/") {
			t.Errorf("SpaceOf(%s): mount point %s is not above %s", p, sp.MountPoint, resolved)
		}
	}
	if sp := SpaceOf(""); sp.FileSystem == "" {
		t.Errorf(`SpaceOf("") = %+v: want the working directory's`, sp)
	}
}
