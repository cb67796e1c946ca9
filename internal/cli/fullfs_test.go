package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestNameFullFileSystem: a full file system's error (ENOSPC, EDQUOT) of
// a file names the file system that holds the file, once, however often
// it is named again on its way up (UnwrapPath, the tool's Main); other
// errors, errors without a file, and a device's (no file system) are left
// as they are.
//
// The free bytes are read anew for each error, and other tests write to
// the same file system meanwhile: the messages are compared with them
// left out (sameBut).
func TestNameFullFileSystem(t *testing.T) {
	dir := t.TempDir()
	space := "(" + DescribePath(dir) + ")"
	free := regexp.MustCompile(`[0-9.]+ [KMGTPE]?i?B free of `)
	sameBut := func(a, b string) bool {
		return free.ReplaceAllString(a, "N free of ") == free.ReplaceAllString(b, "N free of ")
	}
	if !strings.Contains(space, " free of ") {
		t.Fatalf("DescribePath(%s) = %s: want its free and total bytes", dir, space)
	}
	full := &fs.PathError{Op: "write", Path: dir + "/out.csv", Err: syscall.ENOSPC}
	named := NameFullFileSystem(fmt.Errorf("trace: %w", full))
	if got := named.Error(); !sameBut(got, "trace: write "+dir+"/out.csv: no space left on device "+space) {
		t.Errorf("named: %q", got)
	}
	if !errors.Is(named, syscall.ENOSPC) {
		t.Error("the named error is not ENOSPC")
	}
	again := NameFullFileSystem(fmt.Errorf("kvtrace: %w", named))
	if strings.Count(again.Error(), " free of ") != 1 {
		t.Errorf("named twice: %q", again)
	}
	if got := fmt.Errorf("-o %s: %w", full.Path, UnwrapPath(full)).Error(); !sameBut(got, "-o "+full.Path+": no space left on device "+space) {
		t.Errorf("UnwrapPath: %q", got)
	}
	quota := NameFullFileSystem(&fs.PathError{Op: "write", Path: dir, Err: syscall.EDQUOT})
	if !sameBut(quota.Error(), "write "+dir+": disk quota exceeded "+space) {
		t.Errorf("EDQUOT: %q", quota)
	}
	for _, err := range []error{
		nil,
		&fs.PathError{Op: "write", Path: dir, Err: syscall.EIO},
		fmt.Errorf("pipe: %w", syscall.ENOSPC),
		&fs.PathError{Op: "write", Path: "/dev/null", Err: syscall.ENOSPC},
	} {
		if got := NameFullFileSystem(err); got != err {
			t.Errorf("NameFullFileSystem(%v) = %v, want it unchanged", err, got)
		}
	}
	if got := FullFileSystem("", full); got != error(full) {
		t.Errorf(`FullFileSystem("", ENOSPC) = %v, want it unchanged`, got)
	}
}
