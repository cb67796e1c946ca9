package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/outfile"
)

// TestForcedStopListHangs: a signal after the grace ends the process even
// where listing its leftovers hangs (their file system hung: an NFS server
// gone, the very reason the clean-up hangs), as it does where stderr
// blocks. The list was taken before the bounded print, so the handler hung
// in it, the signal caught and not acted on, and no later ^C stopped the
// tool, which the default action, before, did.
func TestForcedStopListHangs(t *testing.T) {
	hung := make(chan struct{})
	defer close(hung)
	var stderr strings.Builder
	f := &forcedStop{tool: "tool", stderr: &stderr, grace: time.Second, left: &outfile.Leftovers{},
		list: func() []outfile.Leftover { <-hung; return nil }}
	done := make(chan struct{})
	go func() {
		f.again(syscall.SIGINT, 2*time.Second)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("again still waits, 10 s on, for a listing of the leftovers that hangs")
	}
}
