package s3_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestClaimRefusedThenGone: the claim's conditional PUT is refused, the
// claim existing (412) or another PUT of it in flight (409), and the
// claim is gone when the run reads it (that run gave it up, or its PUT
// failed): the prefix is free, and the run claims it with a PUT again.
// It took the claim it could not read (404) for another run's, and
// refused the prefix. A server that refuses every PUT so is told.
func TestClaimRefusedThenGone(t *testing.T) {
	for _, tc := range []struct {
		status   int
		code     string
		refusals int64
	}{
		{http.StatusPreconditionFailed, "PreconditionFailed", 1},
		{http.StatusConflict, "ConditionalRequestConflict", 2},
		{http.StatusPreconditionFailed, "PreconditionFailed", 3},
	} {
		t.Run(fmt.Sprintf("%s-x%d", tc.code, tc.refusals), func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			var refuse atomic.Int64
			refuse.Store(tc.refusals)
			endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
				if r.Method == http.MethodPut && r.Header.Get("If-None-Match") != "" && refuse.Add(-1) >= 0 {
					s3Error(w, tc.status, tc.code)
					return true
				}
				return false
			})
			b, err := s3.New(context.Background(), s3.Config{Endpoint: endpoint, Bucket: bucket, Prefix: "bench", RunID: "gone", MaxBackoff: time.Millisecond})
			if tc.refusals == 3 {
				if want := "PUT bench/run-gone/.kvreplay-run: refused 3 times for an object that exists, which was not there when read: GET bench/run-gone/.kvreplay-run: HTTP 404 NoSuchKey"; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("New, its claim refused on every PUT: %v; want %q", err, want)
				}
				if err == nil {
					b.Close()
				}
				noneUnder(t, srv, "bench/run-gone/")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			noneUnder(t, srv, "bench/run-gone/")
		})
	}
}

// TestClaimUnreadable: the claim's PUT is made and its answer lost (a
// proxy's 500), the SDK's retry is refused (412: the claim exists), and
// the claim cannot be read back, on every attempt (500): New fails with
// what the read got, not another run's claim, and removes the claim,
// its own, once the server answers. It said another run had claimed the
// prefix, and left its own claim there, refusing every later run of the
// run ID.
func TestClaimUnreadable(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	px.Lose("If-None-Match", 1)
	var fail atomic.Int64
	fail.Store(2)
	endpoint := hookProxy(t, px.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/.kvreplay-run") && fail.Add(-1) >= 0 {
			s3Error(w, http.StatusInternalServerError, "InternalError")
			return true
		}
		return false
	})
	cfg := s3.Config{Endpoint: endpoint, Bucket: bucket, Prefix: "bench", RunID: "unread", MaxAttempts: 2, MaxBackoff: time.Millisecond}
	b, err := s3.New(context.Background(), cfg)
	if err == nil {
		b.Close()
		t.Fatal("New: the claim was taken though it could not be read")
	}
	if px.Lost() != 1 || fail.Load() > 0 {
		t.Fatalf("%d claims' answers lost, %d reads of the claim to fail left; want 1 lost, every failure used", px.Lost(), max(fail.Load(), 0))
	}
	if msg := err.Error(); strings.Contains(msg, "another run claimed") || !strings.Contains(msg, "GET bench/run-unread/.kvreplay-run: HTTP 500 InternalError") ||
		!strings.Contains(msg, "after 2 attempts") {
		t.Errorf("New, the claim unreadable: %v; want the read's failure, not another run's claim", err)
	}
	noneUnder(t, srv, "bench/run-unread/")
	again := newBackend(t, srv.Endpoint, cfg)
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
}
