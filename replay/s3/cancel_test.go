package s3_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestInterrupted: the run's context (SIGINT, SIGTERM) ends a request the
// server stopped answering at once, not after every attempt's Timeout, and
// Close then removes what the run made from a server that answers again,
// or, from one that stays silent, stops once it answered nothing for
// CleanupGrace, and says what is left and how to remove it.
func TestInterrupted(t *testing.T) {
	for _, answers := range []bool{true, false} {
		t.Run(map[bool]string{true: "server answers again", false: "server stays silent"}[answers], func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			px := s3test.Throttle(t, srv)
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			// Without the run's context a read would take 2 attempts of 5 s.
			// A server that answers has all the clean-up needs, even on
			// a busy machine.
			grace := 200 * time.Millisecond
			if answers {
				grace = time.Minute
			}
			b, err := s3.New(ctx, s3.Config{Endpoint: px.Endpoint, Bucket: bucket, PartSize: s3.MinPartSize, MaxAttempts: 2,
				MaxBackoff: time.Millisecond, Timeout: 5 * time.Second, CleanupGrace: grace})
			if err != nil {
				t.Fatal(err)
			}
			prefix := b.RunPrefix()
			const size = 64 << 10
			p := make([]byte, size)
			replaytest.Fill(p, 11, 0)
			o, err := b.Open("k", size, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.WriteAt(p, 0); err != nil {
				t.Fatal(err)
			}
			// An object whose first part is up: an unfinished upload.
			big, err := b.Open("big", s3.MinPartSize+size, true)
			if err != nil {
				t.Fatal(err)
			}
			part := make([]byte, s3.MinPartSize)
			if _, err := big.WriteAt(part, 0); err != nil {
				t.Fatal(err)
			}

			px.Hang(s3test.Silent)
			read := make(chan error, 1)
			go func() {
				_, err := o.ReadAt(make([]byte, size), 0)
				read <- err
			}()
			// The GET is at the server, unanswered.
			for px.Hung() == 0 {
				select {
				case err := <-read:
					t.Fatalf("the read ended before the server took it: %v", err)
				case <-time.After(time.Millisecond):
				}
			}
			begin := time.Now()
			interrupt()
			select {
			case err = <-read:
			case <-time.After(3 * time.Second):
				t.Fatal("a read from a silent server went on 3 s past the run's end")
			}
			if took := time.Since(begin); err == nil || !errors.Is(err, context.Canceled) || took > 2*time.Second ||
				!strings.HasSuffix(err.Error(), "GET "+prefix+"k: abandoned, the run having been interrupted") {
				t.Errorf("the interrupted read: %v after %v; want context.Canceled within 2 s, saying so", err, took)
			}
			if _, err := big.WriteAt(p, s3.MinPartSize); err == nil || !errors.Is(err, context.Canceled) {
				t.Errorf("a write after the run's end: %v, want it to fail at once", err)
			}
			o.Close()
			big.Close()

			if answers {
				px.Hang(s3test.Answer)
			}
			begin = time.Now()
			err = b.Close()
			took := time.Since(begin)
			// Every request the server was sent is counted, and none
			// that was not (one made after the run's end).
			st := b.Stats()
			if sent := px.Served() + px.Hung(); st.Total()+st.Retries != sent {
				t.Errorf("the backend counts %d requests (%v) and %d retries; the server was sent %d", st.Total(), st.Requests, st.Retries, sent)
			}
			if answers {
				if err != nil {
					t.Errorf("Close after an interrupted run, the server answering: %v", err)
				}
				noneUnder(t, srv, prefix)
				return
			}
			if took > 2*grace+2*time.Second {
				t.Errorf("Close took %v against a silent server; want it within 2 graces of %v of the run's end", took, grace)
			}
			for _, want := range []string{"s3: close: the run's objects and unfinished uploads may be left under s3://" + bucket + "/" + prefix + " at " + px.Endpoint,
				"aws --endpoint-url " + px.Endpoint + " s3 rm --recursive s3://" + bucket + "/" + prefix,
				"the run was interrupted, and the clean-up stopped when the server answered nothing for 200ms"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Close against a silent server: %v; want %q", err, want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("Close's error is more than one line: %q", err)
			}
		})
	}
}

// TestInterruptedCheck: the run's end during New's check of a server that
// does not answer ends it at once, in a line that says so.
func TestInterruptedCheck(t *testing.T) {
	srv := start(t, s3test.Options{})
	px := s3test.Throttle(t, srv)
	px.Hang(s3test.Silent)
	ctx, interrupt := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s3.New(ctx, s3.Config{Endpoint: px.Endpoint, Bucket: bucket, RunID: "check"})
		done <- err
	}()
	for px.Hung() == 0 {
		select {
		case err := <-done:
			t.Fatalf("New ended before the server took its check: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	interrupt()
	var err error
	select {
	case err = <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("New went on 3 s past the run's end")
	}
	want := "s3: s3://" + bucket + "/run-check/ at " + px.Endpoint + ": the check of the bucket was interrupted: context canceled"
	if err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Errorf("New interrupted: %v; want %q", err, want)
	}
}
