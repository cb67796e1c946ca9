package s3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// hookProxy starts a proxy in front of the server at endpoint, closed at
// the test's end, that shows each request to hook first: hook answers it
// itself (true) or leaves it, maybe changed, to the server (false).
// Requests hook holds end when their client gives them up, or at the
// test's end.
func hookProxy(t *testing.T, endpoint string, hook func(w http.ResponseWriter, r *http.Request, stop <-chan struct{}) bool) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		// The client signed the Host it sent: keep it.
		r.Out.Host = r.In.Host
	}}
	stop := make(chan struct{})
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hook(w, r, stop) {
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(px.Close)
	// First: the held requests end, so that Close does not wait for them.
	t.Cleanup(func() { close(stop) })
	return px.URL
}

// s3Error answers the S3 error code with status.
func s3Error(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>test</Message></Error>`))
}

// TestObjectChangedBehindRun: an object of the run that another client
// replaced or truncated has another size than the run wrote, and its
// bytes are not the run's. A read of it fails, saying so, at once (not
// retried): a ranged GET's Content-Range total and a whole GET's
// Content-Length are checked against the size the run wrote, and the
// range the server sent against the range asked. A block read within the
// new object's bytes was read as if it were the run's. Here the server
// answers the run's PUTs with no ETag, so that its GETs carry no If-Match
// and the sizes alone tell (a server that checks If-Match refuses them
// before: TestObjectReplacedSameSize).
func TestObjectChangedBehindRun(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	noETag := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		ModifyResponse: func(r *http.Response) error {
			r.Header.Del("ETag")
			return nil
		},
	}
	// shift answers a GET of the range 4096-8191 with the range before it,
	// and its (true) Content-Range: a server that sends another range
	// than the one asked.
	var shift atomic.Bool
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/run-") {
			noETag.ServeHTTP(w, r)
			return true
		}
		if !shift.Load() || r.Method != http.MethodGet || r.Header.Get("Range") != "bytes=4096-8191" {
			return false
		}
		key := strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")
		out, err := srv.Client().GetObject(r.Context(), &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: &key, Range: aws.String("bytes=0-4095")})
		if err != nil {
			s3Error(w, http.StatusInternalServerError, "InternalError")
			return true
		}
		defer out.Body.Close()
		w.Header().Set("Content-Range", aws.ToString(out.ContentRange))
		w.Header().Set("Content-Length", strconv.FormatInt(aws.ToInt64(out.ContentLength), 10))
		w.WriteHeader(http.StatusPartialContent)
		io.Copy(w, out.Body)
		return true
	})
	b := newBackend(t, endpoint, s3.Config{MaxAttempts: 3, MaxBackoff: time.Millisecond})
	defer b.Close()
	const size = 64 << 10
	p := make([]byte, size)
	replaytest.Fill(p, 9, 0)
	for _, tc := range []struct {
		name    string
		replace int    // the size of the object another client puts in its place; 0: none
		read    string // "block": 4 KiB at 4 KiB (a ranged GET); "whole": Get (a GET of the whole)
		want    string
	}{
		{"truncated, a block", size / 2, "block", "the object has 32768 bytes, not the 65536 the run wrote: another client replaced or truncated it"},
		{"grown, a block", 2 * size, "block", "the object has 131072 bytes, not the 65536 the run wrote: another client replaced or truncated it"},
		{"truncated before the block", 2048, "block", "the object is shorter than the run wrote it: another client replaced or truncated it"},
		{"truncated, whole", size / 2, "whole", "the object has 32768 bytes, not the 65536 the run wrote: another client replaced or truncated it"},
		{"another range", 0, "block", "the server sent bytes 0-4095 of the object, not the 4096-8191 asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := strings.ReplaceAll(tc.name, " ", "_")
			key = strings.ReplaceAll(key, ",", "")
			if err := b.Put(context.Background(), key, bytes.NewReader(p), size); err != nil {
				t.Fatal(err)
			}
			if tc.replace > 0 {
				other := make([]byte, tc.replace)
				replaytest.Fill(other, 9, 0) // the run's bytes where they overlap: only the size tells
				srv.Put(t, bucket, b.RunPrefix()+key, other)
			}
			shift.Store(tc.replace == 0)
			defer shift.Store(false)
			before := b.Stats()
			var err error
			switch tc.read {
			case "block":
				q := make([]byte, 4096)
				_, err = b.GetRange(context.Background(), key, q, 4096)
				if err == nil && !bytes.Equal(q, p[4096:8192]) {
					t.Errorf("the block read differs from the run's")
				}
			case "whole":
				err = b.Get(context.Background(), key, &memWriterAt{p: make([]byte, size)}, size)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("a read of an object changed behind the run: %v; want one line saying %q", err, tc.want)
			}
			after := b.Stats()
			if r := after.Retries - before.Retries; r != 0 || after.Failed["GetObject"]-before.Failed["GetObject"] != 1 {
				t.Errorf("%d retries, %d GETs failed; want none retried (the object stays as it is), one failed",
					r, after.Failed["GetObject"]-before.Failed["GetObject"])
			}
		})
	}
	// The run's own objects read as before.
	if err := b.Put(context.Background(), "mine", bytes.NewReader(p), size); err != nil {
		t.Fatal(err)
	}
	q := make([]byte, 4096)
	if n, err := b.GetRange(context.Background(), "mine", q, 4096); n != len(q) || err != nil || !bytes.Equal(q, p[4096:8192]) {
		t.Errorf("GetRange of the run's own object = %d, %v", n, err)
	}
	w := &memWriterAt{p: make([]byte, size)}
	if err := b.Get(context.Background(), "mine", w, size); err != nil || !bytes.Equal(w.p, p) {
		t.Errorf("Get of the run's own object: %v", err)
	}
}
