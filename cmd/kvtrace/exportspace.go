package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
	"github.com/kvbench/kvbench/trace/export"
)

// exportNeed is what a fio export writes: its iologs and job file in
// OUTDIR now, and the data files the job's prep jobs write in --dir later.
type exportNeed struct {
	st       export.FioStats
	logBytes int64 // the iologs and the job file
	written  bool  // the iologs are on disk already (a trace read once)
}

// dataBytes is what the job's data files take in --dir, and its tiers'
// shares ("Tier-2 13.30 GiB").
func (n exportNeed) dataBytes() (int64, string) {
	var sum int64
	var parts []string
	for t := range schema.Tier(schema.NumTiers) {
		if s := n.st.Tier[t]; s.Exported && s.FileSize > 0 {
			sum += s.FileSize
			parts = append(parts, t.String()+" "+cli.FormatBytes(s.FileSize))
		}
	}
	return sum, strings.Join(parts, ", ")
}

// sizeFio sizes the export of the trace file name with opt
// (export.FioSize, which counts the iologs' lines without formatting
// them): what it and its job will write, counting the bytes it reads in
// n. With cold, it also returns the trace's cold objects
// (export.FioSizeCold).
func sizeFio(ctx context.Context, name string, opt export.FioOptions, cold bool, n *atomic.Int64) (exportNeed, []export.ColdObject, error) {
	f, err := openTrace(ctx, name)
	if err != nil {
		return exportNeed{}, nil, err
	}
	defer f.Close()
	r := trace.NewReader(ctxReader{ctx: ctx, r: f, n: n})
	r.Name = name
	defer r.Close()
	var (
		st       export.FioStats
		logBytes int64
		objs     []export.ColdObject
	)
	if cold {
		st, logBytes, objs, err = export.FioSizeCold(r, opt)
	} else {
		st, logBytes, err = export.FioSize(r, opt)
	}
	if err != nil {
		return exportNeed{}, nil, exportError(err)
	}
	return exportNeed{st: st, logBytes: logBytes}, objs, nil
}

// countWriter counts the bytes written to it and keeps none.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// exportSpace checks that an export's files fit where they go: its iologs
// in out (OUTDIR), the job's data files in dir (--dir) unless checkDir is
// off (a job for another machine).
type exportSpace struct {
	out, dir string
	layout   string
	scale    float64 // --size-scale
	checkDir bool
	// free, same and describe are cli.FreeBytes, cli.SameFileSystem and
	// cli.DescribePath; tests replace them.
	free     func(string) int64
	same     func(a, b string) bool
	describe func(string) string
}

// check says on stderr how much the export and its job write, and refuses
// (exit 2) what does not fit, naming the figures, the file system (as
// kvreplay names one) and the --size-scale that fits. A file system whose
// free space is unknown passes; a full one (0 bytes free) does not.
func (s exportSpace) check(stderr io.Writer, need exportNeed) error {
	free, same, describe := s.freeBytes, s.same, s.describe
	if same == nil {
		same = cli.SameFileSystem
	}
	if describe == nil {
		describe = cli.DescribePath
	}
	data, tiers := need.dataBytes()
	logs := need.logBytes
	what := "writes"
	if need.written {
		logs, what = 0, "wrote"
	}
	fmt.Fprintf(stderr, "kvtrace: export: %s %s of iologs and job file in %s; the job's data files take %s in %s (%s), written by fio's prep jobs\n",
		what, cli.FormatBytes(need.logBytes), s.out, cli.FormatBytes(data), s.dir, orNone(tiers))
	// Data files fio's prep jobs overwrite in place are space already had.
	data -= s.reused(need)
	freeOut, freeDir := free(s.out), free(s.dir)
	if freeOut == 0 && logs > 0 {
		return cli.Usagef("export: the iologs need %s in %s and its file system is full (%s): make room there, or give another --output",
			cli.FormatBytes(logs), s.out, describe(s.out))
	}
	if freeOut > 0 && logs > freeOut {
		return cli.Usagef("export: the iologs need %s in %s and its file system has %s free (%s): use --size-scale %s (an iolog's lines scale with it) or a larger --block-size",
			cli.FormatBytes(logs), s.out, cli.FormatBytes(freeOut), describe(s.out), fitScale(s.scale, logs, freeOut))
	}
	if !s.checkDir || freeDir < 0 {
		return nil
	}
	beside := ""
	if same(s.out, s.dir) && logs > 0 {
		freeDir -= logs
		beside = " beside the iologs"
	}
	if data > 0 && freeDir <= 0 {
		state := "is full"
		if beside != "" {
			state = "has no room left" + beside
		}
		return cli.Usagef("export: the job's data files need %s in %s (%s) and its file system %s (%s): make room there, give another --dir, or --no-space-check for a job that runs on another machine",
			cli.FormatBytes(data), s.dir, tiers, state, describe(s.dir))
	}
	if data > freeDir {
		return cli.Usagef("export: the job's data files need %s in %s (%s) and its file system has %s free%s (%s): use --size-scale %s, or --no-space-check for a job that runs on another machine",
			cli.FormatBytes(data), s.dir, tiers, cli.FormatBytes(freeDir), beside, describe(s.dir), fitScale(s.scale, data, freeDir))
	}
	return nil
}

// freeBytes is the free space of path's file system (-1: unknown, 0:
// full).
func (s exportSpace) freeBytes(path string) int64 {
	if s.free != nil {
		return s.free(path)
	}
	return freeBytes(path)
}

// freeBytes is cli.FreeBytes; tests replace it.
var freeBytes = cli.FreeBytes

// spaceGuard keeps the iologs of a trace read once, written as the export
// sizes them, from filling OUTDIR's file system: once they outgrow the
// space it had free (left) they are no longer written, only counted, and
// the export is refused with what they need.
type spaceGuard struct {
	left int64 // the bytes that may still be written; -1: no bound
	over bool  // some were not written
}

// writer is w, guarded.
func (g *spaceGuard) writer(w io.Writer) io.Writer { return guardedWriter{g: g, w: w} }

type guardedWriter struct {
	g *spaceGuard
	w io.Writer
}

func (gw guardedWriter) Write(p []byte) (int, error) {
	g := gw.g
	if !g.over && g.left >= 0 && int64(len(p)) > g.left {
		g.over = true
	}
	if g.over {
		return len(p), nil
	}
	if g.left >= 0 {
		g.left -= int64(len(p))
	}
	return gw.w.Write(p)
}

// reused is the bytes of the extent layout's data files that already
// exist in dir: fio's prep jobs write over them.
func (s exportSpace) reused(need exportNeed) int64 {
	if s.layout != export.LayoutExtent {
		return 0
	}
	var have int64
	for t := range schema.Tier(schema.NumTiers) {
		st := need.st.Tier[t]
		if !st.Exported {
			continue
		}
		if fi, err := os.Stat(path.Join(s.dir, export.ExtentFileName(t))); err == nil && fi.Mode().IsRegular() {
			have += min(fi.Size(), st.FileSize)
		}
	}
	return have
}

// fitScale is the --size-scale that makes need, written at scale, fit in
// free with a tenth to spare: scale divided by a power of two, as 1/N.
func fitScale(scale float64, need, free int64) string {
	d := math.Pow(2, math.Ceil(math.Log2(float64(need)/(0.9*float64(free)))))
	return "1/" + strconv.FormatFloat(math.Round(d/scale), 'f', 0, 64)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// passProgress draws, on a terminal, the progress of export's passes over
// its trace: the share of a file read, or the bytes read of stdin.
type passProgress struct {
	w     io.Writer // nil: stderr is not a terminal
	name  string
	total int64 // the file's size; 0 for stdin
	stop  func()
}

func newPassProgress(stderr io.Writer, name string) *passProgress {
	p := &passProgress{name: name}
	if !cli.IsTerminal(stderr) {
		return p
	}
	p.w = stderr
	if name != "-" {
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
			p.total = fi.Size()
		}
	}
	return p
}

// pass starts a pass named what and returns the counter its reader counts
// the bytes it reads in; the line is redrawn four times a second until
// done or the next pass.
func (p *passProgress) pass(what string) *atomic.Int64 {
	n := new(atomic.Int64)
	p.watch(what, n)
	return n
}

func (p *passProgress) watch(what string, n *atomic.Int64) {
	p.done()
	if p.w == nil {
		return
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				fmt.Fprint(p.w, "\r\033[K"+passLine(what, p.name, n.Load(), p.total))
			}
		}
	}()
	p.stop = func() {
		close(quit)
		wg.Wait()
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// done stops drawing the current pass and clears its line.
func (p *passProgress) done() {
	if p.stop != nil {
		p.stop()
		p.stop = nil
	}
}

// passLine is the progress line of a pass that has read read bytes of
// name, of total (0: unknown, stdin).
func passLine(what, name string, read, total int64) string {
	if name == "-" {
		name = "stdin"
	}
	if total > 0 {
		return fmt.Sprintf("kvtrace: export: %s: %5.1f%% of %s read", what, 100*float64(min(read, total))/float64(total), name)
	}
	return fmt.Sprintf("kvtrace: export: %s: %s of %s read", what, cli.FormatBytes(read), name)
}
