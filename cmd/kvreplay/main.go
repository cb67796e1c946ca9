// Command kvreplay executes KV-cache I/O traces against real tiers (GPU
// memory, RAM, NVMe) and measures latency and bandwidth per tier.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/replay"
)

const usage = `kvreplay: replay KV-cache I/O traces against real GPU memory, RAM and NVMe.

Usage:
  kvreplay [options] TRACE...     TRACE is kvbench's or kv-cache.py's; "-" reads stdin

The replay engine is not built yet: kvreplay says so and exits with status 2.

Examples (once built):
  kvreplay --dir /mnt/nvme run.csv.zst -o sysA.json
  kvtrace ... -o - | kvreplay --dir /mnt/nvme - | kvreport -
`

func main() { os.Exit(cli.Main("kvreplay", os.Args[1:], os.Stdout, os.Stderr, run)) }

func run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvreplay", usage, stderr)
	_, version := cli.AddStandard(fs)
	if _, err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *version {
		_, err := fmt.Fprintln(stdout, "kvreplay", cli.Version())
		return err
	}
	return cli.Input(replay.ErrNotImplemented)
}
