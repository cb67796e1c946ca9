package host

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// cpuModel returns the CPU's name from /proc/cpuinfo text: "model name" on
// x86, else the first of the keys other architectures use.
func cpuModel(r io.Reader) string {
	found := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if _, dup := found[k]; !dup {
			found[k] = v
		}
	}
	for _, k := range []string{"model name", "Model", "cpu model", "Hardware", "cpu"} {
		if v := found[k]; v != "" {
			return v
		}
	}
	return ""
}

// memTotal returns MemTotal in bytes from /proc/meminfo text, 0 if absent.
func memTotal(r io.Reader) int64 {
	return meminfo(r, "MemTotal")[0]
}

// meminfo returns the named fields of /proc/meminfo text in bytes, in the
// order asked, 0 for a field absent or malformed.
func meminfo(r io.Reader, fields ...string) []int64 {
	out := make([]int64, len(fields))
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		for i, name := range fields {
			if f[0] != name+":" {
				continue
			}
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || n < 0 {
				break
			}
			if len(f) >= 3 && f[2] == "kB" {
				if n > math.MaxInt64/1024 {
					break // more bytes than an int64 holds: malformed
				}
				n *= 1024
			}
			out[i] = n
		}
	}
	return out
}

// mount is a line of /proc/self/mountinfo (proc(5)).
type mount struct {
	majMin string // st_dev of the file system, "major:minor"
	root   string // the directory of the file system mounted here
	point  string // the mount point
	fsType string
	source string
	// options are the mount's options and the file system's own (super
	// options), as mount(8) shows them: "rw,relatime,user_id=0,...".
	options string
}

// errMountinfo is a malformed mountinfo line.
var errMountinfo = errors.New("malformed mountinfo line")

// parseMountinfo parses /proc/self/mountinfo text: per line, the mount ID,
// parent ID, major:minor, root, mount point, options, optional fields, a
// "-", the file system type, the source and the super block options. Paths
// have space, tab, newline and backslash escaped as \040, \011, \012 and
// \134.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var ms []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 6 || sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("host: mountinfo:%d: %q: %w", n, line, errMountinfo)
		}
		ms = append(ms, mount{
			majMin:  f[2],
			root:    unescape(f[3]),
			point:   unescape(f[4]),
			fsType:  f[sep+1],
			source:  unescape(f[sep+2]),
			options: joinOptions(f[5], f[sep+3:]),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("host: mountinfo: %w", err)
	}
	return ms, nil
}

// joinOptions joins a mount's options and its super options, without
// repeating one the mount already has.
func joinOptions(mountOpts string, super []string) string {
	opts := strings.Split(mountOpts, ",")
	if len(super) > 0 {
		for _, o := range strings.Split(super[0], ",") {
			if o != "" && !slices.Contains(opts, o) {
				opts = append(opts, o)
			}
		}
	}
	return unescape(strings.Join(opts, ","))
}

// unescape undoes the kernel's octal escapes (\NNN) in a mountinfo field.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// findMount returns the mount holding the absolute, symlink-free path: the
// one with the longest mount point that is path or a parent of it, the
// last listed among equals (a later mount hides an earlier one on the same
// point).
func findMount(ms []mount, path string) (mount, bool) {
	best, found := mount{}, false
	for _, m := range ms {
		if !under(path, m.point) {
			continue
		}
		if !found || len(m.point) >= len(best.point) {
			best, found = m, true
		}
	}
	return best, found
}

// under reports whether path is dir or lies below it, comparing whole
// path elements.
func under(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// deviceModel names the disk behind block device majMin from sysfs under
// sys: the model, else the vendor and the driver. It walks from a partition
// to its disk and from a device-mapper or md device to its first
// component.
func deviceModel(sys, majMin string) string {
	dir, err := filepath.EvalSymlinks(filepath.Join(sys, "dev", "block", majMin))
	if err != nil {
		return ""
	}
	for range 8 { // a bound on dm-on-md-on-partition chains
		if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
			dir = filepath.Dir(dir)
			continue
		}
		if dev := filepath.Join(dir, "device"); exists(dev) {
			if m := readTrim(filepath.Join(dev, "model")); m != "" {
				return m
			}
			vendor := readTrim(filepath.Join(dev, "vendor"))
			driver := ""
			if d, err := os.Readlink(filepath.Join(dev, "driver")); err == nil {
				driver = filepath.Base(d)
			}
			return strings.TrimSpace(vendor + " " + driver)
		}
		slaves, err := os.ReadDir(filepath.Join(dir, "slaves"))
		if err != nil || len(slaves) == 0 {
			return ""
		}
		names := make([]string, len(slaves))
		for i, s := range slaves {
			names[i] = s.Name()
		}
		sort.Strings(names)
		if dir, err = filepath.EvalSymlinks(filepath.Join(dir, "slaves", names[0])); err != nil {
			return ""
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// readTrim returns the contents of a small sysfs file without surrounding
// space, "" if it cannot be read.
func readTrim(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// fsMagic names the file systems by their statfs f_type (linux/magic.h).
var fsMagic = map[int64]string{
	0xEF53:     "ext4", // ext2, ext3 and ext4 share it
	0x58465342: "xfs",
	0x9123683E: "btrfs",
	0x01021994: "tmpfs",
	0x794C7630: "overlay",
	0x6969:     "nfs",
	0xFF534D42: "cifs",
	0x2FC12FC1: "zfs",
	0xF2F52010: "f2fs",
	0x65735546: "fuse",
	0x858458F6: "ramfs",
	0x0BD00BD0: "lustre",
	0x47504653: "gpfs",
	0x19830326: "beegfs",
	0x00C36400: "ceph",
	0x4D44:     "vfat",
	0x5346544E: "ntfs",
	0x2011BAB0: "exfat",
	0x9FA0:     "proc",
	0x62656572: "sysfs",
}
