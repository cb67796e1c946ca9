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
// requests complete. The file is complete only when the run is.
type latencyDump struct {
	path string
	out  io.WriteCloser // "-" is stdout
	bw   *bufio.Writer
	enc  *json.Encoder
}

func openLatencyDump(ctx context.Context, path string) (*latencyDump, error) {
	out, err := cli.CreateOutput(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("--latency-dump %s: %w", path, cli.UnwrapPath(err))
	}
	d := &latencyDump{path: path, out: out, bw: bufio.NewWriterSize(out, 64<<10)}
	d.enc = json.NewEncoder(d.bw)
	return d, nil
}

// write is sim.Hooks.Completed.
func (d *latencyDump) write(c *sim.Completion) error {
	if err := d.enc.Encode(c); err != nil {
		return fmt.Errorf("--latency-dump %s: %w", d.path, err)
	}
	return nil
}

// close completes the file.
func (d *latencyDump) close() error {
	err := d.bw.Flush()
	if cerr := d.out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.abort()
		return fmt.Errorf("--latency-dump %s: %w", d.path, cli.UnwrapPath(err))
	}
	return nil
}

// abort discards an unfinished file.
func (d *latencyDump) abort() {
	if a, ok := d.out.(interface{ Abort() error }); ok {
		a.Abort()
	}
}
