//go:build linux

package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kvbench/kvbench/schema"
)

// These tests run the real fio on what Fio writes. They skip, saying why,
// where fio is missing or older than 3.31 (iolog version 3).

// fioJob is the part of one job of fio's JSON output the tests read.
type fioJob struct {
	Name    string `json:"jobname"`
	Error   int    `json:"error"`
	Runtime int64  `json:"job_runtime"` // milliseconds
	Read    fioDir `json:"read"`
	Write   fioDir `json:"write"`
}

type fioDir struct {
	IOBytes  int64 `json:"io_bytes"`
	TotalIOs int64 `json:"total_ios"`
	ShortIOs int64 `json:"short_ios"`
}

// fioEnv is what the machine's fio can do, probed once.
type fioEnv struct {
	bin    string
	skip   string // why the tests skip, or ""
	engine string // io_uring, else libaio, else psync
}

var (
	fioOnce  sync.Once
	fioProbe fioEnv
)

// needFio returns the fio to run, or skips the test.
func needFio(t *testing.T) fioEnv {
	t.Helper()
	fioOnce.Do(func() { fioProbe = probeFio(t.TempDir()) })
	if fioProbe.skip != "" {
		t.Skip(fioProbe.skip)
	}
	return fioProbe
}

func probeFio(dir string) fioEnv {
	bin, err := exec.LookPath("fio")
	if err != nil {
		return fioEnv{skip: "fio is not on PATH (Debian: apt-get install fio): " + err.Error()}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return fioEnv{skip: "fio --version: " + err.Error()}
	}
	m := regexp.MustCompile(`fio-(\d+)\.(\d+)`).FindSubmatch(out)
	if m == nil {
		return fioEnv{skip: "fio --version: unrecognised " + strconv.Quote(string(out))}
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major < 3 || major == 3 && minor < 31 {
		return fioEnv{skip: "fio " + string(bytes.TrimSpace(out)) + " predates iolog version 3 (fio 3.31)"}
	}
	for _, engine := range []string{"io_uring", "libaio", "psync"} {
		cmd := exec.Command(bin, "--name=probe", "--ioengine="+engine, "--filename="+filepath.Join(dir, "probe"),
			"--size=4k", "--rw=write", "--output-format=json")
		if cmd.Run() == nil {
			return fioEnv{bin: bin, engine: engine}
		}
	}
	return fioEnv{skip: "fio runs no engine of io_uring, libaio or psync here"}
}

// directOK reports whether dir's file system takes O_DIRECT (tmpfs does
// not).
func directOK(t *testing.T, dir string) bool {
	t.Helper()
	fd, err := unix.Open(filepath.Join(dir, ".direct-probe"), unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT, 0o600)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return false
		}
		t.Fatal(err)
	}
	unix.Close(fd)
	return true
}

// runFio runs fio on the job file in dir and returns its jobs by name.
func runFio(t *testing.T, env fioEnv, dir, job string) map[string]fioJob {
	t.Helper()
	outPath := filepath.Join(dir, "fio.json")
	cmd := exec.Command(env.bin, "--output-format=json", "--output="+outPath, job)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fio %s: %v\n%s", job, err, stderr.Bytes())
	}
	out, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	// A synchronous engine with iodepth > 1 prints a note before the JSON.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var doc struct{ Jobs []fioJob }
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("fio's JSON: %v\n%s", err, out)
	}
	jobs := map[string]fioJob{}
	for _, j := range doc.Jobs {
		if j.Error != 0 {
			t.Errorf("fio job %s: error %d\n%s", j.Name, j.Error, stderr.Bytes())
		}
		jobs[j.Name] = j
	}
	if stderr.Len() > 0 {
		t.Logf("fio's stderr: %s", stderr.Bytes())
	}
	return jobs
}

// exportToDisk runs Fio on a trace with its files under dir and returns
// the job file's path and the stats.
func exportToDisk(t *testing.T, env fioEnv, dir, file string, opt FioOptions) (string, FioStats) {
	t.Helper()
	opt.Engine = env.engine
	opt.Buffered = !directOK(t, dir)
	return exportFiles(t, dir, file, opt)
}

// exportFiles runs Fio on a trace with its files under dir, on the engine
// opt names, and returns the job file's path and the stats.
func exportFiles(t *testing.T, dir, file string, opt FioOptions) (string, FioStats) {
	t.Helper()
	opt.Dir = filepath.Join(dir, "data")
	opt.LogPath = func(tier schema.Tier, k LogKind) string { return filepath.Join(dir, LogName("t", tier, k)) }
	opt = opt.withDefaults()
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	logs := func(tier schema.Tier, k LogKind) (io.Writer, error) {
		f, err := os.Create(opt.LogPath(tier, k))
		files = append(files, f)
		return f, err
	}
	var job bytes.Buffer
	st, err := Fio(openTrace(t, file), opt, logs, &job)
	if err != nil {
		t.Fatal(err)
	}
	jobPath := filepath.Join(dir, "t.fio")
	if err := os.WriteFile(jobPath, job.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return jobPath, st
}

// checkFioRun holds fio's reported bytes and I/O counts against the stats
// of every exported tier, and the data files against their sizes.
func checkFioRun(t *testing.T, jobs map[string]fioJob, st FioStats, opt FioOptions) {
	t.Helper()
	for tier := range schema.Tier(schema.NumTiers) {
		s := st.Tier[tier]
		name := "replay-tier" + strconv.Itoa(int(tier))
		j, ok := jobs[name]
		if !s.Exported || s.Ops == 0 {
			if ok {
				t.Errorf("%s: a job for a tier without I/O", name)
			}
			continue
		}
		if !ok {
			t.Fatalf("no job %s in fio's output (jobs %v)", name, jobs)
		}
		if j.Read.IOBytes != s.ReadBytes || j.Write.IOBytes != s.WriteBytes {
			t.Errorf("%s: fio read %d and wrote %d bytes, the export %d and %d", name, j.Read.IOBytes, j.Write.IOBytes, s.ReadBytes, s.WriteBytes)
		}
		if j.Read.TotalIOs != s.ReadOps || j.Write.TotalIOs != s.WriteOps || j.Read.ShortIOs != 0 || j.Write.ShortIOs != 0 {
			t.Errorf("%s: fio did %d reads and %d writes (%d and %d short), the export has %d and %d", name,
				j.Read.TotalIOs, j.Write.TotalIOs, j.Read.ShortIOs, j.Write.ShortIOs, s.ReadOps, s.WriteOps)
		}
		prep := jobs["prep-tier"+strconv.Itoa(int(tier))]
		if prep.Write.IOBytes != s.PrepBytes {
			t.Errorf("prep-tier%d: fio wrote %d bytes, the export %d", tier, prep.Write.IOBytes, s.PrepBytes)
		}
		if opt.Layout == LayoutExtent {
			fi, err := os.Stat(filepath.Join(opt.Dir, ExtentFileName(tier)))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != s.FileSize {
				t.Errorf("%s: %d bytes, the export says %d", fi.Name(), fi.Size(), s.FileSize)
			}
		} else {
			// The tier's files are named N_KEY, as kvreplay names them.
			var n, size int64
			entries, err := os.ReadDir(opt.Dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && strings.HasPrefix(e.Name(), strconv.Itoa(int(tier))+"_") {
					n++
					size += fi.Size()
				}
			}
			if n != s.Files || size != s.FileSize {
				t.Errorf("%s: %d files %d_* of %d bytes, the export says %d of %d", opt.Dir, n, tier, size, s.Files, s.FileSize)
			}
		}
	}
}

// TestFioRunsTiny runs fio on the hand-written trace in every golden
// configuration (the asap ones and a timed one) and checks fio's figures.
func TestFioRunsTiny(t *testing.T) {
	env := needFio(t)
	for _, c := range fioCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			opt := c.opt
			if c.prescan {
				opt.Cold = coldOf(t, "testdata/tiny.csv")
			}
			jobPath, st := exportToDisk(t, env, dir, "testdata/tiny.csv", opt)
			jobs := runFio(t, env, dir, jobPath)
			opt.Dir = filepath.Join(dir, "data")
			checkFioRun(t, jobs, st, opt.withDefaults())
			if opt.Layout == LayoutDir {
				// Tier-2's object files are named as kvreplay names them.
				for _, key := range []string{"layer0/user0", "u1", "u2", ".cold:key?"} {
					if _, err := os.Stat(filepath.Join(opt.Dir, fileName(schema.TierNVMe, key))); err != nil {
						t.Errorf("object %q: %v", key, err)
					}
				}
				if _, err := os.Stat(filepath.Join(opt.Dir, ".kvbench-mkdir")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the mkdir job's marker is left: %v", err)
				}
			}
		})
	}
}

// TestFioRunsReference exports reference traces at 1/4096 of their size,
// Tier-2 only, runs fio on them and holds its bytes against the export's
// and an independent sum over the trace.
func TestFioRunsReference(t *testing.T) {
	env := needFio(t)
	for _, file := range []string{
		"../../testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv",
		"../../testdata/reference/llama8b_u50_d30_gpu0_cpu4_decodeonly_s42.csv.zst",
	} {
		if _, err := os.Stat(file); err != nil {
			t.Skip(err)
		}
		for _, layout := range []string{LayoutExtent, LayoutDir} {
			t.Run(filepath.Base(file)+"/"+layout, func(t *testing.T) {
				dir := t.TempDir()
				// The decode-only trace's replay job, and its prep job in
				// the dir layout, read their logs in chunks.
				const chunkAbove = 400
				opt := FioOptions{Layout: layout, SizeScale: 1.0 / 4096, chunkAbove: chunkAbove}
				jobPath, st := exportToDisk(t, env, dir, file, opt)
				job, err := os.ReadFile(jobPath)
				if err != nil {
					t.Fatal(err)
				}
				if chunked := strings.Contains(jobSection(string(job), "replay-tier2"), "read_iolog_chunked=1\n"); chunked != (st.Tier[2].Ops > chunkAbove) {
					t.Errorf("%d I/Os: read_iolog_chunked is %v", st.Tier[2].Ops, chunked)
				}
				if layout == LayoutDir {
					prep, err := os.ReadFile(filepath.Join(dir, LogName("t", schema.TierNVMe, PrepLog)))
					if err != nil {
						t.Fatal(err)
					}
					ios := int64(bytes.Count(prep, []byte(" write ")))
					if chunked := strings.Contains(jobSection(string(job), "prep-tier2"), "read_iolog_chunked=1\n"); chunked != (ios > chunkAbove) {
						t.Errorf("a prep log of %d I/Os: read_iolog_chunked is %v", ios, chunked)
					}
				}
				jobs := runFio(t, env, dir, jobPath)
				opt.Dir = filepath.Join(dir, "data")
				checkFioRun(t, jobs, st, opt.withDefaults())
				sum := sumTrace(t, file, opt.SizeScale)
				j := jobs["replay-tier2"]
				if j.Read.IOBytes != sum[schema.TierNVMe][schema.OpRead] || j.Write.IOBytes != sum[schema.TierNVMe][schema.OpWrite] {
					t.Errorf("fio read %d and wrote %d bytes; the trace's Tier-2 rows have %d and %d", j.Read.IOBytes, j.Write.IOBytes,
						sum[schema.TierNVMe][schema.OpRead], sum[schema.TierNVMe][schema.OpWrite])
				}
				t.Logf("%s: fio read %d, wrote %d bytes; export %d, %d; trace %d, %d", layout, j.Read.IOBytes, j.Write.IOBytes,
					st.Tier[2].ReadBytes, st.Tier[2].WriteBytes, sum[2][schema.OpRead], sum[2][schema.OpWrite])
			})
		}
	}
}

// TestFioCountsEveryIO is the fio quirk the job file works around: without
// io_size, an iolog replay on an asynchronous engine leaves the I/Os in
// flight at the end of the log out of fio's figures. If a fio release fixes
// this, the workaround is harmless and this test says so.
func TestFioCountsEveryIO(t *testing.T) {
	env := needFio(t)
	if env.engine == "psync" {
		t.Skip("the quirk needs an asynchronous engine")
	}
	dir := t.TempDir()
	var log strings.Builder
	log.WriteString("fio version 3 iolog\n")
	file := filepath.Join(dir, "f")
	log.WriteString("0 " + file + " add\n0 " + file + " open\n")
	for i := range 64 {
		log.WriteString(strconv.Itoa(i) + " " + file + " write " + strconv.Itoa(i*65536) + " 65536\n")
	}
	logPath := filepath.Join(dir, "w.iolog")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	direct := "1"
	if !directOK(t, dir) {
		direct = "0"
	}
	job := "[global]\nioengine=" + env.engine + "\ndirect=" + direct + "\niodepth=16\nreplay_no_stall=1\nread_iolog=" + logPath +
		"\n[plain]\n[sized]\nstonewall\nio_size=4194304\n"
	jobPath := filepath.Join(dir, "q.fio")
	if err := os.WriteFile(jobPath, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := runFio(t, env, dir, jobPath)
	if got := jobs["sized"].Write.IOBytes; got != 64*65536 {
		t.Errorf("with io_size: fio counted %d bytes, want %d", got, 64*65536)
	}
	if got := jobs["plain"].Write.IOBytes; got == 64*65536 {
		t.Logf("without io_size fio counted every byte too: this fio has no end-of-log quirk")
	} else {
		t.Logf("without io_size fio counted %d of %d bytes (the quirk)", got, 64*65536)
	}
}

// TestFioRunsTimed runs a timed export in fio: the replay job lasts at
// least as long as its trace from the first row, on every tier, though
// each tier's log starts at another time. fio skipped the wait up to a
// log's first line after those stamped 0, and never waits for a log's
// first line.
func TestFioRunsTimed(t *testing.T) {
	env := needFio(t)
	src := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" +
		"0.000000,Write,8192,Tier-2,a,Prefill\n" +
		"0.400000,Write,8192,Tier-1,b,Prefill\n" +
		"0.600000,Read,8192,Tier-2,a,Decode\n" +
		"0.700000,Read,8192,Tier-1,b,Decode\n"
	for _, layout := range []string{LayoutExtent, LayoutDir} {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "timed.csv")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			opt := FioOptions{Layout: layout, Speed: SpeedTimed, Tiers: []schema.Tier{schema.TierCPU, schema.TierNVMe}}
			jobPath, st := exportToDisk(t, env, dir, file, opt)
			jobs := runFio(t, env, dir, jobPath)
			opt.Dir = filepath.Join(dir, "data")
			checkFioRun(t, jobs, st, opt.withDefaults())
			// The last I/O of each tier is issued at 0.6 s and 0.7 s.
			for name, ms := range map[string]int64{"replay-tier1": 700, "replay-tier2": 600} {
				if got := jobs[name].Runtime; got < ms {
					t.Errorf("%s ran %d ms; its last I/O is at %d ms", name, got, ms)
				}
			}
		})
	}
}

// TestFioRunsTimedLong runs a timed export of a log long enough to be
// read in chunks. fio's chunked reading (iolog_items_to_fetch) fetches as
// many lines as the job consumed in the last second, less those it holds:
// a log whose I/Os are more than a few hundred ms apart gets nothing, and
// the job ended after its first chunk, without an error, having done a
// part of its I/O. A timed job reads its log whole.
func TestFioRunsTimedLong(t *testing.T) {
	env := needFio(t)
	var src strings.Builder
	src.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i := range 12 {
		fmt.Fprintf(&src, "%.6f,Write,4096,Tier-2,k%d,Prefill\n", 0.6*float64(i), i)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "long.csv")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := FioOptions{Speed: SpeedTimed, chunkAbove: 4}
	jobPath, st := exportToDisk(t, env, dir, file, opt)
	jobs := runFio(t, env, dir, jobPath)
	opt.Dir = filepath.Join(dir, "data")
	checkFioRun(t, jobs, st, opt.withDefaults())
}

// TestFioRunsDirEveryTier runs in fio a dir-layout export of every tier
// whose Tier-2 keys are named as the other tiers' directories were
// (tier1): fio failed to create the object file where the mkdir job had
// made Tier-1's directory. Every tier's files now lie in Dir, named as
// kvreplay names them, and a key moved between tiers has a file on each.
func TestFioRunsDirEveryTier(t *testing.T) {
	env := needFio(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "clash.csv")
	if err := os.WriteFile(file, []byte(clashSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := FioOptions{Layout: LayoutDir, Tiers: []schema.Tier{schema.TierGPU, schema.TierCPU, schema.TierNVMe, schema.TierObject}}
	jobPath, st := exportToDisk(t, env, dir, file, opt)
	jobs := runFio(t, env, dir, jobPath)
	opt.Dir = filepath.Join(dir, "data")
	checkFioRun(t, jobs, st, opt.withDefaults())
	for _, name := range []string{"2_tier0", "2_tier1", "2_tier3", "2_.tier1", "0_g", "1_c", "2_c", "3_o"} {
		if fi, err := os.Stat(filepath.Join(opt.Dir, name)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, want an object's file, as kvreplay names it", name, err)
		}
	}
}

// TestFioJobParses has fio parse (--parse-only) the job export writes for
// every engine, pace, layout and tuning: fio refuses an option its engine
// lacks (fixedbufs=1 beside libaio, which the control case adds) and a
// value it does not know.
func TestFioJobParses(t *testing.T) {
	env := needFio(t)
	timed, two := SpeedTimed, []schema.Tier{schema.TierCPU, schema.TierNVMe}
	for _, c := range []struct {
		name    string
		opt     FioOptions
		control string // a line added to [global] that fio must refuse
	}{
		{"io_uring", FioOptions{}, ""},
		{"io_uring-fixedbufs-shmhuge", FioOptions{FixedBufs: true, IOMem: "shmhuge"}, ""},
		{"io_uring-timed-mmaphuge-dir", FioOptions{Speed: timed, IOMem: "mmaphuge", Layout: LayoutDir, Tiers: two}, ""},
		{"libaio", FioOptions{Engine: "libaio", IOMem: "shm"}, ""},
		{"libaio-timed", FioOptions{Engine: "libaio", Speed: timed, Tiers: two}, ""},
		{"posixaio", FioOptions{Engine: "posixaio", IOMem: "mmapshared"}, ""},
		{"psync-dir", FioOptions{Engine: "psync", IOMem: "mmap", Layout: LayoutDir}, ""},
		{"control-libaio-fixedbufs", FioOptions{Engine: "libaio"}, "fixedbufs=1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.opt.BlockSize = 8192
			jobPath, _ := exportFiles(t, dir, "testdata/tiny.csv", c.opt)
			job, err := os.ReadFile(jobPath)
			if err != nil {
				t.Fatal(err)
			}
			if c.control != "" {
				job = bytes.Replace(job, []byte("\n[global]\n"), []byte("\n[global]\n"+c.control+"\n"), 1)
				if err := os.WriteFile(jobPath, job, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command(env.bin, "--parse-only", jobPath).CombinedOutput()
			switch {
			case c.control == "" && err != nil:
				t.Errorf("fio --parse-only: %v\n%s\n%s", err, out, job)
			case c.control != "" && err == nil:
				t.Errorf("fio --parse-only took %s:\n%s", c.control, job)
			}
		})
	}
}

// TestFioRunsTuned runs the tiny trace's job with io_uring's registered
// buffers, and with huge-page buffers where the machine has them free, and
// checks that fio counts every I/O as without them.
func TestFioRunsTuned(t *testing.T) {
	env := needFio(t)
	if env.engine != "io_uring" {
		t.Skip("fixedbufs needs io_uring; fio here runs " + env.engine)
	}
	// 4 blocks of 8 KiB pin 32 KiB, under any RLIMIT_MEMLOCK's default.
	opt := FioOptions{BlockSize: 8192, IODepth: 4, FixedBufs: true}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &lim); err == nil && lim.Cur < 64<<10 && os.Geteuid() != 0 {
		t.Skipf("RLIMIT_MEMLOCK %d bytes: fixedbufs=1 would fail", lim.Cur)
	}
	cases := []string{"malloc"}
	if free := freeHugePages(t); free >= 2 {
		cases = append(cases, "shmhuge")
	} else {
		t.Logf("%d huge pages free: iomem=shmhuge not run (echo 2 > /proc/sys/vm/nr_hugepages)", free)
	}
	for _, mem := range cases {
		t.Run(mem, func(t *testing.T) {
			dir := t.TempDir()
			opt := opt
			opt.IOMem = mem
			jobPath, st := exportToDisk(t, env, dir, "testdata/tiny.csv", opt)
			jobs := runFio(t, env, dir, jobPath)
			opt.Dir = filepath.Join(dir, "data")
			checkFioRun(t, jobs, st, opt.withDefaults())
		})
	}
}

// freeHugePages returns /proc/meminfo's HugePages_Free (0 where unknown).
func freeHugePages(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "HugePages_Free:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
