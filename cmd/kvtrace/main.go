// Command kvtrace simulates the KV cache of LLM inference in virtual time and
// writes its I/O trace; kvtrace inspect summarises any trace, kvbench's or
// the reference kv-cache.py's.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
)

func main() { os.Exit(cli.Main("kvtrace", os.Args[1:], os.Stdout, os.Stderr, run)) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "help" {
		// kvtrace help [COMMAND]: the command's --help.
		switch {
		case len(args) == 1:
			return runSimulate(ctx, []string{"--help"}, stdout, stderr)
		case len(args) == 2 && (args[1] == "inspect" || args[1] == "models" || args[1] == "export"):
			args = []string{args[1], "--help"}
		default:
			return cli.Usagef("help %s: no such command (want kvtrace help [inspect|models|export])", strings.Join(args[1:], " "))
		}
	}
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return runInspect(ctx, args[1:], stdout, stderr)
		case "models":
			return runModels(ctx, args[1:], stdout, stderr)
		case "export":
			return runExport(ctx, args[1:], stdout, stderr)
		}
	}
	return runSimulate(ctx, args, stdout, stderr)
}

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opt, err := parseSimFlags(args, stderr)
	if err != nil {
		return err
	}
	if len(opt.Args) > 0 {
		return cli.Usagef("unknown command %q (want inspect, models, export or help, or options for a simulation)", opt.Args[0])
	}
	for _, w := range opt.Warnings {
		fmt.Fprintf(stderr, "kvtrace: warning: %s\n", w)
	}
	return simulate(ctx, opt, args, stdout, stderr)
}
