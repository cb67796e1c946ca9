package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/outfile"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/reqtrace"
	"github.com/kvbench/kvbench/trace"
)

// checkSimFiles refuses, before the simulation, the files it would read
// and cannot (checkInputs), outputs it must not write (an input, each
// other, a system path, a file at the sidecar's path that is not a
// sidecar; see cli.Files: --io-trace-log, --output and --latency-dump)
// and an --output or --latency-dump it could not write.
func checkSimFiles(opt *simOptions) error {
	if errs := checkInputs(&opt.Config); len(errs) > 0 {
		return cli.Input(errors.Join(errs...))
	}
	cfg := &opt.Config
	files := cli.Files{AllowSystem: opt.AllowSystem}
	for _, in := range []cli.File{{Flag: "--request-trace", Path: cfg.RequestTrace}, {Flag: "--dataset-path", Path: cfg.DatasetPath},
		{Flag: "--config", Path: opt.ConfigPath}} {
		if in.Path != "" {
			files.Inputs = append(files.Inputs, in)
		}
	}
	if cfg.UseBurstTrace && cfg.BurstTracePath != "" && cfg.RequestTrace == "" && cfg.DatasetPath == "" {
		// The files the run reads: a directory's CSV files too, which an
		// output must not replace.
		m, _ := sim.BurstFiles(cfg.BurstTracePath)
		for _, p := range m {
			files.Inputs = append(files.Inputs, cli.File{Flag: "--burst-trace-path", Path: p})
		}
	}
	sidecar := opt.TracePath != "-" && cli.Sidecar(opt.TracePath) == ""
	files.Outputs = append(files.Outputs, cli.File{Flag: "--io-trace-log", Path: opt.TracePath, Sidecar: sidecar})
	if opt.OutputPath != "" {
		files.Outputs = append(files.Outputs, cli.File{Flag: "--output", Path: opt.OutputPath})
	}
	if opt.LatencyDump != "" {
		files.Outputs = append(files.Outputs, cli.File{Flag: "--latency-dump", Path: opt.LatencyDump})
	}
	errs := files.Check()
	if len(errs) == 0 && sidecar {
		if err := checkSidecar(opt.TracePath, opt.Force); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return cli.Input(errors.Join(errs...))
	}
	if err := probeOutput("--output", opt.OutputPath); err != nil {
		return err
	}
	if sidecar {
		// Put in place with the trace (commitOutputs), but created
		// after the simulation: one that cannot be created fails now,
		// not after the work.
		if err := probeOutput("--io-trace-log "+opt.TracePath+": its sidecar", trace.MetaPath(opt.TracePath)); err != nil {
			return err
		}
	}
	return probeOutput("--latency-dump", opt.LatencyDump)
}

// checkSidecar refuses to replace what lies at the sidecar's path of the
// trace output path unless it is a trace's sidecar (an earlier run's, which
// the trace it describes replaces too), or force: a user's file of that
// name is not kvtrace's to destroy.
func checkSidecar(tracePath string, force bool) error {
	path := trace.MetaPath(tracePath)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--io-trace-log %s: its sidecar %s: %w", quoteArg(tracePath), quoteArg(path), cli.UnwrapPath(err))
	case !fi.Mode().IsRegular():
		return fmt.Errorf("--io-trace-log %s: its sidecar's path %s is a %v, not a file: refusing to write the sidecar there", quoteArg(tracePath), quoteArg(path), fi.Mode().Type())
	case force:
		return nil
	}
	if m, err := trace.ReadMeta(tracePath); err == nil && m.FormatVersion > 0 && m.Tool != "" {
		return nil
	}
	return fmt.Errorf("--io-trace-log %s: %s exists and is not a trace's sidecar: refusing to replace it (move it away, or pass --force)", quoteArg(tracePath), quoteArg(path))
}

// checkInputs refuses, before the simulation, a request trace, ShareGPT
// dataset or BurstGPT path that the run would read and cannot: each error
// names the flag and the file (exit 2).
func checkInputs(cfg *sim.Config) []error {
	switch {
	case cfg.RequestTrace != "":
		return checkInputFile("--request-trace", cfg.RequestTrace)
	case cfg.DatasetPath != "":
		return checkInputFile("--dataset-path", cfg.DatasetPath)
	case cfg.UseBurstTrace && cfg.BurstTracePath != "":
		p := cfg.BurstTracePath
		m, err := sim.BurstFiles(p)
		if err != nil {
			return []error{err}
		}
		if len(m) == 1 && m[0] == p {
			return checkInputFile("--burst-trace-path", p)
		}
		return nil
	}
	return nil
}

// checkInputFile refuses a path given to flag that is not a readable file.
// A named pipe is only checked for read permission: opening it would wait
// for its writer (the simulation opens it, under the signal context).
func checkInputFile(flag, path string) []error {
	if path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Type() == os.ModeNamedPipe {
		if err := syscall.Access(path, 4 /* R_OK */); err != nil {
			return []error{fmt.Errorf("%s %s: %w", flag, quoteArg(path), err)}
		}
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return []error{fmt.Errorf("%s %s: %w", flag, quoteArg(path), cli.UnwrapPath(err))}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return []error{fmt.Errorf("%s %s: a directory (want a file)", flag, quoteArg(path))}
	}
	return nil
}

// simError is the error of a simulation that failed: malformed content in
// a request trace, dataset or BurstGPT file is the user's input (exit 2),
// named by its flag and file rather than by the packages that read it.
func simError(cfg *sim.Config, err error) error {
	var pe *reqtrace.ParseError
	if errors.Is(err, sim.ErrNoRequests) {
		// Bad input: the message names the flag and the file.
		return cli.Input(err)
	}
	if !errors.As(err, &pe) {
		return fmt.Errorf("simulation: %w", err)
	}
	flag := "--burst-trace-path"
	switch pe.File {
	case cfg.RequestTrace:
		flag = "--request-trace"
	case cfg.DatasetPath:
		flag = "--dataset-path"
	}
	return cli.Input(fmt.Errorf("%s %s", flag, strings.TrimPrefix(pe.Error(), "reqtrace: ")))
}

// probeOutput creates and discards path's temporary file, so that an
// output that cannot be written fails before the simulation, not after it.
// An output written in place (a device, FIFO or socket) is not opened
// twice: a FIFO's reader would see the first close as the end.
func probeOutput(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if t, err := outfile.Classify(path); err == nil && t.Kind == outfile.InPlace {
		return nil
	}
	f, err := cli.CreateFile(context.Background(), path)
	if err != nil {
		return cli.Input(fmt.Errorf("%s %s: %w", flag, quoteArg(path), cli.UnwrapPath(err)))
	}
	return f.Abort()
}
