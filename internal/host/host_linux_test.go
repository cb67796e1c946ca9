//go:build linux

package host

import "testing"

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
