// Command kvreport merges kvreplay result documents (trials, ranks,
// systems), computes statistics and comparisons, and renders reports.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/report"
)

const usage = `kvreport: merge, compare and render kvreplay results.

Usage:
  kvreport [options] RESULT...    RESULT is a kvreplay document; "-" reads stdin

The report engine is not built yet: kvreport says so and exits with status 2.

Examples (once built):
  kvreport sysA.json sysB.json
  kvreport merge rank*.json -o all.json
`

func main() { os.Exit(cli.Main("kvreport", os.Args[1:], os.Stdout, os.Stderr, run)) }

func run(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("kvreport", usage, stderr)
	_, version := cli.AddStandard(fs)
	if _, err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *version {
		_, err := fmt.Fprintln(stdout, "kvreport", cli.Version())
		return err
	}
	return cli.Input(report.ErrNotImplemented)
}
