// Command kvtrace simulates the KV cache of LLM inference in virtual time and
// writes its I/O trace; kvtrace inspect summarises any trace, kvbench's or
// the reference kv-cache.py's.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/sim"
)

const usage = `kvtrace: simulate an LLM serving system's KV cache and write its I/O trace.

Usage:
  kvtrace [options] -o TRACE          simulate and write a trace (not built yet)
  kvtrace inspect [--json] TRACE...   summarise traces; "-" reads stdin

Commands:
  inspect   rows, time span, objects, bytes and rows by operation x tier x
            phase, object sizes, cold reads, Evict pairs, sidecar metadata

Examples:
  kvtrace inspect run.csv.zst
  kvtrace inspect --json kv-cache-trace.csv | jq '.by_op_tier_phase'
  zstd -dc run.csv.zst | kvtrace inspect -
`

func main() { os.Exit(cli.Main("kvtrace", os.Args[1:], os.Stdout, os.Stderr, run)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return runInspect(ctx, args[1:], stdout, stderr)
		}
	}
	return runSimulate(ctx, args, stdout, stderr)
}

func runSimulate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvtrace", usage, stderr)
	_, version := cli.AddStandard(fs)
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if *version {
		_, err := fmt.Fprintln(stdout, "kvtrace", cli.Version())
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("unknown command %q (want inspect, or options for a simulation)", rest[0])
	}
	return cli.Input(sim.ErrNotImplemented)
}
