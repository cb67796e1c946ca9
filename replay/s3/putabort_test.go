package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestPutAbortGrace: a Put in parts interrupted (its context done) while
// its parts are at a server that stopped answering aborts its upload as
// Close's clean-up does: past the interruption, but no longer than
// CleanupGrace without an answer. The abort waited for every attempt's
// Timeout (here 2 of 3 s). From a server that answers, the abort goes
// through, and no upload is left.
func TestPutAbortGrace(t *testing.T) {
	for _, answers := range []bool{false, true} {
		t.Run(map[bool]string{false: "server stays silent", true: "server answers the abort"}[answers], func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			var hang atomic.Bool
			var parts, aborts atomic.Int64
			endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) bool {
				q := r.URL.Query()
				part, abort := q.Has("partNumber"), r.Method == http.MethodDelete && q.Has("uploadId")
				if abort {
					aborts.Add(1)
				}
				if !hang.Load() || !part && !(abort && !answers) {
					return false
				}
				if part {
					parts.Add(1)
				}
				io.Copy(io.Discard, r.Body)
				select {
				case <-r.Context().Done():
				case <-stop:
				}
				return true
			})
			const grace = 200 * time.Millisecond
			b := newBackend(t, endpoint, s3.Config{RunID: "abort", PartSize: s3.MinPartSize, MaxAttempts: 2, MaxBackoff: time.Millisecond,
				Timeout: 3 * time.Second, CleanupGrace: grace})
			hang.Store(true)
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			done := make(chan error, 1)
			go func() {
				done <- b.Put(ctx, "big", bytes.NewReader(make([]byte, 2*s3.MinPartSize)), 2*s3.MinPartSize)
			}()
			for parts.Load() < 2 {
				select {
				case err := <-done:
					t.Fatalf("Put ended before its parts were at the server: %v", err)
				case <-time.After(time.Millisecond):
				}
			}
			begin := time.Now()
			interrupt()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("Put went on 20 s past its interruption")
			}
			took := time.Since(begin)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("the interrupted Put: %v, want context.Canceled", err)
			}
			if aborts.Load() == 0 {
				t.Error("the interrupted Put did not abort its upload")
			}
			if took > grace+time.Second {
				t.Errorf("the interrupted Put returned %v after its interruption; want its abort given up a grace of %v after", took, grace)
			}
			if answers {
				// Aborted by the Put, not by Close.
				for _, k := range srv.Keys(t, bucket) {
					if strings.HasPrefix(k, "upload:") {
						t.Errorf("after the interrupted Put the bucket holds %q", k)
					}
				}
			}
			hang.Store(false)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			noneUnder(t, srv, b.RunPrefix())
		})
	}
}

// TestPartFailureEndsOthers: a part of a Put that fails after its
// attempts dooms the upload, and ends the parts not yet sent (here one
// request at a time); a Put's or Get's failure is one line, the first
// failure's. Every part was still sent, through all its attempts, and
// the error was every part's, a line each.
func TestPartFailureEndsOthers(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	var refuse atomic.Bool
	var parts atomic.Int64
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		if !refuse.Load() || !r.URL.Query().Has("partNumber") {
			return false
		}
		parts.Add(1)
		io.Copy(io.Discard, r.Body)
		s3Error(w, http.StatusInternalServerError, "InternalError")
		return true
	})
	b := newBackend(t, endpoint, s3.Config{PartSize: s3.MinPartSize, Concurrency: 1, MaxAttempts: 2, MaxBackoff: time.Millisecond})
	ctx := context.Background()
	const size = 4 * s3.MinPartSize
	refuse.Store(true)
	err := b.Put(ctx, "refused", bytes.NewReader(make([]byte, size)), size)
	refuse.Store(false)
	if err == nil || !strings.Contains(err.Error(), "InternalError") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a Put whose parts are refused: %v; want one line saying why", err)
	}
	// The first part's 2 attempts, and at most one more part's (taking the
	// request slot the first gave back before it was seen to fail).
	if n := parts.Load(); n > 4 {
		t.Errorf("%d parts' attempts sent after the first part failed; want at most 4 of the 4 parts' 8", n)
	}
	// The parts abandoned are not failures the server made.
	if got, refused := b.Stats().Failed["UploadPart"], (parts.Load()+1)/2; got > refused {
		t.Errorf("%d UploadParts counted failed; the server refused at most %d (the others were abandoned)", got, refused)
	}
	// Each part of an object truncated behind the run fails.
	p := make([]byte, size)
	if err := b.Put(ctx, "k", bytes.NewReader(p), size); err != nil {
		t.Fatal(err)
	}
	srv.Put(t, bucket, b.RunPrefix()+"k", p[:size/2])
	err = b.Get(ctx, "k", &memWriterAt{p: make([]byte, size)}, size)
	if err == nil || !strings.Contains(err.Error(), "another client replaced or truncated it") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a Get of an object truncated behind the run: %v; want one line saying so", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, b.RunPrefix())
}
