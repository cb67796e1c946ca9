package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/host"
)

// fakeDrive makes export's probe of --dir find d, and counts the probes.
func fakeDrive(t *testing.T, d host.DirectIO) *int {
	t.Helper()
	calls := new(int)
	t.Cleanup(func() { probeDirectIO = host.ProbeDirectIO })
	probeDirectIO = func(string) host.DirectIO {
		*calls++
		return d
	}
	return calls
}

// jobIOAligned reports whether every I/O line of the iolog at path is
// aligned to align, in offset and length.
func jobIOAligned(t *testing.T, path string, align int64) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) != 5 {
			continue
		}
		off, _ := strconv.ParseInt(fl[3], 10, 64)
		length, _ := strconv.ParseInt(fl[4], 10, 64)
		if off%align != 0 || length%align != 0 {
			return false
		}
		n++
	}
	return n > 0
}

// TestExportTakesTheDrive: a job for --dir on this machine is aligned as
// kvreplay aligns objects there (the file system's direct-I/O alignment,
// where above 4KiB), and does buffered I/O where kvreplay does (a file
// system that refuses O_DIRECT, where fio's direct=1 fails), unless
// --align or --buffered say otherwise; the job's kvreplay line then
// matches, and stderr says what was taken. Export aligned to 4KiB unless
// told, so on a drive of 16KiB the job's I/O was not kvreplay's (and
// failed under direct I/O). A job for another machine (--no-space-check)
// takes nothing from this one.
func TestExportTakesTheDrive(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	args := func(extra ...string) []string {
		return append(append([]string{"export", "--to", "fio", "--dir", filepath.Join(dir, "data"), "--size-scale", "1/4096", "-o", out}, extra...), refU10)
	}
	job := filepath.Join(out, traceBase(refU10)+".fio")
	iolog := filepath.Join(out, traceBase(refU10)+".tier2.iolog")

	calls := fakeDrive(t, host.DirectIO{Known: true, FileSystem: "xfs", Align: 16 << 10})
	_, stderr, code := runKvtrace(t, args()...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(job)
	if *calls != 1 || !strings.Contains(stderr, "kvtrace: export: --align 16KiB: the direct-I/O alignment of "+dir+" (xfs)") ||
		!strings.Contains(string(b), "objects are aligned to 16384 bytes") || !jobIOAligned(t, iolog, 16<<10) || !strings.Contains(string(b), "direct=1") {
		t.Errorf("a drive of 16KiB (%d probes): stderr %s\njob:\n%s", *calls, stderr, b)
	}

	// --align given is the user's: taken, with a warning where it is
	// below the drive's.
	_, stderr, code = runKvtrace(t, args("--align", "4KiB")...)
	b, _ = os.ReadFile(job)
	if code != 0 || !strings.Contains(stderr, "kvtrace: export: warning: --align 4KiB is below the direct-I/O alignment of "+dir+" (xfs), 16KiB") ||
		!strings.Contains(string(b), "objects are aligned to 4096 bytes") {
		t.Errorf("--align 4KiB on a drive of 16KiB: exit %d, stderr %s\njob:\n%s", code, stderr, b)
	}

	// A block size below the drive's alignment cannot be aligned.
	_, stderr, code = runKvtrace(t, args("--block-size", "8KiB")...)
	if code != 2 || !strings.Contains(stderr, "kvtrace: --dir "+filepath.Join(dir, "data")+": the direct-I/O alignment of "+dir+" (xfs) is 16KiB, above --block-size 8KiB") {
		t.Errorf("--block-size 8KiB on a drive of 16KiB: exit %d, stderr %s", code, stderr)
	}

	// A file system that refuses O_DIRECT: buffered, as kvreplay.
	fakeDrive(t, host.DirectIO{Known: true, FileSystem: "fuse", Align: 4096, Refused: true})
	_, stderr, code = runKvtrace(t, args()...)
	b, _ = os.ReadFile(job)
	if code != 0 || !strings.Contains(stderr, "kvtrace: export: --buffered: "+dir+" (fuse) refuses O_DIRECT") ||
		!strings.Contains(string(b), "direct=0") || !strings.Contains(string(b), " --buffered ") {
		t.Errorf("a file system without O_DIRECT: exit %d, stderr %s\njob:\n%s", code, stderr, b)
	}

	// Another machine's job.
	calls = fakeDrive(t, host.DirectIO{Known: true, FileSystem: "xfs", Align: 16 << 10, Refused: true})
	_, stderr, code = runKvtrace(t, args("--no-space-check")...)
	b, _ = os.ReadFile(job)
	if code != 0 || *calls != 0 || !strings.Contains(string(b), "objects are aligned to 4096 bytes") || !strings.Contains(string(b), "direct=1") {
		t.Errorf("--no-space-check: %d probes, exit %d, stderr %s\njob:\n%s", *calls, code, stderr, b)
	}
}
