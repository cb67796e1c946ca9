package host

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// escapeField writes s as the kernel writes a mountinfo path, and more:
// every byte that could end a field or a line (ASCII space, any byte of a
// multi-byte rune, which may be a Unicode space) and the backslash as
// \NNN.
func escapeField(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '\\' || c >= 0x7f {
			fmt.Fprintf(&b, `\%03o`, c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FuzzParseMountinfo: a mount table read has one mount per line that is
// not blank, each with a device number, a mount point, a type and a
// source; written back as the kernel writes it (paths escaped, the
// options of the mount and its super block in one field), it reads the
// same; a refusal is one line naming the line, and wraps errMountinfo.
func FuzzParseMountinfo(f *testing.F) {
	f.Add(mountinfoFixture)
	for _, s := range []string{
		"", "\n\n", "22 27 0:21 / /proc rw,relatime proc proc rw\n", "22 27 0:21 / /proc rw - proc\n", "22 27\n",
		"36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n",
		"1 2 3:4 / / rw - - - -\n", "1 2 3:4 / /a rw - x y\r\n", "1 2 3:4 \\ \\\\ \\1 - x \\777\n",
		"1 2 3:4 / /a\u00a0b rw - x y\n", "1 2 3:4 / /a rw shared:1 shared:2 - x y rw,rw,ro z\n",
		"1 2 3:4 / /a rw,,x - t s ,,\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ms, err := parseMountinfo(strings.NewReader(text))
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "host: mountinfo") {
				t.Fatalf("error %q is not one line naming mountinfo", msg)
			}
			if !errors.Is(err, errMountinfo) && !strings.Contains(msg, "too long") {
				t.Fatalf("error %q: not errMountinfo", msg)
			}
			return
		}
		lines := 0
		for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(ms) != lines {
			t.Fatalf("%d mounts from %d lines", len(ms), lines)
		}
		var b strings.Builder
		for i, m := range ms {
			if m.majMin == "" || m.point == "" || m.fsType == "" || m.source == "" || m.root == "" {
				t.Fatalf("mount %d: %+v has an empty field", i, m)
			}
			fmt.Fprintf(&b, "%d 1 %s %s %s %s - %s %s\n", i+2, m.majMin, escapeField(m.root), escapeField(m.point),
				escapeField(m.options), m.fsType, escapeField(m.source))
		}
		again, err := parseMountinfo(strings.NewReader(b.String()))
		if err != nil || !slices.Equal(again, ms) {
			t.Fatalf("mounts %+v written as\n%s\nread %+v, %v", ms, b.String(), again, err)
		}
	})
}

// refMeminfo is meminfo as proc(5) describes it: the last line "Name:
// value [kB]" of each field whose value is a number of bytes an int64
// holds, 0 when there is none.
func refMeminfo(text string, fields []string) []int64 {
	out := make([]int64, len(fields))
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		for i, name := range fields {
			if f[0] != name+":" {
				continue
			}
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || n < 0 {
				continue
			}
			if len(f) >= 3 && f[2] == "kB" {
				if n > math.MaxInt64/1024 {
					continue
				}
				n *= 1024
			}
			out[i] = n
		}
	}
	return out
}

// FuzzMeminfo: the fields read from /proc/meminfo text are what proc(5)
// says they are (refMeminfo), never negative, and MemTotal is memTotal's.
func FuzzMeminfo(f *testing.F) {
	f.Add("MemTotal:       32768000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\nHugePages_Total:       0\n")
	for _, s := range []string{
		"", "MemTotal: 5\n", "MemTotal: -5 kB\n", "MemTotal: x kB\nMemTotal: 7 kB\n", "MemTotal: 7 kB\nMemTotal: x kB\n",
		"MemTotal: 9007199254740993 kB\n", "MemTotal: 9223372036854775807\n", "MemTotal: 9223372036854775808 kB\n",
		"MemTotal:\n", "MemTotal 5 kB\n", "MemAvailable: 1 MB\n", "  MemTotal:   12   kB  extra\n", "MemTotal: +5 kB\n",
	} {
		f.Add(s)
	}
	fields := []string{"MemTotal", "MemAvailable", "HugePages_Total"}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "\r") || slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return len(l) >= 64<<10 }) {
			t.Skip("a line meminfo never has") // the Scanner's line rules, not proc(5)'s
		}
		got := meminfo(strings.NewReader(text), fields...)
		want := refMeminfo(text, fields)
		if !slices.Equal(got, want) {
			t.Fatalf("meminfo(%q) = %v, want %v", text, got, want)
		}
		for i, n := range got {
			if n < 0 {
				t.Fatalf("meminfo(%q): %s = %d", text, fields[i], n)
			}
		}
		if mt := memTotal(strings.NewReader(text)); mt != got[0] {
			t.Fatalf("memTotal(%q) = %d, meminfo's MemTotal %d", text, mt, got[0])
		}
	})
}

// FuzzCPUModel: the CPU's name from /proc/cpuinfo text is the first
// non-empty value of the first of the architectures' keys that has one,
// trimmed, on one line; "" when no key has one.
func FuzzCPUModel(f *testing.F) {
	f.Add("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n")
	for _, s := range []string{
		"", "processor : 0\nBogoMIPS : 50.00\nCPU implementer : 0x41\n\nHardware : BCM2835\nModel : Raspberry Pi 4\n",
		"cpu : POWER9 (raw), altivec supported\n", "cpu model : R4000\n", "model name :\nmodel name : second\n",
		"model name: a: b\n", "Model : m\nmodel name : x\n", ":\n", "model name\t:   spaced   \r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if slices.ContainsFunc(strings.Split(text, "\n"), func(l string) bool { return len(l) >= 64<<10 }) {
			t.Skip("a line cpuinfo never has")
		}
		got := cpuModel(strings.NewReader(text))
		if strings.ContainsAny(got, "\n") || got != strings.TrimSpace(got) {
			t.Fatalf("cpuModel(%q) = %q, not one trimmed line", text, got)
		}
		want := ""
		lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	keys:
		for _, key := range []string{"model name", "Model", "cpu model", "Hardware", "cpu"} {
			for _, l := range lines {
				k, v, ok := strings.Cut(l, ":")
				if ok && strings.TrimSpace(k) == key && strings.TrimSpace(v) != "" {
					want = strings.TrimSpace(v)
					break keys
				}
			}
		}
		if got != want {
			t.Fatalf("cpuModel(%q) = %q, want %q", text, got, want)
		}
	})
}

// FuzzRedactArgs: a gateway's command line (/proc/PID/cmdline) shown in
// a result keeps every argument but the values of credential-like
// options: no such value survives in any of the three forms gateways take
// (--name=value, --name value, -o name=value,...), and an argument not
// redacted is unchanged.
func FuzzRedactArgs(f *testing.F) {
	for _, s := range []string{
		"s3fs\x00kvb\x00/mnt/s3\x00-o\x00url=http://x,passwd_file=/etc/p,use_path_request_style",
		"goofys\x00--access-key=AKIA\x00--secret-key\x00abc\x00bucket\x00/mnt",
		"rclone\x00mount\x00--s3-session-token\x00tok\x00-o\x00secret=1,key_id=2\x00x",
		"x\x00--token\x00--other", "x\x00-o\x00", "\x00\x00", "x\x00--password=\x00-o\x00=,a=,token=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmdline string) {
		args := strings.Split(cmdline, "\x00")
		out := RedactArgs(args)
		if len(out) != len(args) {
			t.Fatalf("RedactArgs(%q) = %q: %d arguments, want %d", args, out, len(out), len(args))
		}
		for i, a := range args {
			name, _, eq := strings.Cut(a, "=")
			switch {
			case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && isSecret(args[i-1]) && !strings.HasPrefix(a, "-"):
				if out[i] != "REDACTED" {
					t.Fatalf("RedactArgs(%q): the value of %q is %q", args, args[i-1], out[i])
				}
			case strings.HasPrefix(a, "-") && eq && isSecret(name):
				if out[i] != name+"=REDACTED" {
					t.Fatalf("RedactArgs(%q): %q is %q", args, a, out[i])
				}
			case i > 0 && args[i-1] == "-o":
				opts, got := strings.Split(a, ","), strings.Split(out[i], ",")
				if len(got) != len(opts) {
					t.Fatalf("RedactArgs(%q): -o %q is %q", args, a, out[i])
				}
				for j, o := range opts {
					n, _, ok := strings.Cut(o, "=")
					if want := o; ok && isSecret(n) && got[j] != n+"=REDACTED" || !(ok && isSecret(n)) && got[j] != want {
						t.Fatalf("RedactArgs(%q): -o option %q is %q", args, o, got[j])
					}
				}
			default:
				if out[i] != a {
					t.Fatalf("RedactArgs(%q): %q, which holds no credential, is %q", args, a, out[i])
				}
			}
		}
	})
}
