package main

import (
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/host"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/export"
)

// TestExportConfig checks what a valid command line hands the export: the
// options as each exporter takes them (--dir made absolute, short tier
// names, fractions), and the fio switches as what they turn on.
func TestExportConfig(t *testing.T) {
	dir := t.TempDir()
	// A drive of 4KiB with O_DIRECT, whatever this machine's is.
	fakeDrive(t, host.DirectIO{Known: true, FileSystem: "ext4", Align: 4096})
	def := export.DefaultFioOptions()
	fio := export.FioOptions{BlockSize: def.BlockSize, Align: def.Align, Tiers: []schema.Tier{schema.TierNVMe}, Layout: def.Layout, SizeScale: 1,
		Dir: dir, Speed: def.Speed, IODepth: def.IODepth, Engine: def.Engine, IOMem: def.IOMem}
	tuned := fio
	tuned.IOMem, tuned.FixedBufs = "shmhuge", true
	sai3 := export.Sai3Options{Prefix: export.DefaultSai3Options().Prefix, Tiers: []schema.Tier{schema.TierNVMe}, SizeScale: 1}
	for _, c := range []struct {
		args []string
		want exportConfig
	}{
		{[]string{"--to", "fio", "--dir", dir, "-o", "out", "t.csv"},
			exportConfig{to: "fio", trace: "t.csv", out: "out", scale: 1, fio: fio, prescan: true, checkDir: true}},
		{[]string{"--to", "fio", "--dir", filepath.Join(dir, "a", "..", "b"), "--tiers", "gpu, Tier-2", "--size-scale", "1/64",
			"--block-size", "64KiB", "--align", "8KiB", "--layout", "dir", "--speed", "timed", "--iodepth", "8", "--engine", "psync", "--buffered",
			"--no-prescan", "--no-space-check", "--iomem", "shm", "-o", "out", "-"},
			exportConfig{to: "fio", trace: "-", out: "out", scale: 1.0 / 64, fio: export.FioOptions{
				BlockSize: 64 << 10, Align: 8 << 10, Tiers: []schema.Tier{schema.TierGPU, schema.TierNVMe}, Layout: "dir", SizeScale: 1.0 / 64,
				Dir: filepath.Join(dir, "b"), Speed: "timed", IODepth: 8, Engine: "psync", Buffered: true, NoPrescan: true, IOMem: "shm"}}},
		{[]string{"--to", "fio", "--dir", dir, "--iomem", "shmhuge", "--fixedbufs", "-o", "out", "t.csv"},
			exportConfig{to: "fio", trace: "t.csv", out: "out", scale: 1, fio: tuned, prescan: true, checkDir: true}},
		{[]string{"--to", "sai3", "-o", "out", "t.csv.zst"},
			exportConfig{to: "sai3", trace: "t.csv.zst", out: "out", scale: 1, sai3: sai3, prescan: true, checkDir: true}},
		{[]string{"--to", "sai3", "--prefix", "s3://b/kv/", "--tiers", "nvme,cpu", "--size-scale", "0.5", "-o", "out", "t.csv"},
			exportConfig{to: "sai3", trace: "t.csv", out: "out", scale: 0.5, prescan: true, checkDir: true, sai3: export.Sai3Options{
				Prefix: "s3://b/kv/", Tiers: []schema.Tier{schema.TierNVMe, schema.TierCPU}, SizeScale: 0.5}}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			f, err := parseExportFlags(c.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*cfg, c.want) {
				t.Errorf("config\n %+v, want\n %+v", *cfg, c.want)
			}
		})
	}
}

// TestExportConfigProblems checks that config reports every problem at
// once, in the order of the command line's checks, each once, as a usage
// error (exit 2).
func TestExportConfigProblems(t *testing.T) {
	f, err := parseExportFlags([]string{"--to", "sai3", "--tiers", "ssd", "--size-scale", "0", "--iodepth", "0",
		"--layout", "dir", "-o", "-", "a.csv", "b.csv"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config()
	if cfg != nil {
		t.Errorf("config %+v, want none", *cfg)
	}
	if _, ok := errors.AsType[*cli.UsageError](err); !ok {
		t.Fatalf("%v (%T), want a usage error", err, err)
	}
	want := []string{
		"export: 2 traces given (want one)",
		"--output -: export writes several files: give a directory, not stdout",
		`--tiers ssd: "ssd": want Tier-0, Tier-1, Tier-2 or Tier-3 (or gpu, cpu, nvme, object)`,
		"--iodepth 0: must be between 1 and 4096",
		"--size-scale 0: must be greater than 0 and at most 1",
		"--layout: only for --to fio",
		"--iodepth: only for --to fio",
	}
	got := strings.Split(err.Error(), "\n")
	if !reflect.DeepEqual(got[:min(len(got), len(want))], want) {
		t.Errorf("problems:\n%s\nwant them to start with:\n%s", err, strings.Join(want, "\n"))
	}
	for i, line := range got {
		for _, other := range got[:i] {
			if line == other {
				t.Errorf("%q reported twice", line)
			}
		}
	}
}

// TestParseTiersObject: --tiers takes Tier-3 (kvtrace --object-tier's
// object storage) by either name, as its help and errors say.
func TestParseTiersObject(t *testing.T) {
	got, err := parseTiers("Tier-3, object,nvme")
	if want := []schema.Tier{schema.TierObject, schema.TierObject, schema.TierNVMe}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("parseTiers: %v, %v; want %v", got, err, want)
	}
}

// TestParseTiersEmpty: an empty --tiers is reported once, by the check of
// empty options (it was also refused as the tier ""), and an empty item
// among tiers is named as one; a blank one is quoted, so that it shows.
func TestParseTiersEmpty(t *testing.T) {
	for _, c := range []struct{ tiers, want string }{
		{"", "--tiers: empty"},
		{" ", `--tiers " ": an empty item: want tiers separated by single commas, such as Tier-1,Tier-2`},
		{"Tier-2,", "--tiers Tier-2,: an empty item: want tiers separated by single commas, such as Tier-1,Tier-2"},
		{"cpu,,nvme", "--tiers cpu,,nvme: an empty item: want tiers separated by single commas, such as Tier-1,Tier-2"},
	} {
		f, err := parseExportFlags([]string{"--to", "sai3", "--tiers", c.tiers, "-o", "out", "t.csv"}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.config(); err == nil || err.Error() != c.want {
			t.Errorf("--tiers %q: %v, want %s", c.tiers, err, c.want)
		}
	}
}
