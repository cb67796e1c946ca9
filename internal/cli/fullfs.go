package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/kvbench/kvbench/internal/host"
)

// DescribeSpace words sp for a message: "ext4 on /mnt/nvme
// (/dev/nvme0n1p2): 12.00 KiB free of 1.75 TiB"; what is unknown is left
// out. Every tool names a file system so, in an error of a full one and
// beside a refusal for want of space.
func DescribeSpace(sp host.Space) string {
	var b strings.Builder
	b.WriteString(cmp.Or(sp.FileSystem, "file system of unknown type"))
	if sp.MountPoint != "" {
		b.WriteString(" on " + sp.MountPoint)
	}
	if sp.Device != "" {
		b.WriteString(" (" + sp.Device + ")")
	}
	if sp.Free >= 0 && sp.Total >= 0 {
		b.WriteString(": " + FormatBytes(sp.Free) + " free of " + FormatBytes(sp.Total))
	}
	return b.String()
}

// DescribePath is DescribeSpace of the file system that holds path, or
// will hold it once made (host.SpaceOf), now.
func DescribePath(path string) string { return DescribeSpace(host.SpaceOf(path)) }

// FullFileSystem returns err, and where it is a full file system's
// (ENOSPC, EDQUOT), err naming the one that holds path and how full it is
// now (DescribePath), as in "no space left on device (tmpfs on /mnt/kv: 0
// B free of 4.00 MiB)": a path alone left the user to find which device
// had filled. An empty path (a raw block device) adds nothing, and neither
// does an error that names its file system already. The result wraps err:
// errors.Is and errors.As see through it.
func FullFileSystem(path string, err error) error {
	if path == "" || !full(err) {
		return err
	}
	if _, named := errors.AsType[*fullError](err); named {
		return err
	}
	return &fullError{err: err, space: DescribePath(path)}
}

// NameFullFileSystem is FullFileSystem for the file err names: the path
// of the *fs.PathError in its chain (an output a tool was writing when its
// file system filled). An error without one, or whose path is a device
// (a raw block device is full at its end, and has no file system), is
// returned as it is.
func NameFullFileSystem(err error) error {
	if !full(err) {
		return err
	}
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok {
		return err
	}
	return fullAt(pe.Path, err)
}

// fullAt is FullFileSystem for an error of the file at path, unless path
// is a device.
func fullAt(path string, err error) error {
	if !full(err) {
		return err
	}
	if fi, serr := os.Stat(path); serr == nil && fi.Mode()&fs.ModeDevice != 0 {
		return err
	}
	return FullFileSystem(path, err)
}

// full reports whether err is a full file system's.
func full(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT))
}

// fullError is an error of a full file system that names it.
type fullError struct {
	err   error
	space string
}

func (e *fullError) Error() string { return fmt.Sprintf("%v (%s)", e.err, e.space) }
func (e *fullError) Unwrap() error { return e.err }
