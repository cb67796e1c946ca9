package main

import (
	"context"
	"fmt"

	"github.com/kvbench/kvbench/internal/cli"
)

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
