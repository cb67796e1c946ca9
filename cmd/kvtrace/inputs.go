package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/sim"
	"github.com/kvbench/kvbench/sim/reqtrace"
)

// checkSimFiles refuses, before the simulation, the files it would read
// and cannot (checkInputs) and an --output it could not write.
func checkSimFiles(opt *simOptions) error {
	if errs := checkInputs(&opt.Config); len(errs) > 0 {
		return cli.Input(errors.Join(errs...))
	}
	return probeOutput("--output", opt.OutputPath)
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
		if strings.ContainsAny(p, "*?[") {
			if m, err := filepath.Glob(p); err == nil && len(m) == 0 {
				return []error{fmt.Errorf("--burst-trace-path %s: no file matches", p)}
			}
			return nil // a malformed pattern: the simulation says so
		}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if m, _ := filepath.Glob(filepath.Join(p, "*.csv")); len(m) == 0 {
				return []error{fmt.Errorf("--burst-trace-path %s: a directory with no *.csv file", p)}
			}
			return nil
		}
		return checkInputFile("--burst-trace-path", p)
	}
	return nil
}

// checkInputFile refuses a path given to flag that is not a readable file.
func checkInputFile(flag, path string) []error {
	f, err := os.Open(path)
	if err != nil {
		return []error{fmt.Errorf("%s %s: %w", flag, path, cli.UnwrapPath(err))}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return []error{fmt.Errorf("%s %s: a directory (want a file)", flag, path)}
	}
	return nil
}

// simError is the error of a simulation that failed: malformed content in
// a request trace, dataset or BurstGPT file is the user's input (exit 2),
// named by its flag and file rather than by the packages that read it.
func simError(cfg *sim.Config, err error) error {
	var pe *reqtrace.ParseError
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
func probeOutput(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	f, err := cli.CreateAtomic(path)
	if err != nil {
		return cli.Input(fmt.Errorf("%s %s: %w", flag, path, cli.UnwrapPath(err)))
	}
	return f.Abort()
}
