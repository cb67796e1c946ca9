package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kvbench/kvbench/internal/host/hosttest"
)

// fullTmpfs mounts a tmpfs of 64 KiB (mountTmpfs) and fills it, so that
// every write there fails with ENOSPC.
func fullTmpfs(t *testing.T) string {
	t.Helper()
	dir := hosttest.Tmpfs(t, "64k")
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return dir
		}
	}
}

// TestOutputsNameFullFileSystem: each output kvtrace writes (the trace,
// the statistics of --output, an export's files) on a full file system
// fails with an error that names that file system (its type, mount point,
// free and total bytes), as kvreplay's errors do. They named the path
// alone, and left the user to find which device had filled.
func TestOutputsNameFullFileSystem(t *testing.T) {
	mnt := fullTmpfs(t)
	tmp := t.TempDir()
	tr := filepath.Join(tmp, "run.csv")
	sim := []string{"--num-users", "2", "--duration", "5", "--gpu-mem-gb", "0", "--cpu-mem-gb", "0"}
	if _, stderr, code := runKvtrace(t, append(sim, "-o", tr)...); code != 0 {
		t.Fatalf("kvtrace: exit %d: %s", code, stderr)
	}
	space := "tmpfs on " + mnt + ": 0 B free of 64.00 KiB"
	named := "no space left on device (" + space + ")"
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"trace", append(sim, "-o", filepath.Join(mnt, "run.csv")), 1, named},
		{"--output", append(sim, "-o", filepath.Join(tmp, "b.csv"), "--output", filepath.Join(mnt, "stats.json")), 1, named},
		{"--latency-dump", append(sim, "-o", filepath.Join(tmp, "c.csv"), "--latency-dump", filepath.Join(mnt, "lat.jsonl")), 1, named},
		{"export sai3", []string{"export", "--to", "sai3", "-o", filepath.Join(mnt, "sai3"), tr}, 1, named},
		// A full OUTDIR (0 bytes free) was taken for one whose free
		// space is unknown: the export wrote until ENOSPC (exit 1).
		{"export fio", []string{"export", "--to", "fio", "--dir", tmp, "-o", filepath.Join(mnt, "fio"), tr}, 2,
			"in " + filepath.Join(mnt, "fio") + " and its file system is full (" + space + "): make room there, or give another --output"},
		{"export fio stdin", []string{"export", "--to", "fio", "--dir", tmp, "-o", filepath.Join(mnt, "fio"), "-"}, 2,
			"its file system is full (" + space + ")"},
		{"export fio --dir", []string{"export", "--to", "fio", "--dir", filepath.Join(mnt, "data"), "-o", filepath.Join(tmp, "fio"), tr}, 2,
			"in " + filepath.Join(mnt, "data") + " (Tier-2 "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var stderr string
			if tt.args[len(tt.args)-1] == "-" {
				code, stderr = runKvtraceStdin(t, tr, tt.args...)
			} else {
				_, stderr, code = runKvtrace(t, tt.args...)
			}
			if code != tt.code || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "tmpfs on") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d, %q and the full file system named once", code, stderr, tt.code, tt.want)
			}
			if entries, _ := os.ReadDir(mnt); len(entries) != 1 {
				t.Errorf("%d entries left in %s, want the filler alone", len(entries), mnt)
			}
		})
	}
}

// runKvtraceStdin is runKvtrace with standard input read from the file at
// path; it returns the exit status and stderr.
func runKvtraceStdin(t *testing.T, path string, args ...string) (int, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	_, stderr, code := runKvtrace(t, args...)
	return code, stderr
}

// TestExportBufferedOnTmpfs: a job whose --dir is on tmpfs does buffered
// I/O (direct=0), as kvreplay does there (its files are the page cache,
// with no device behind O_DIRECT), and says so; its kvreplay line has
// --buffered. The job asked for direct=1, which fio before Linux 6.6
// refuses on tmpfs, and which is not what kvreplay measured there.
func TestExportBufferedOnTmpfs(t *testing.T) {
	mnt := hosttest.Tmpfs(t, "64m")
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--dir", filepath.Join(mnt, "kv"), "--size-scale", "1/4096", "-o", out, refU10)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, traceBase(refU10)+".fio"))
	if err != nil {
		t.Fatal(err)
	}
	if job := string(b); !strings.Contains(job, "\ndirect=0\n") || !strings.Contains(job, " --buffered ") ||
		!strings.Contains(stderr, "kvtrace: export: --buffered: "+mnt+" is on tmpfs, a memory file system, where kvreplay does buffered I/O") {
		t.Errorf("stderr %s\njob:\n%s", stderr, job)
	}
}
