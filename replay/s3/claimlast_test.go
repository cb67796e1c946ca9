package s3_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestClaimRemovedLast: Close removes the run's claim after it has
// listed and emptied the run's prefix, not before: a run of the same id
// that starts once the claim is gone finds the prefix its own, and Close
// took that run's claim (and would take its objects and uploads) for
// this run's leftovers. Here the other run starts as Close lists the
// prefix.
func TestClaimRemovedLast(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
	}}
	var (
		closing atomic.Bool
		once    sync.Once
		other   *s3.Backend
		otherEr error
	)
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if closing.Load() && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
			// Another run of the same id starts now, on the server itself.
			once.Do(func() {
				other, otherEr = s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, RunID: "same"})
			})
		}
		rp.ServeHTTP(w, r)
	}))
	defer px.Close()
	b := newBackend(t, px.URL, s3.Config{RunID: "same"})
	if err := b.Put(context.Background(), "k", nil, 0); err != nil {
		t.Fatal(err)
	}
	closing.Store(true)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if otherEr != nil {
		// Refused: the prefix was still claimed.
		if !strings.Contains(otherEr.Error(), "holds objects already") {
			t.Errorf("the other run: %v, want a refusal of a prefix that holds objects", otherEr)
		}
		return
	}
	if other == nil {
		t.Fatal("Close listed no objects")
	}
	defer other.Close()
	if keys := srv.Keys(t, bucket); !slices.Contains(keys, "run-same/.kvreplay-run") {
		t.Errorf("the other run's claim was removed by this run's Close: the bucket holds %q", keys)
	}
}
