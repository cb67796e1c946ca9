package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/trace"
)

// ownsProgressLine reports whether kvtrace may rewrite a progress line on
// stderr: when stderr is a terminal and the trace does not go down a pipe,
// where the tool reading it (kvreplay) shows its own progress on the same
// terminal and two \r-rewritten lines would overwrite each other.
func ownsProgressLine(stdout, stderr io.Writer, tracePath string) bool {
	if !cli.IsTerminal(stderr) {
		return false
	}
	if tracePath != "-" {
		return true
	}
	f, ok := stdout.(*os.File)
	if !ok {
		return true
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeNamedPipe == 0 && st.Mode()&os.ModeSocket == 0
}

// simulate runs the simulation of opt and writes its trace, sidecar and
// statistics.
func simulate(ctx context.Context, opt *simOptions, args []string, stdout, stderr io.Writer) error {
	cfg := &opt.Config
	// A request trace on a named pipe waits for its writer in open: under
	// ctx, so that ^C ends the wait. "-" is standard input.
	cfg.OpenInput = func(path string) (io.ReadCloser, error) { return cli.OpenInput(ctx, path) }
	// A kv-cache.py command line without --io-trace-log asks for its
	// statistics (--output): on a terminal, the trace goes nowhere.
	noTrace := false
	if opt.TracePath == "-" && cli.IsTerminal(stdout) {
		if opt.TraceGiven || opt.OutputPath == "" || opt.OutputPath == "-" {
			return cli.Usagef("refusing to write a trace to a terminal: give --io-trace-log FILE (-o FILE) or pipe stdout")
		}
		noTrace = true
	}
	dialect, err := trace.ParseDialect(opt.Format)
	if err != nil {
		return cli.Input(fmt.Errorf("--format %s: want kvbench or mlperf", quoteArg(opt.Format)))
	}
	if err := checkSimFiles(opt); err != nil {
		return err
	}
	wopt := trace.WriterOptions{Dialect: dialect, Base: cfg.EpochBase, Level: opt.Level, Compression: trace.CompressionFor(opt.TracePath)}
	if opt.Zstd {
		wopt.Compression = trace.CompressZstd
	}
	var out io.Writer = stdout
	var file *cli.OutputFile
	if noTrace {
		out = io.Discard
	} else if opt.TracePath != "-" {
		if file, err = cli.CreateFile(ctx, opt.TracePath); err != nil {
			return cli.Input(fmt.Errorf("--io-trace-log %s: %w", quoteArg(opt.TracePath), cli.UnwrapPath(err)))
		}
		defer file.Abort()
		out = file
	}
	w, err := trace.NewWriter(out, wopt)
	if err != nil {
		return cli.Input(err)
	}
	// The Writer only checks and copies rows here: its own goroutines
	// format, compress and count them (for the sidecar), beside the
	// simulation.
	sink := w.Write
	began := time.Now()
	var progress sim.Progress
	if ownsProgressLine(stdout, stderr, opt.TracePath) {
		last := time.Now()
		progress = func(now, end time.Duration, rows int64) {
			if time.Since(last) < 250*time.Millisecond {
				return
			}
			last = time.Now()
			fmt.Fprintf(stderr, "\rkvtrace: %5.1f%%  %.0f of %.0f s simulated, %d rows", 100*now.Seconds()/max(end.Seconds(), 1e-9), now.Seconds(), end.Seconds(), rows)
		}
	}
	hooks := sim.Hooks{Progress: progress}
	var dump *latencyDump
	if opt.LatencyDump != "" {
		if dump, err = openLatencyDump(ctx, opt.LatencyDump); err != nil {
			return err
		}
		defer dump.abort()
		hooks.Completed = dump.write
	}
	res, err := sim.RunWithHooks(ctx, cfg, sink, hooks)
	if progress != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		w.Abort()
		return simError(cfg, err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	// The trace, its sidecar, the latency dump and the statistics are put
	// in place together, or none is (commitOutputs): a trace never lies
	// beside an earlier run's sidecar, whose measured window and counts
	// are not its own.
	var outs []simOutput
	if dump != nil {
		if err := dump.flush(); err != nil {
			return err
		}
		if f := dump.file(); f != nil {
			outs = append(outs, simOutput{"--latency-dump", f})
		}
	}
	wall := time.Since(began)
	var notes []string
	if file != nil {
		outs = append(outs, simOutput{"--io-trace-log", file})
		if !file.InPlace() {
			meta, err := writeSidecar(ctx, opt.TracePath, sidecar(cfg, opt, res, w, args))
			if err != nil {
				return err
			}
			defer meta.Abort()
			outs = append(outs, simOutput{"--io-trace-log " + opt.TracePath + ": its sidecar", meta})
		} else {
			notes = append(notes, cli.Sidecar(opt.TracePath))
		}
	}
	writeStats := func(f io.Writer) error {
		enc := json.NewEncoder(f)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if opt.OutputPath != "" && opt.OutputPath != "-" {
		f, err := cli.CreateFile(ctx, opt.OutputPath)
		if err != nil {
			return cli.Input(fmt.Errorf("--output %s: %w", quoteArg(opt.OutputPath), cli.UnwrapPath(err)))
		}
		defer f.Abort()
		if err := writeStats(f); err != nil {
			return fmt.Errorf("--output %s: %w", quoteArg(opt.OutputPath), cli.UnwrapPath(err))
		}
		outs = append(outs, simOutput{"--output", f})
	}
	if err := commitOutputs(outs); err != nil {
		return err
	}
	if opt.OutputPath == "-" {
		if err := writeStats(stdout); err != nil {
			return fmt.Errorf("--output -: %w", err)
		}
	}
	switch {
	case noTrace:
		fmt.Fprintf(stderr, "kvtrace: no --io-trace-log and stdout is a terminal: the trace (%d rows) was not written; statistics -> %s\n",
			w.Rows(), opt.OutputPath)
	case cli.IsTerminal(stderr):
		// The line may hold a downstream tool's progress: clear it first.
		fmt.Fprintf(stderr, "\r\033[Kkvtrace: %d rows, %d requests, %.1f s of virtual time in %.2f s -> %s\n",
			w.Rows(), res.RequestsCompleted, res.Kvbench.EndS, wall.Seconds(), opt.TracePath)
	}
	for _, n := range append(notes, cfg.NoEffect...) {
		fmt.Fprintf(stderr, "kvtrace: note: %s\n", n)
	}
	for _, w := range res.Kvbench.Warnings {
		fmt.Fprintf(stderr, "kvtrace: warning: %s\n", w)
	}
	for _, d := range res.Kvbench.Departures {
		fmt.Fprintf(stderr, "kvtrace: note: %s\n", d)
	}
	return nil
}

// simOutput is a file a simulation writes, with the flag that names it in
// messages.
type simOutput struct {
	flag string
	f    *cli.OutputFile
}

// commitOutputs puts every output of a simulation in place, or none
// (outfile.CloseAll); its error names the flag of the output that failed.
func commitOutputs(outs []simOutput) error {
	files := make([]*cli.OutputFile, len(outs))
	for i, o := range outs {
		files[i] = o.f
	}
	err := outfile.CloseAll(files...)
	if err == nil {
		return nil
	}
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok {
		return err
	}
	for _, o := range outs {
		if o.f.Name() != pe.Path {
			continue
		}
		if err == error(pe) {
			return fmt.Errorf("%s %s: %w", o.flag, quoteArg(pe.Path), cli.UnwrapPath(pe))
		}
		return fmt.Errorf("%s: %w", o.flag, err) // it says more: the outputs already in place
	}
	return err
}

// writeSidecar writes m into a new output at the sidecar's path of the
// trace at tracePath, which the caller completes with the trace
// (commitOutputs).
func writeSidecar(ctx context.Context, tracePath string, m *trace.Meta) (*cli.OutputFile, error) {
	flag := "--io-trace-log " + quoteArg(tracePath) + ": its sidecar"
	path := trace.MetaPath(tracePath)
	f, err := cli.CreateFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, quoteArg(path), cli.UnwrapPath(err))
	}
	if _, err := m.WriteTo(f); err != nil {
		_ = f.Abort()
		return nil, fmt.Errorf("%s %s: %w", flag, quoteArg(path), cli.UnwrapPath(err))
	}
	return f, nil
}

// sidecar describes the trace for its .meta.json.
func sidecar(cfg *sim.Config, opt *simOptions, res *sim.Result, w *trace.Writer, args []string) *trace.Meta {
	model := cfg.Models[cfg.Model]
	shown := *cfg
	shown.Models = map[string]sim.Model{cfg.Model: model}
	conf, _ := json.Marshal(shown)
	conf = schema.SnakeCaseKeys(conf) // the key convention of result documents, which carry it
	m := &trace.Meta{
		FormatVersion:     trace.FormatVersion,
		Dialect:           opt.Format,
		Tool:              "kvtrace",
		ToolVersion:       cli.Version(),
		CommandLine:       append([]string{"kvtrace"}, args...),
		Seed:              cfg.Seed,
		Model:             cfg.Model,
		BytesPerToken:     model.BytesPerToken(),
		TensorParallel:    cfg.TensorParallel,
		TierCapacityBytes: res.Kvbench.TierCapacityBytes,
		PeakLiveBytes:     res.Kvbench.PeakLiveBytes,
		MeasuredFrom:      res.Kvbench.MeasuredFromS,
		Counts:            w.Counts(),
		Config:            conf,
		// An Option made OPEN is said where the trace's replays carry it
		// (kvreplay keeps the sidecar in its result), not on stderr alone.
		Notes: append(slices.Clone(res.Kvbench.Notes), opt.MLPerfOpen...),
	}
	if opt.Format == "mlperf" {
		m.EpochBase = float64(cfg.EpochBase.UnixMicro()) / 1e6
		// The dialect drops the Delete rows: what they deleted stays live
		// in the trace, and a replay sizes its tiers from these peaks.
		m.PeakLiveBytes = res.Kvbench.PeakLiveBytesNoDeletes
	}
	return m
}
