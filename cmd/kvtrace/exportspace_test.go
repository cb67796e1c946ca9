package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/export"
)

// The --help pipeline exports a job that reads: its trace has Tier-2
// reads (the default GPU and CPU tiers hold 10 users' 30 s, so a trace
// of them reads nothing from NVMe).
func TestExportHelpPipelineReads(t *testing.T) {
	var line string
	for l := range strings.Lines(exportUsage) {
		if strings.Contains(l, "| kvtrace export") {
			line = strings.TrimSpace(l)
		}
	}
	sim, exp, ok := strings.Cut(line, " | ")
	if !ok {
		t.Fatalf("no pipeline in export --help")
	}
	dir := t.TempDir()
	tr := filepath.Join(dir, "pipe.csv")
	simArgs := strings.Fields(strings.Replace(strings.TrimPrefix(sim, "kvtrace "), "-o -", "-o "+tr, 1))
	if _, stderr, code := runKvtrace(t, simArgs...); code != 0 {
		t.Fatalf("%s: exit %d: %s", sim, code, stderr)
	}
	exp = strings.Replace(exp, "/mnt/nvme/kv", dir, 1)
	exp = strings.Replace(exp, "-o fio -", "-o "+filepath.Join(dir, "fio")+" "+tr, 1)
	_, stderr, code := runKvtrace(t, strings.Fields(strings.TrimPrefix(exp, "kvtrace "))...)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", exp, code, stderr)
	}
	m := regexp.MustCompile(`Tier-2: (\d+) reads`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary: %s", stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("the job reads nothing: %s", stderr)
	}
	if !strings.Contains(stderr, "the job's data files take ") {
		t.Errorf("export did not say what the job writes: %s", stderr)
	}
}

func TestExportSpace(t *testing.T) {
	need := exportNeed{logBytes: 40 << 30}
	need.st.Tier[schema.TierNVMe] = export.FioTierStats{Exported: true, FileSize: 124 << 40}
	small := exportNeed{logBytes: 1 << 20}
	small.st.Tier[schema.TierNVMe] = export.FioTierStats{Exported: true, FileSize: 1 << 30}
	dir := t.TempDir()
	for _, tt := range []struct {
		name      string
		need      exportNeed
		freeOut   int64
		freeDir   int64
		same      bool
		checkDir  bool
		scale     float64
		want      string // the refusal; "" passes
		wantWrote string // the line on stderr
	}{
		{"data", need, 100 << 30, 5 << 30, false, true, 1,
			"export: the job's data files need 124.00 TiB in " + dir + " (Tier-2 124.00 TiB) and its file system has 5.00 GiB free (FS of " + dir + "): use --size-scale 1/32768, or --no-space-check for a job that runs on another machine",
			"kvtrace: export: writes 40.00 GiB of iologs and job file in OUT; the job's data files take 124.00 TiB in " + dir + " (Tier-2 124.00 TiB), written by fio's prep jobs\n"},
		{"iologs", need, 10 << 30, 1 << 50, false, true, 1,
			"export: the iologs need 40.00 GiB in OUT and its file system has 10.00 GiB free (FS of OUT): use --size-scale 1/8 (an iolog's lines scale with it) or a larger --block-size", ""},
		{"shared", small, 1<<30 + 512<<10, 1<<30 + 512<<10, true, true, 1.0 / 64,
			"export: the job's data files need 1.00 GiB in " + dir + " (Tier-2 1.00 GiB) and its file system has 1023.50 MiB free beside the iologs (FS of " + dir + "): use --size-scale 1/128", ""},
		{"fits", small, 10 << 30, 10 << 30, true, true, 1, "", ""},
		{"another machine", need, 100 << 30, 5 << 30, false, false, 1, "", ""},
		{"unknown free space", need, -1, -1, false, true, 1, "", ""},
		// A full file system (0 bytes free) was taken for one whose free
		// space is unknown, and passed.
		{"full OUTDIR", need, 0, 1 << 50, false, true, 1,
			"export: the iologs need 40.00 GiB in OUT and its file system is full (FS of OUT): make room there, or give another --output", ""},
		{"full --dir", need, 100 << 30, 0, false, true, 1,
			"export: the job's data files need 124.00 TiB in " + dir + " (Tier-2 124.00 TiB) and its file system is full (FS of " + dir + "): make room there, give another --dir, or --no-space-check", ""},
		{"full beside the iologs", small, 1 << 20, 1 << 20, true, true, 1,
			"export: the job's data files need 1.00 GiB in " + dir + " (Tier-2 1.00 GiB) and its file system has no room left beside the iologs (FS of " + dir + ")", ""},
		{"full --dir, another machine", need, 100 << 30, 0, false, false, 1, "", ""},
		{"written already", exportNeed{logBytes: 40 << 30, written: true, st: small.st}, 1 << 30, 2 << 30, true, true, 1, "",
			"kvtrace: export: wrote 40.00 GiB of iologs and job file in OUT; the job's data files take 1.00 GiB in " + dir + " (Tier-2 1.00 GiB), written by fio's prep jobs\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := exportSpace{out: "OUT", dir: dir, layout: export.LayoutExtent, scale: tt.scale, checkDir: tt.checkDir,
				free: func(p string) int64 {
					if p == "OUT" {
						return tt.freeOut
					}
					return tt.freeDir
				},
				same:     func(a, b string) bool { return tt.same },
				describe: func(p string) string { return "FS of " + p }}
			var stderr strings.Builder
			err := s.check(&stderr, tt.need)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want) || cli.ExitCode(err) != cli.ExitUsage):
				t.Fatalf("error %v (exit %d)\nwant %s", err, cli.ExitCode(err), tt.want)
			}
			if tt.wantWrote != "" && stderr.String() != tt.wantWrote {
				t.Errorf("stderr %q\nwant %q", stderr.String(), tt.wantWrote)
			}
		})
	}
	// A data file fio's prep overwrites is space had.
	if err := os.WriteFile(filepath.Join(dir, export.ExtentFileName(schema.TierNVMe)), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	tight := exportNeed{}
	tight.st.Tier[schema.TierNVMe] = export.FioTierStats{Exported: true, FileSize: 2 << 20}
	s := exportSpace{out: "OUT", dir: dir, layout: export.LayoutExtent, scale: 1, checkDir: true,
		free: func(string) int64 { return 1<<20 + 4096 }, same: func(a, b string) bool { return false }}
	if err := s.check(new(strings.Builder), tight); err != nil {
		t.Errorf("an existing 1 MiB extent file and 1 MiB free hold 2 MiB: %v", err)
	}
}

func TestPassLine(t *testing.T) {
	for _, tt := range []struct {
		what, name  string
		read, total int64
		want        string
	}{
		{"sizing", "run.csv.zst", 450, 1000, "kvtrace: export: sizing:  45.0% of run.csv.zst read"},
		{"export", "run.csv.zst", 1200, 1000, "kvtrace: export: export: 100.0% of run.csv.zst read"},
		{"export", "-", 3 << 20, 0, "kvtrace: export: export: 3.00 MiB of stdin read"},
	} {
		if got := passLine(tt.what, tt.name, tt.read, tt.total); got != tt.want {
			t.Errorf("passLine(%s, %s, %d, %d) = %q, want %q", tt.what, tt.name, tt.read, tt.total, got, tt.want)
		}
	}
}
