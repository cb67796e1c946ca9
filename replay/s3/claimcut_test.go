package s3_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestClaimCutShort: the claim's PUT reaches the server, which makes the
// claim, and its answer never comes; the run gives the claim up, when it
// is interrupted (SIGINT) or when the claim's Timeout passes. New fails,
// saying which, and the claim it made is gone: a claim left behind would
// refuse every later run of that run ID ("holds objects already").
// Removing it is the run's own clean-up, after the run's context is done
// in the first case.
func TestClaimCutShort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
		want    string
	}{
		{"interrupted", 30 * time.Second, true, "the check of the bucket was interrupted: context canceled"},
		// Long enough for the listings before the claim, and the
		// server's claim, on a busy machine (2 s left the claim to land
		// after the run's looks under -race on 2 loaded cores); the
		// claim's answer alone waits it out.
		{"timed out", 5 * time.Second, false, "no answer within 5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			px := s3test.Throttle(t, srv)
			px.Withhold("If-None-Match", 1)
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			cfg := s3.Config{Endpoint: px.Endpoint, Bucket: bucket, Prefix: "bench", RunID: "cut", Timeout: tc.timeout, MaxAttempts: 1}
			done := make(chan error, 1)
			go func() {
				b, err := s3.New(ctx, cfg)
				if err == nil {
					b.Close()
				}
				done <- err
			}()
			if tc.cancel {
				// The claim is made, its answer withheld: the run ends.
				for px.Lost() == 0 {
					select {
					case err := <-done:
						t.Fatalf("New ended before the server made the claim: %v", err)
					case <-time.After(time.Millisecond):
					}
				}
				interrupt()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(tc.timeout + 10*time.Second):
				t.Fatal("New went on 10 s past the claim's end")
			}
			if px.Lost() != 1 {
				t.Fatalf("%d claims made and unanswered, want 1", px.Lost())
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || tc.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("New with its claim cut short: %v; want an error saying %q", err, tc.want)
			}
			noneUnder(t, srv, "bench/run-cut/")
			// The run ID is free again.
			again := newBackend(t, srv.Endpoint, cfg)
			if err := again.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestClaimLandsLate: the claim's PUT reaches the server only after the
// run gave it up (its timeout), half a second later, and the server then
// makes the claim: the run's first look, at once, finds nothing, and it
// looks again (claimLooks, claimGap apart: 2.5 s of room for a slow
// server to land it), so the claim is gone and the run ID free once New
// has returned. Before, the run looked once, and a claim that landed
// after that refused every later run of that ID.
func TestClaimLandsLate(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	px.WithholdLate("If-None-Match", 1, 500*time.Millisecond)
	cfg := s3.Config{Endpoint: px.Endpoint, Bucket: bucket, Prefix: "bench", RunID: "late", Timeout: time.Second, MaxAttempts: 1}
	b, err := s3.New(context.Background(), cfg)
	if err == nil {
		b.Close()
		t.Fatal("New: its claim was answered")
	}
	if !strings.Contains(err.Error(), "no answer within 1s") {
		t.Errorf("New: %v; want its claim's timeout", err)
	}
	// The proxy counts the late PUT once the server answered it, which
	// may come after the run's look found its claim.
	for end := time.Now().Add(10 * time.Second); px.Lost() == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if px.Lost() != 1 {
		t.Fatalf("%d claims reached the server late, want 1", px.Lost())
	}
	noneUnder(t, srv, "bench/run-late/")
	again := newBackend(t, srv.Endpoint, cfg)
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
