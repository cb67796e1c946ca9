package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/sim"
)

// latencyDump is --latency-dump: one JSON line per completed request (its
// id, user, QoS class, phase, arrival and completion times, end-to-end and
// storage latency, tokens, and whether it met --slo-ms), in the order
// requests complete. The file is complete only when the run is, and is
// put in place with the trace.
type latencyDump struct {
	path string
	out  io.WriteCloser // "-" is stdout
	bw   *bufio.Writer
	enc  *json.Encoder
}

func openLatencyDump(ctx context.Context, path string) (*latencyDump, error) {
	out, err := cli.CreateOutput(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("--latency-dump %s: %w", quoteArg(path), cli.UnwrapPath(err))
	}
	d := &latencyDump{path: path, out: out, bw: bufio.NewWriterSize(out, 64<<10)}
	d.enc = json.NewEncoder(d.bw)
	return d, nil
}

// write is sim.Hooks.Completed.
func (d *latencyDump) write(c *sim.Completion) error {
	if err := d.enc.Encode(c); err != nil {
		return fmt.Errorf("--latency-dump %s: %w", quoteArg(d.path), err)
	}
	return nil
}

// flush writes out what the buffer holds. The file is completed with the
// simulation's other outputs (commitOutputs), or aborted.
func (d *latencyDump) flush() error {
	if err := d.bw.Flush(); err != nil {
		return fmt.Errorf("--latency-dump %s: %w", quoteArg(d.path), cli.UnwrapPath(err))
	}
	return nil
}

// file returns the dump's output file, or nil when it goes to standard
// output, which has nothing to complete.
func (d *latencyDump) file() *cli.OutputFile {
	f, _ := d.out.(*cli.OutputFile)
	return f
}

// abort discards an unfinished file.
func (d *latencyDump) abort() {
	if a, ok := d.out.(interface{ Abort() error }); ok {
		a.Abort()
	}
}
