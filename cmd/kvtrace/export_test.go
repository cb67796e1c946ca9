package main

import (
	"bufio"
	"bytes"
	"context"
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

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/extent"
	"github.com/kvbench/kvbench/replay/null"
	"github.com/kvbench/kvbench/replay/nvme"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

const refU10 = "../../testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv"

func TestExportHelp(t *testing.T) {
	stdout, _, code := runKvtrace(t, "export", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage:", "Examples:", "Options:", "--to", "--block-size", "--align", "--tiers", "--layout",
		"--size-scale", "--dir", "--speed", "--iodepth", "--prefix", "-o, --output"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n0,Write,12a,Tier-2,k,Prefill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want []string // lines of the message, in order
	}{
		{[]string{"export", "-o", out, refU10}, []string{"kvtrace: --to: required (want fio or sai3)"}},
		{[]string{"export", "--to", "tar", "-o", out, refU10}, []string{"kvtrace: --to tar: want fio or sai3"}},
		{[]string{"export", "--to", "fio", "-o", out, refU10}, []string{"kvtrace: --dir: required"}},
		{[]string{"export", "--to", "fio", "--dir", dir}, []string{
			"kvtrace: export: no trace given (want a file, or - for stdin)",
			"kvtrace: --output: required (the directory to write into)"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "-o", out, refU10, refU10}, []string{"kvtrace: export: 2 traces given (want one)"}},
		{[]string{"export", "--to", "fio", "--dir", "/etc/kv", "-o", out, refU10}, []string{"kvtrace: --dir /etc/kv: refusing a path under the system directory /etc"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--prefix", "s3://b/", "-o", out, refU10}, []string{"kvtrace: --prefix: only for --to sai3"}},
		{[]string{"export", "--to", "sai3", "--dir", dir, "--iodepth", "4", "-o", out, refU10}, []string{
			"kvtrace: --dir: only for --to fio", "kvtrace: --iodepth: only for --to fio"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--tiers", "Tier-9", "-o", out, refU10}, []string{
			`kvtrace: --tiers Tier-9: "Tier-9": want Tier-0, Tier-1, Tier-2 or Tier-3 (or gpu, cpu, nvme, object)`}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--size-scale", "1/x", "--block-size", "3000", "--layout", "tree",
			"--speed", "fast", "-o", out, refU10}, []string{
			"kvtrace: --size-scale 1/x: want a number or a fraction such as 1/1024",
			"kvtrace: --block-size 3000: must be a power of two between 4KiB and 1GiB",
			"kvtrace: --layout tree: want extent or dir",
			"kvtrace: --speed fast: want asap or timed"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--size-scale", "2", "-o", out, refU10}, []string{
			"kvtrace: --size-scale 2: must be greater than 0 and at most 1"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--iodepth", "0", "--block-size", "0", "--size-scale", "0", "--engine", "",
			"-o", out, refU10}, []string{
			"kvtrace: --block-size 0: must be a power of two between 4KiB and 1GiB",
			"kvtrace: --iodepth 0: must be between 1 and 4096",
			"kvtrace: --size-scale 0: must be greater than 0 and at most 1",
			"kvtrace: --engine: empty"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--block-size", "12q", "-o", out, refU10}, []string{"kvtrace: --block-size 12q: not a byte size"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--align", "0", "-o", out, refU10}, []string{"kvtrace: --align 0: must be a power of two between 4KiB and 1GiB"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--align", "512", "-o", out, refU10}, []string{"kvtrace: --align 512: must be a power of two between 4KiB and 1GiB"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--align", "64KiB", "--block-size", "16KiB", "-o", out, refU10}, []string{
			"kvtrace: --align 65536: above --block-size 16384: the I/Os of an object would not be aligned"}},
		{[]string{"export", "--to", "sai3", "--align", "8KiB", "-o", out, refU10}, []string{"kvtrace: --align: only for --to fio"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--iomem", "huge", "--engine", "libaio", "--fixedbufs", "-o", out, refU10}, []string{
			"kvtrace: --iomem \"huge\": want one of fio's malloc, shm, shmhuge, mmap, mmaphuge, mmapshared",
			"kvtrace: --fixedbufs: only with --engine io_uring (fio refuses fixedbufs=1 with ioengine=libaio)"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--iomem", "", "-o", out, refU10}, []string{"kvtrace: --iomem: empty"}},
		{[]string{"export", "--to", "sai3", "--iomem", "shmhuge", "--fixedbufs", "-o", out, refU10}, []string{
			"kvtrace: --iomem: only for --to fio", "kvtrace: --fixedbufs: only for --to fio"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "-o", out, filepath.Join(dir, "missing.csv")}, []string{"kvtrace: " + filepath.Join(dir, "missing.csv") + ": no such file or directory"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "-o", out, bad}, []string{"kvtrace: export: trace: " + bad + ":2: column 3 (Object_Size_Bytes)"}},
		{[]string{"export", "--to", "sai3", "-o", out, bad}, []string{"kvtrace: export: trace: " + bad + ":2: column 3 (Object_Size_Bytes)"}},
		// A tier the trace has no rows on: its fio job or op-log would do
		// no I/O there (both were written, exit 0), whether the trace is
		// read before the export (sizing) or by it (--no-prescan).
		{[]string{"export", "--to", "fio", "--dir", dir, "--tiers", "object", "-o", out, refU10}, []string{
			"kvtrace: export: --tiers Tier-3: trace " + refU10 + " has no Tier-3 rows, so its fio job would do no I/O there; " +
				"its rows are on Tier-1 (465 rows), Tier-2 (129 rows): export those (--tiers Tier-1,Tier-2)"}},
		{[]string{"export", "--to", "fio", "--dir", dir, "--no-prescan", "--tiers", "Tier-0,Tier-2", "-o", out, refU10}, []string{
			"kvtrace: export: --tiers Tier-0: trace " + refU10 + " has no Tier-0 rows, so its fio job would do no I/O there; its rows are on Tier-1 (465 rows), Tier-2 (129 rows)"}},
		{[]string{"export", "--to", "sai3", "--tiers", "gpu", "-o", out, refU10}, []string{
			"kvtrace: export: --tiers Tier-0: trace " + refU10 + " has no Tier-0 rows, so its op-log would do no I/O there"}},
	} {
		t.Run(strings.Join(c.args[1:], " "), func(t *testing.T) {
			stdout, stderr, code := runKvtrace(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("stderr %q: %d lines, want %d", stderr, len(lines), len(c.want))
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], w)
				}
			}
		})
	}
	// A failed export leaves no file behind.
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestExportOutputLinks: a file export writes in --output is refused, as
// kvtrace's -o is, where a link of its name leads into a system directory
// (the export wrote its job file and iologs through it, exit 0) or where a
// directory has its name; nothing is written and --output keeps what it
// held.
func TestExportOutputLinks(t *testing.T) {
	base := "llama8b_u10_d30_gpu0_cpu4_s42"
	for _, c := range []struct {
		to, name string // the exporter, the output's name in --output
		dir      bool   // a directory there, not a link into /etc
		want     string
	}{
		{"fio", base + ".fio", false, "refusing a path under the system directory /etc (it resolves to /etc/kvbench-test-export)"},
		{"fio", export.LogName(base, schema.TierNVMe, export.ReplayLog), false, "refusing a path under the system directory /etc"},
		{"sai3", base + ".tsv", false, "refusing a path under the system directory /etc"},
		{"fio", base + ".fio", true, "is a directory: not a file kvbench writes over"},
	} {
		t.Run(c.to+" "+c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(out, c.name)
			var err error
			if c.dir {
				err = os.Mkdir(at, 0o755)
			} else {
				err = os.Symlink("/etc/kvbench-test-export", at)
			}
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"export", "--to", c.to, "--tiers", "Tier-1,Tier-2", "-o", out, refU10}
			if c.to == "fio" {
				// The job's data files would take 49 GiB: the space
				// check, which depends on the disk, is not this test's.
				args = append(args, "--dir", dir, "--no-space-check")
			}
			_, stderr, code := runKvtrace(t, args...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, %q; want 2 and %q", code, stderr, c.want)
			}
			if _, err := os.Stat("/etc/kvbench-test-export"); err == nil {
				os.Remove("/etc/kvbench-test-export")
				t.Error("/etc/kvbench-test-export written")
			}
			if ents, _ := os.ReadDir(out); len(ents) != 1 {
				t.Errorf("--output holds %v, want only %s", ents, c.name)
			}
		})
	}
}

// TestExportDirNamesMatchKvreplay checks that the dir layout names object
// files exactly as kvreplay's NVMe backend does: the engine opens Tier-2's
// copy of key K as "2_K" (replay's TestExportDirNamesAgree replays it).
func TestExportDirNamesMatchKvreplay(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"layer0/user0", ".hidden", "a%b", "ü-key", "x:y?z", "conv_user_0001_1795255939067_turn_1", strings.Repeat("k/", 150)}
	var src strings.Builder
	src.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n")
	for i, k := range keys {
		src.WriteString(strconv.Itoa(i) + ",Write,4096,Tier-2," + k + ",Prefill\n")
	}
	tracePath := filepath.Join(dir, "keys.csv")
	if err := os.WriteFile(tracePath, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "d")
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--layout", "dir", "--dir", data, "-o", dir, tracePath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	log, err := os.ReadFile(filepath.Join(dir, "keys.tier2.iolog"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(string(log), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[2] == "add" {
			got = append(got, f[1])
		}
	}
	if len(got) != len(keys) {
		t.Fatalf("%d files added, want %d:\n%s", len(got), len(keys), log)
	}
	for i, k := range keys {
		if want := filepath.Join(data, nvme.FileName("2_"+k)); got[i] != want {
			t.Errorf("key %q: file %s, kvreplay's is %s", k, got[i], want)
		}
	}
}

func TestExportSai3(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runKvtrace(t, "export", "--to", "sai3", "--prefix", "file:///mnt/kv/", "--tiers", "cpu,nvme", "-o", dir, refU10)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "llama8b_u10_d30_gpu0_cpu4_s42.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "idx\tthread\top\tclient_id\tn_objects\tbytes\tendpoint\tfile\terror\tstart\tfirst_byte\tend\tduration_ns" {
		t.Errorf("header %q", lines[0])
	}
	// Every row of the reference trace is on Tier-1 or Tier-2.
	if len(lines)-1 != 594 {
		t.Errorf("%d rows, want 594", len(lines)-1)
	}
	if f := strings.Split(lines[1], "\t"); f[2] != "PUT" || f[6] != "file:///mnt/kv/" || f[7] != "conv_user_0001_1795255939067_turn_1" ||
		f[9] != "2026-11-21T10:12:19.072664000Z" {
		t.Errorf("first row %q", f)
	}
	if !regexp.MustCompile(`(?m)^kvtrace: export: 594 rows -> 485 GET .*, 109 PUT .*, 0 DELETE -> .*\.tsv\n$`).MatchString(stderr) {
		t.Errorf("summary %q", stderr)
	}
	// The data moved is in GB, decimal, as every kvbench output gives it
	// (issue 23): the sums of the op-log's bytes column.
	var get, put int64
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		n, err := strconv.ParseInt(f[5], 10, 64)
		if err != nil {
			t.Fatalf("bytes of %q: %v", l, err)
		}
		switch f[2] {
		case "GET":
			get += n
		case "PUT":
			put += n
		}
	}
	if want := fmt.Sprintf("485 GET %s, 109 PUT %s, 0 DELETE", results.FormatData(get), results.FormatData(put)); !strings.Contains(stderr, want) ||
		strings.Contains(stderr, "iB") {
		t.Errorf("summary %q, want %q", stderr, want)
	}
}

// TestFioSummaryUnits: the fio export's summary gives the data each tier
// reads and writes in GB, decimal, as every kvbench output gives data
// moved (issue 23), and the size of its files on disk, a size, in binary
// units as disk free is.
func TestFioSummaryUnits(t *testing.T) {
	var st export.FioStats
	st.Tier[schema.TierNVMe] = export.FioTierStats{Exported: true, ReadOps: 3, ReadBytes: 2_500_000_000, WriteOps: 4, WriteBytes: 1 << 30,
		Ops: 7, FileSize: 1 << 30}
	st.ColdReads = 2
	got := fioSummary(&st, export.FioOptions{Tiers: []schema.Tier{schema.TierNVMe}})
	if want := "Tier-2: 3 reads 2.50 GB, 4 writes 1.07 GB in 7 I/Os, 1.00 GiB on disk; 2 cold reads -> "; got != want {
		t.Errorf("fioSummary:\n got %q\nwant %q", got, want)
	}
}

// TestExportFioRuns exports a reference trace at 1/4096 of its size, runs
// the real fio on the job and holds fio's bytes against a sum over the
// trace's Tier-2 rows. It skips where fio is not installed.
func TestExportFioRuns(t *testing.T) {
	bin, err := exec.LookPath("fio")
	if err != nil {
		t.Skipf("fio is not on PATH (Debian: apt-get install fio): %v", err)
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !fioAtLeast331(string(out)) {
		t.Skipf("fio --version %q (%v): iolog version 3 needs fio 3.31 or later", out, err)
	}
	dir := t.TempDir()
	engine := "io_uring"
	probe := exec.Command(bin, "--name=probe", "--ioengine=io_uring", "--filename="+filepath.Join(dir, "probe"), "--size=4k", "--rw=write")
	if probe.Run() != nil {
		engine = "psync"
	}
	out := filepath.Join(dir, "out")
	for _, layout := range []string{"extent", "dir"} {
		t.Run(layout, func(t *testing.T) {
			data := filepath.Join(dir, "data-"+layout)
			args := []string{"export", "--to", "fio", "--layout", layout, "--dir", data, "--size-scale", "1/4096",
				"--engine", engine, "-o", out, refU10}
			if !directOK(t, dir) {
				args = append(args, "--buffered")
			}
			_, stderr, code := runKvtrace(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !regexp.MustCompile(`(?m)^kvtrace: export: 594 rows -> Tier-2: 76 reads [0-9.]+ GB, 53 writes [0-9.]+ GB in \d+ I/Os, .* on disk; 0 cold reads -> .*\.fio\nkvtrace: export: kvreplay does the job's I/O as: kvreplay --layout ` + layout + ` .*\n$`).MatchString(stderr) {
				t.Errorf("summary %q", stderr)
			}
			jsonPath := filepath.Join(dir, layout+".json")
			cmd := exec.Command(bin, "--output-format=json", "--output="+jsonPath, filepath.Join(out, "llama8b_u10_d30_gpu0_cpu4_s42.fio"))
			cmd.Dir = dir
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("fio: %v\n%s", err, msg)
			}
			b, err := os.ReadFile(jsonPath)
			if err != nil {
				t.Fatal(err)
			}
			if i := bytes.IndexByte(b, '{'); i > 0 {
				b = b[i:] // a synchronous engine's note
			}
			var doc struct {
				Jobs []struct {
					Name  string `json:"jobname"`
					Error int    `json:"error"`
					Read  struct {
						IOBytes int64 `json:"io_bytes"`
					} `json:"read"`
					Write struct {
						IOBytes int64 `json:"io_bytes"`
					} `json:"write"`
				}
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			reads, writes := tier2Bytes(t, refU10, 1.0/4096)
			found := false
			for _, j := range doc.Jobs {
				if j.Error != 0 {
					t.Errorf("fio job %s: error %d", j.Name, j.Error)
				}
				if j.Name != "replay-tier2" {
					continue
				}
				found = true
				if j.Read.IOBytes != reads || j.Write.IOBytes != writes {
					t.Errorf("fio read %d and wrote %d bytes; the trace's Tier-2 rows have %d and %d", j.Read.IOBytes, j.Write.IOBytes, reads, writes)
				}
			}
			if !found {
				t.Errorf("no replay-tier2 job in fio's output")
			}
		})
	}
}

// tier2Bytes sums the scaled sizes of the trace's Tier-2 reads and writes,
// each truncated and aligned up to 4096 as kvreplay does.
func tier2Bytes(t *testing.T, path string, scale float64) (reads, writes int64) {
	t.Helper()
	r, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec schema.Record
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return reads, writes
		}
		if err != nil {
			t.Fatal(err)
		}
		n := (int64(float64(rec.Size)*scale) + 4095) / 4096 * 4096
		switch {
		case rec.Tier != schema.TierNVMe:
		case rec.Op == schema.OpRead:
			reads += n
		case rec.Op == schema.OpWrite:
			writes += n
		}
	}
}

func fioAtLeast331(version string) bool {
	m := regexp.MustCompile(`fio-(\d+)\.(\d+)`).FindStringSubmatch(version)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > 3 || major == 3 && minor >= 31
}

// directOK reports whether dir's file system takes O_DIRECT (tmpfs does
// not), by asking fio to write one direct block there.
func directOK(t *testing.T, dir string) bool {
	t.Helper()
	cmd := exec.Command("fio", "--name=direct", "--direct=1", "--filename="+filepath.Join(dir, "direct-probe"), "--size=4k", "--rw=write")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if cmd.Run() != nil {
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			t.Logf("O_DIRECT probe: %s", sc.Text())
		}
		return false
	}
	return true
}

// placements records where kvreplay's extent backend puts every object it
// creates.
type placements struct {
	backend.Backend
	mu      sync.Mutex
	creates []string // "offset+size"
}

func (p *placements) Open(key string, size int64, create bool) (backend.Object, error) {
	o, err := p.Backend.Open(key, size, create)
	if err == nil && create && size > 0 {
		p.mu.Lock()
		p.creates = append(p.creates, fmt.Sprintf("%d+%d", o.(*extent.Object).Offset(), size))
		p.mu.Unlock()
	}
	return o, err
}

// TestExportExtentsMatchKvreplay replays traces with kvreplay's engine, one
// row at a time, on its extent backend, and checks that the export puts
// every Tier-2 object at the offset kvreplay gives it: cold objects first
// (the prescan), then one placement per write.
func TestExportExtentsMatchKvreplay(t *testing.T) {
	for _, c := range []struct {
		file    string
		scale   string
		prescan bool
	}{
		// Every trace is put in one request, so that kvreplay runs its
		// rows in trace order. The hand-written one has a cold read:
		// without a prescan both place it at its read. (kvreplay's prescan of cold
		// objects is not compared: its prepareCold runs before the
		// engine's I/O queue exists and blocks.)
		{oneRequest(t, "../../trace/export/testdata/tiny.csv"), "1", false},
		{rewriteTrace(t), "1", true},
		{oneRequest(t, refU10), "1/4096", true},
		{oneRequest(t, "../../testdata/reference/llama8b_u50_d30_gpu0_cpu4_decodeonly_s42.csv.zst"), "1/4096", true},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			dir := t.TempDir()
			scale, err := cli.Fraction("--size-scale", c.scale)
			if err != nil {
				t.Fatal(err)
			}
			// kvreplay, sequentially.
			eb, err := extent.New(filepath.Join(dir, "kvbench.extent"), extent.Options{Size: 256 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if a := eb.Caps().Align; a != 4096 {
				eb.Close()
				t.Skipf("the file system's direct I/O alignment is %d, the export's 4096", a)
			}
			rec := &placements{Backend: eb}
			cfg := replay.DefaultConfig()
			cfg.TierMap = [schema.NumTiers]string{"", "null", "ext"}
			cfg.Workers, cfg.QueueDepth, cfg.Speed, cfg.SizeScale, cfg.Prescan = 1, 1, 0, scale, c.prescan
			srcs := []replay.Source{{Name: c.file, Rescan: true, Open: func() (*trace.Reader, error) { return trace.Open(c.file) }}}
			plan, err := replay.Prepare(context.Background(), &cfg, srcs)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := replay.Run(context.Background(), &cfg, plan, srcs, map[string]backend.Backend{"null": null.New(), "ext": rec}, replay.Hooks{}); err != nil {
				t.Fatal(err)
			}
			if err := eb.Close(); err != nil {
				t.Fatal(err)
			}

			// The export, and its placements read back from the iolog.
			out := filepath.Join(dir, "out")
			args := []string{"export", "--to", "fio", "--dir", dir, "--size-scale", c.scale, "-o", out, c.file}
			if !c.prescan {
				args = append(args, "--no-prescan")
			}
			_, stderr, code := runKvtrace(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := exportPlacements(t, c.file, scale, filepath.Join(out, traceBase(c.file)+".tier2.iolog"), c.prescan)
			if strings.Join(got, " ") != strings.Join(rec.creates, " ") {
				t.Errorf("the export places Tier-2 objects at\n%v\nkvreplay at\n%v", got, rec.creates)
			}
			if len(got) == 0 {
				t.Error("no placements compared")
			}
		})
	}
}

// rewriteTrace writes a trace that rewrites an object in place where
// freeing its old extent first lets first fit move it down.
func rewriteTrace(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "rewrite.csv")
	src := `Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request
0,Write,4096,Tier-2,x,Prefill,1
0,Write,8192,Tier-2,b,Prefill,1
0,Write,4096,Tier-2,y,Prefill,1
1,Delete,4096,Tier-2,x,Evict,1
2,Write,8192,Tier-2,b,Prefill,1
3,Write,4096,Tier-2,z,Prefill,1
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// oneRequest copies a trace with every row in request 1, so that kvreplay
// runs the rows one after another in trace order (rows of different
// requests and keys it may run in another order, even with one worker).
func oneRequest(t *testing.T, file string) string {
	r, err := trace.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b strings.Builder
	b.WriteString("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request\n")
	var rec schema.Record
	for {
		if err := r.Read(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%.6f,%s,%d,%s,%s,%s,1\n", max(rec.Time, 0).Seconds(), rec.Op, rec.Size, rec.Tier, rec.Key, rec.Phase)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	path = strings.TrimSuffix(path, ".zst")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// exportPlacements walks the trace's rows against the Tier-2 iolog and
// returns where each placement put its object, in kvreplay's order: one
// per Tier-2 write, and one per cold object, in the order of their first
// reads, before the writes when prescanned, else at those reads. It
// expects a consistent trace (reads on the tier of their object).
func exportPlacements(t *testing.T, file string, scale float64, logPath string, prescan bool) []string {
	t.Helper()
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	type ioLine struct{ off, n int64 }
	var ios []ioLine
	for _, l := range strings.Split(string(log), "\n") {
		f := strings.Fields(l)
		if len(f) == 5 {
			off, _ := strconv.ParseInt(f[3], 10, 64)
			n, _ := strconv.ParseInt(f[4], 10, 64)
			ios = append(ios, ioLine{off, n})
		}
	}
	r, err := trace.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		rec          schema.Record
		cold, writes []string
		live         = map[string]bool{}
	)
	for {
		if err := r.Read(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		key := string(rec.Key)
		wasLive := live[key]
		switch rec.Op {
		case schema.OpWrite, schema.OpRead:
			live[key] = true
		case schema.OpDelete:
			delete(live, key)
		}
		n := (int64(float64(rec.Size)*scale) + 4095) / 4096 * 4096
		if rec.Tier != schema.TierNVMe || rec.Op == schema.OpDelete || n == 0 {
			continue
		}
		if len(ios) == 0 {
			t.Fatalf("the iolog ends before %s", &rec)
		}
		off := ios[0].off
		for got := int64(0); got < n; ios = ios[1:] {
			got += ios[0].n
		}
		at := fmt.Sprintf("%d+%d", off, n)
		switch {
		case rec.Op == schema.OpWrite:
			writes = append(writes, at)
		case !wasLive && prescan:
			cold = append(cold, at)
		case !wasLive:
			writes = append(writes, at)
		}
	}
	return append(cold, writes...)
}
