package main

import (
	"context"
	"io"
	"os"
	"slices"
	"time"
)

// drainLimit bounds how long kvreplay reads what is left of a piped trace
// after its replay stopped early.
const drainLimit = 10 * time.Second

// drainStdin reads and drops what is left of a trace piped on stdin once
// the replay has stopped reading it (a --duration window ended, or the
// run failed), for at most limit, so that the program writing into the
// pipe (kvtrace, which simulates far faster than a replay's pace) ends
// its trace and exits 0 rather than dying of a broken pipe, which fails a
// pipeline under `set -o pipefail`. After limit the pipe closes when
// kvreplay exits. Only a pipe is drained: a file needs nothing, and a
// terminal would wait for its user. A run that a signal stopped (ctx
// done) drains nothing: the pipeline is interrupted anyway, and a
// producer that the signal did not reach, still writing or stalled, would
// keep kvreplay from ending on it.
func drainStdin(ctx context.Context, traces []string, limit time.Duration) {
	if ctx.Err() != nil || !slices.Contains(traces, "-") {
		return
	}
	if fi, err := os.Stdin.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
	}
}
