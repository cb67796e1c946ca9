package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
	"github.com/kvbench/kvbench/trace"
)

// checkPaths refuses, before anything runs, a trace that is a directory, a
// --dir that names something other than a directory, a --device kvreplay
// must not overwrite, and a -o it must not write (a system path, a trace
// or a trace's sidecar: cli.Files).
func checkPaths(o *options) []error {
	files := cli.Files{AllowSystem: o.allowSystem}
	for _, tr := range o.traces {
		files.Inputs = append(files.Inputs, cli.File{Flag: "trace", Path: tr, Sidecar: true})
	}
	if o.output != "" {
		files.Outputs = append(files.Outputs, cli.File{Flag: "-o", Path: o.output})
	}
	errs := files.Check()
	for _, tr := range o.traces {
		if fi, err := os.Stat(tr); err == nil && fi.IsDir() {
			errs = append(errs, fmt.Errorf("trace %s: a directory (want a trace file, or - for stdin)", tr))
		}
	}
	if o.dir != "" {
		fi, err := os.Stat(o.dir)
		switch {
		case err == nil && !fi.IsDir():
			errs = append(errs, fmt.Errorf("--dir %s: not a directory", o.dir))
		case errors.Is(err, fs.ErrNotExist) && !o.mkdir:
			// A typo, or a drive not mounted at /mnt/nvme, must not
			// benchmark the disk that holds the root instead.
			errs = append(errs, fmt.Errorf("--dir %s: does not exist: create it, or pass --mkdir", o.dir))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("--dir %s: %w", o.dir, cli.UnwrapPath(err)))
		}
	}
	opts := o.setupOptions(nil, nil)
	if err := opts.CheckDevice(o.traces, o.output); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// inputError reports whether the replay stopped on the user's input: a
// malformed trace row found mid-stream (a pipe is not prescanned), or a row
// on a tier --tier-map leaves unmapped. kvreplay then exits 2, after
// writing the partial result.
func inputError(err error) bool {
	var pe *trace.ParseError
	return errors.As(err, &pe) || errors.Is(err, replay.ErrUnmappedTier) || errors.Is(err, replay.ErrNoUsers)
}

// openOutput creates -o's temporary file before the replay, so that a path
// that cannot be written fails now (exit 2), not after the whole replay.
// The result goes into it at the end (writeResult); run aborts it on
// failure.
func openOutput(ctx context.Context, o *options) error {
	if o.output == "" || o.output == "-" {
		return nil
	}
	f, err := cli.CreateFile(ctx, o.output)
	if err != nil {
		return cli.Input(fmt.Errorf("-o %s: %w", o.output, cli.UnwrapPath(err)))
	}
	o.out = f
	return nil
}
