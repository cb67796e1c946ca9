package s3_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
	"github.com/kvbench/kvbench/schema"
)

// TestTTFBOfRetriedGet: a GET's time to first byte runs from the call to
// the first byte of the response that brought the bytes, its earlier
// attempts and the backoff between them included, as the operation's
// latency includes them: the caller waited for them, and a TTFB that left
// them out would hide throttling that the latency shows, and could pass
// the first byte's time of the read past its end. The result says how
// many of the GETs timed so took more than one attempt (get_ttfb_retried);
// it did not, so a TTFB's tail could not be told from a slow server.
func TestTTFBOfRetriedGet(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	const slow = 150 * time.Millisecond
	var refuse atomic.Int64
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) bool {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/run-") || refuse.Add(-1) < 0 {
			return false
		}
		select {
		case <-time.After(slow):
		case <-stop:
		}
		s3Error(w, http.StatusServiceUnavailable, "SlowDown")
		return true
	})
	b := newBackend(t, endpoint, s3.Config{MaxAttempts: 3, MaxBackoff: time.Millisecond})
	defer b.Close()
	ctx := context.Background()
	const size = 64 << 10
	p := make([]byte, size)
	replaytest.Fill(p, 4, 0)
	if err := b.Put(ctx, "k", bytes.NewReader(p), size); err != nil {
		t.Fatal(err)
	}
	o, err := b.Open("k", size, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	fr, ok := o.(backend.FirstByteReader)
	if !ok {
		t.Fatal("an s3 Object is no FirstByteReader")
	}
	q := make([]byte, size)
	refuse.Store(1)
	start := time.Now()
	_, first, err := fr.ReadAtFirstByte(q, 0)
	end := time.Now()
	if err != nil || !bytes.Equal(q, p) {
		t.Fatalf("a read whose first attempt was throttled: %v", err)
	}
	if first.Sub(start) < slow || first.After(end) {
		t.Errorf("first byte %v after the read's start, which took %v; want at least the throttled attempt's %v, within the read", first.Sub(start), end.Sub(start), slow)
	}
	st := b.Stats()
	if st.TTFB.Count != 1 || st.TTFB.MinUS < float64(slow.Microseconds()) || st.TTFBRetried != 1 || st.Retries != 1 || st.Throttled != 1 {
		t.Errorf("after a GET throttled once: ttfb of %d GETs, min %.0f us, %d of them retried, %d retries, %d throttled; want 1 of at least %d us, retried, 1 retry, 1 throttled",
			st.TTFB.Count, st.TTFB.MinUS, st.TTFBRetried, st.Retries, st.Throttled, slow.Microseconds())
	}
	// A GET of one attempt is not retried.
	if _, err := b.GetRange(ctx, "k", q[:4096], 0); err != nil {
		t.Fatal(err)
	}
	st = b.Stats()
	if st.TTFB.Count != 2 || st.TTFBRetried != 1 {
		t.Errorf("after a GET of one attempt more: ttfb of %d GETs, %d retried; want 2, 1", st.TTFB.Count, st.TTFBRetried)
	}
	var pi schema.PathInfo
	b.Describe(&pi)
	if pi.S3.GetTTFB.Count != 2 || pi.S3.GetTTFBRetried != 1 {
		t.Errorf("the result's get_ttfb of %d GETs, get_ttfb_retried %d; want 2, 1", pi.S3.GetTTFB.Count, pi.S3.GetTTFBRetried)
	}
}
