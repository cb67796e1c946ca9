package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
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

// TestObjectReplacedSameSize: an object of the run that another client
// replaced with other bytes of the same size passes the size checks
// (Content-Range, Content-Length): only its ETag tells. Every GET of the
// run carries the ETag that its PUT or CompleteMultipartUpload answered as
// If-Match, which costs no request: the server refuses the GET (412), and
// the read fails at once, saying so. A server that ignores If-Match (the
// proxy answers the GET without it) answers with the new object's ETag, which the client
// checks. The replacement was read as the run's bytes, in the run's
// figures. The run's own objects, of one PUT and multipart, read as
// before, and a rewrite (WriteAt over an object written whole) takes its
// new ETag.
func TestObjectReplacedSameSize(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	var ignore atomic.Bool
	var conditional, gets atomic.Int64
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/run-") {
			gets.Add(1)
			if r.Header.Get("If-Match") != "" {
				conditional.Add(1)
			}
			if ignore.Load() {
				// A server that ignores If-Match: the GET without it (the
				// header is signed: the proxy makes the request itself).
				key := strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")
				in := &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: &key}
				if rg := r.Header.Get("Range"); rg != "" {
					in.Range = &rg
				}
				out, err := srv.Client().GetObject(r.Context(), in)
				if err != nil {
					s3Error(w, http.StatusInternalServerError, "InternalError")
					return true
				}
				defer out.Body.Close()
				w.Header().Set("ETag", aws.ToString(out.ETag))
				w.Header().Set("Content-Length", strconv.FormatInt(aws.ToInt64(out.ContentLength), 10))
				status := http.StatusOK
				if out.ContentRange != nil {
					w.Header().Set("Content-Range", *out.ContentRange)
					status = http.StatusPartialContent
				}
				w.WriteHeader(status)
				io.Copy(w, out.Body)
				return true
			}
		}
		return false
	})
	b := newBackend(t, endpoint, s3.Config{PartSize: s3.MinPartSize, MaxAttempts: 3, MaxBackoff: time.Millisecond})
	defer b.Close()
	ctx := context.Background()
	const small, big = 64 << 10, s3.MinPartSize + 64<<10
	n := 0
	for _, size := range []int64{small, big} {
		for _, how := range []string{"Put", "WriteAt"} {
			for _, ignored := range []bool{false, true} {
				n++
				name := fmt.Sprintf("%d-%s-ignored=%v", size, how, ignored)
				t.Run(name, func(t *testing.T) {
					ignore.Store(ignored)
					defer ignore.Store(false)
					key := fmt.Sprintf("k%d", n)
					p := make([]byte, size)
					replaytest.Fill(p, uint64(n), 0)
					switch how {
					case "Put":
						if err := b.Put(ctx, key, bytes.NewReader(p), size); err != nil {
							t.Fatal(err)
						}
					case "WriteAt":
						o, err := b.Open(key, size, true)
						if err != nil {
							t.Fatal(err)
						}
						if _, err := o.WriteAt(p, 0); err != nil {
							t.Fatal(err)
						}
						o.Close()
					}
					// Its own bytes read as the run wrote them.
					q := make([]byte, 4096)
					if _, err := b.GetRange(ctx, key, q, 4096); err != nil || !bytes.Equal(q, p[4096:8192]) {
						t.Fatalf("GetRange of the run's own object: %v", err)
					}
					// A rewrite of a block: a GET and a PUT of the whole, whose
					// new ETag later reads carry.
					if how == "WriteAt" {
						o, err := b.Open(key, size, false)
						if err != nil {
							t.Fatal(err)
						}
						replaytest.Fill(p[:4096], uint64(n)+100, 0)
						if _, err := o.WriteAt(p[:4096], 0); err != nil {
							t.Fatalf("rewrite: %v", err)
						}
						if _, err := o.ReadAt(q, 0); err != nil || !bytes.Equal(q, p[:4096]) {
							t.Fatalf("a read after a rewrite: %v", err)
						}
						o.Close()
					}
					// Another client's bytes of the same size in its place.
					other := bytes.Clone(p)
					other[size/2] ^= 0xff
					srv.Put(t, bucket, b.RunPrefix()+key, other)
					want := "another client replaced"
					before := b.Stats()
					reads := []struct {
						what string
						do   func() error
					}{
						{"GetRange", func() error { _, err := b.GetRange(ctx, key, q, 4096); return err }},
						{"Get", func() error { return b.Get(ctx, key, &memWriterAt{p: make([]byte, size)}, size) }},
						{"ReadAt of a block", func() error {
							o, err := b.Open(key, size, false)
							if err != nil {
								return err
							}
							defer o.Close()
							_, err = o.ReadAt(q, 0)
							return err
						}},
					}
					for _, rd := range reads {
						if err := rd.do(); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
							t.Errorf("%s of an object replaced with as many bytes: %v; want one line saying %q", rd.what, err, want)
						}
					}
					after := b.Stats()
					// Get of a multipart object is a GET a part, at once: the
					// first failure abandons the others (not counted failed).
					if r, f := after.Retries-before.Retries, after.Failed["GetObject"]-before.Failed["GetObject"]; r != 0 || f < int64(len(reads)) {
						t.Errorf("%d retries, %d GETs failed; want none retried (the object stays as it is), %d failed at least", r, f, len(reads))
					}
				})
			}
		}
	}
	if c, g := conditional.Load(), gets.Load(); c == 0 || c != g {
		t.Errorf("%d of %d GETs of the run's objects carried If-Match; want all", c, g)
	}
}
