package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/internal/cli"
)

// A block device given as --device with --allow-device is overwritten
// whole. Before that, kvreplay makes sure it holds none of the run's own
// files: the trace (or its sidecar) on a file system of the device, of one
// of its partitions or of a device built on it (device mapper, md), the
// result's directory there, or a loop device whose backing file is one of
// them.

// sysBlock is where sysfs lists block devices by number.
const sysBlock = "/sys/dev/block"

// blockFamily returns the sysfs directories of the block device numbered
// rdev and of every device whose data lies on it: the whole disk of a
// partition, a disk's partitions, and their holders (device mapper, md,
// loop devices do not show here), recursively. sysRoot is /sys/dev/block
// (a test gives a tree of its own).
func blockFamily(sysRoot string, rdev uint64) []string {
	dir, err := filepath.EvalSymlinks(filepath.Join(sysRoot, devName(rdev)))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir) // a partition: its disk and siblings hold it too
	}
	seen := map[string]bool{}
	var out []string
	var walk func(d string)
	walk = func(d string) {
		if seen[d] || len(seen) > 1024 {
			return
		}
		seen[d] = true
		out = append(out, d)
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(d, e.Name(), "partition")); err == nil {
				walk(filepath.Join(d, e.Name()))
			}
		}
		holders, _ := os.ReadDir(filepath.Join(d, "holders"))
		for _, h := range holders {
			if r, err := filepath.EvalSymlinks(filepath.Join(d, "holders", h.Name())); err == nil {
				walk(r)
			}
		}
	}
	walk(dir)
	return out
}

// devName is a device number as sysfs names it: MAJOR:MINOR.
func devName(rdev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
}

// checkBlockDevice refuses the block device dev (its number rdev) when one
// of files (the run's inputs and the result's directory, by flag and
// path) lies on it or on a device of its family (blockFamily), or is the
// backing file of a loop device among them.
func checkBlockDevice(sysRoot, dev string, rdev uint64, files []cli.File) error {
	family := blockFamily(sysRoot, rdev)
	nums := map[string]string{devName(rdev): dev}
	var backing []string
	for _, d := range family {
		if b, err := os.ReadFile(filepath.Join(d, "dev")); err == nil {
			nums[strings.TrimSpace(string(b))] = filepath.Base(d)
		}
		if b, err := os.ReadFile(filepath.Join(d, "loop", "backing_file")); err == nil {
			backing = append(backing, strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)"))
		}
	}
	for _, f := range files {
		if f.Path == "" || f.Path == "-" {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(f.Path, &st) != nil {
			continue
		}
		if name, ok := nums[devName(st.Dev)]; ok {
			return fmt.Errorf("--device %s: %s %s lies on a file system of %s: the replay would overwrite it", dev, f.Flag, f.Path, name)
		}
		for _, b := range backing {
			if cli.SameFile(b, f.Path) {
				return fmt.Errorf("--device %s: a loop device over %s %s (%s): the replay would overwrite it", dev, f.Flag, f.Path, b)
			}
		}
	}
	return nil
}

// runFiles are the files of o a device must not hold: the traces, their
// sidecars and the result's directory.
func runFiles(o *options) []cli.File {
	var files []cli.File
	for _, tr := range o.traces {
		if tr == "-" {
			continue
		}
		files = append(files, cli.File{Flag: "the trace", Path: tr}, cli.File{Flag: "the sidecar", Path: tr + cli.SidecarSuffix})
	}
	if o.output != "" && o.output != "-" {
		files = append(files, cli.File{Flag: "the result's directory", Path: cli.DeepestExisting(filepath.Dir(o.output))})
	}
	return files
}

// rdevOf is the device number of the block device at path.
func rdevOf(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Rdev), nil
}
