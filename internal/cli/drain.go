package cli

import (
	"context"
	"io"
	"os"
	"slices"
	"time"
)

// DrainStdin reads and drops what is left of an input piped on stdin
// (names holds "-") once the tool has stopped reading it (a window ended,
// or the run failed), for at most limit, so that the program writing into
// the pipe (kvtrace, which simulates far faster than a replay's pace)
// ends its output and exits 0 rather than dying of a broken pipe, which
// fails a pipeline under `set -o pipefail`. After limit the pipe closes
// when the tool exits. Only a pipe is drained: a file needs nothing, and
// a terminal would wait for its user. A run that a signal stopped (ctx
// done) drains nothing: the pipeline is interrupted anyway, and a
// producer that the signal did not reach, still writing or stalled, would
// keep the tool from ending on it.
func DrainStdin(ctx context.Context, names []string, limit time.Duration) {
	if ctx.Err() != nil || !slices.Contains(names, "-") {
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
