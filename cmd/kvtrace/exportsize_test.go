package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace/export"
)

// TestExportRefusesHugeAtOnce refuses the export of a petabyte object in
// 4 KiB blocks from its sizing pass, which counts its 2^38 I/O lines
// without formatting them (formatting them took hours), and writes
// nothing.
func TestExportRefusesHugeAtOnce(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "huge.csv")
	src := fmt.Sprintf("Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n"+
		"0.000000,Write,%d,Tier-2,huge,Prefill\n1.000000,Read,%d,Tier-2,huge,Decode\n", int64(1<<50), int64(1<<50))
	if err := os.WriteFile(tr, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	reads := countReads(t)
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--block-size", "4KiB", "--dir", filepath.Join(dir, "data"), "-o", out, tr)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	if *reads != 1 {
		t.Errorf("the trace was read %d times before the refusal, want once (its cold objects and size)", *reads)
	}
	// 2^39 lines of some 90 bytes (the temporary directory's name in
	// each): the iologs' need refused or, on a file system with 50 TiB
	// free, the 1 PiB data file's.
	if !strings.Contains(stderr, "TiB of iologs and job file") ||
		!strings.Contains(stderr, "the job's data files take 1.00 PiB") || !strings.Contains(stderr, "use --size-scale 1/") {
		t.Errorf("stderr:\n%s", stderr)
	}
	// Nor the directory it made for them (it had left an empty one).
	if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused export left %s: %v", out, err)
	}
}

// countReads counts, until the test ends, export's reads of a trace: the
// files it opens and reads from.
func countReads(t *testing.T) *int {
	var n int
	t.Cleanup(func() { openTrace = cli.OpenInput })
	openTrace = func(ctx context.Context, name string) (io.ReadCloser, error) {
		f, err := cli.OpenInput(ctx, name)
		return &readCounter{ReadCloser: f, reads: &n}, err
	}
	return &n
}

// readCounter counts itself in reads at its first read.
type readCounter struct {
	io.ReadCloser
	reads *int
	read  bool
}

func (r *readCounter) Read(p []byte) (int, error) {
	if !r.read {
		r.read = true
		*r.reads++
	}
	return r.ReadCloser.Read(p)
}

// TestExportReadsCold reads a trace with cold objects three times: for
// them, to size the export that places them first, to export it.
func TestExportReadsCold(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "cold.csv")
	src := "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n" +
		"0.000000,Write,8192,Tier-2,a,Prefill\n1.000000,Read,16384,Tier-2,cold,Decode\n2.000000,Read,8192,Tier-2,a,Decode\n"
	if err := os.WriteFile(tr, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := countReads(t)
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--dir", filepath.Join(dir, "data"), "-o", filepath.Join(dir, "out"), tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, " 1 cold reads ->") {
		t.Fatalf("not one cold read: %s", stderr)
	}
	// The cold object is placed first, at 0, so a's write is at 16384.
	log, err := os.ReadFile(filepath.Join(dir, "out", "cold.tier2.iolog"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 " + filepath.Join(dir, "data", "kvbench.extent") + " write 16384 8192\n"; !strings.Contains(string(log), want) {
		t.Errorf("iolog lacks %q:\n%s", want, log)
	}
	if *reads != 3 {
		t.Errorf("the trace was read %d times, want 3", *reads)
	}
}

// TestExportSizingIsExact holds what the sizing pass counts against the
// files the export then writes, on a kvtrace trace, in both layouts.
func TestExportSizingIsExact(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "run.csv.zst")
	if _, stderr, code := runKvtrace(t, "--num-users", "10", "--duration", "30", "--gpu-mem-gb", "0", "--cpu-mem-gb", "1", "-o", tr); code != 0 {
		t.Fatalf("kvtrace: exit %d: %s", code, stderr)
	}
	for _, layout := range []string{export.LayoutExtent, export.LayoutDir} {
		out := filepath.Join(dir, "out-"+layout)
		args := []string{"--to", "fio", "--layout", layout, "--tiers", "Tier-1,Tier-2", "--block-size", "64KiB",
			"--size-scale", "1/256", "--dir", filepath.Join(dir, "data"), "-o", out, tr}
		flags, err := parseExportFlags(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := flags.config()
		if err != nil {
			t.Fatal(err)
		}
		// The options the export gives its sizing pass (exportJob.fio).
		opt := cfg.fio
		opt.Source = cfg.trace
		outAbs, err := filepath.Abs(out)
		if err != nil {
			t.Fatal(err)
		}
		opt.LogPath = func(t schema.Tier, k export.LogKind) string {
			return filepath.Join(outAbs, export.LogName(traceBase(tr), t, k))
		}
		// A kvtrace trace has no cold objects: it is sized by the read
		// that finds there are none, as the export sizes it.
		need, cold, err := sizeFio(context.Background(), tr, opt, true, new(atomic.Int64))
		if err != nil {
			t.Fatal(err)
		}
		if len(cold) > 0 {
			t.Fatalf("%d cold objects in a kvtrace trace", len(cold))
		}
		reads := countReads(t)
		if _, stderr, code := runKvtrace(t, append([]string{"export"}, args...)...); code != 0 {
			t.Fatalf("export: exit %d: %s", code, stderr)
		}
		if *reads != 2 {
			t.Errorf("%s: the export read the trace %d times, want 2 (size, export)", layout, *reads)
		}
		entries, err := os.ReadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var wrote int64
		for _, e := range entries {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			wrote += fi.Size()
		}
		if want := 3 + map[string]int{export.LayoutExtent: 0, export.LayoutDir: 2}[layout]; len(entries) != want {
			t.Errorf("%s: %d files in %s, want %d", layout, len(entries), out, want)
		}
		if need.logBytes != wrote {
			t.Errorf("%s: the sizing pass counted %d bytes (%s), the export wrote %d", layout, need.logBytes, cli.FormatBytes(need.logBytes), wrote)
		}
		if s := need.st.Tier[schema.TierNVMe]; s.Ops == 0 || s.FileSize == 0 {
			t.Errorf("%s: the trace's Tier-2 does no I/O: %+v", layout, s)
		}
	}
}

// TestExportReadOnceGuardsSpace exports a trace read once (--no-prescan),
// which writes its iologs as it sizes them, into an OUTDIR with less free
// space than they take: they stop going to disk once they outgrow it
// (spaceGuard), and the export is refused naming what they need, with
// nothing left behind. (They were written, and the export kept.)
func TestExportReadOnceGuardsSpace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	t.Cleanup(func() { freeBytes = cli.FreeBytes })
	freeBytes = func(p string) int64 {
		if p == out {
			return 64 << 10
		}
		return 1 << 50
	}
	_, stderr, code := runKvtrace(t, "export", "--to", "fio", "--no-prescan", "--tiers", "Tier-1,Tier-2", "--size-scale", "1/64",
		"--dir", filepath.Join(dir, "data"), "-o", out, refU10)
	if code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, stderr)
	}
	m := regexp.MustCompile(`kvtrace: export: writes (.+) of iologs and job file in `).FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stderr, "kvtrace: export: the iologs need "+m[1]+" in "+out+" and its file system has 64.00 KiB free (") ||
		!strings.Contains(stderr, "): use --size-scale 1/") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if entries, _ := os.ReadDir(out); len(entries) > 0 {
		t.Errorf("a refused export left %d files in %s", len(entries), out)
	}
}

func TestSpaceGuard(t *testing.T) {
	var a, b strings.Builder
	g := &spaceGuard{left: 10}
	wa, wb := g.writer(&a), g.writer(&b)
	for _, w := range []struct {
		w    io.Writer
		p    string
		over bool
	}{{wa, "123456", false}, {wb, "1234", false}, {wa, "x", true}, {wb, "", true}} {
		if n, err := w.w.Write([]byte(w.p)); n != len(w.p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w.p, n, err)
		}
		if g.over != w.over {
			t.Errorf("after %q over = %v", w.p, g.over)
		}
	}
	if a.String() != "123456" || b.String() != "1234" {
		t.Errorf("wrote %q and %q, want the first 10 bytes", a.String(), b.String())
	}
	unbounded := &spaceGuard{left: -1}
	var c strings.Builder
	unbounded.writer(&c).Write(make([]byte, 1<<20))
	if c.Len() != 1<<20 || unbounded.over {
		t.Errorf("an unbounded guard wrote %d of 1 MiB (over %v)", c.Len(), unbounded.over)
	}
}
