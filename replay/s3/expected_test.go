package s3_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestExpectedAnswersNotFailed: Stats's Failed counts the calls that
// failed, not those whose answer was one the backend asked for and acts
// on: the claim's conditional PUT refused (412: the claim exists), the
// claim's read that finds none (404: it is free, the PUT goes again), a
// service without ListMultipartUploads (501: the objects' check and the
// upload ids the run knows stand alone), and a DELETE of an object that
// is not there (404, as some servers answer it: gone is what was asked).
// They were counted failed, beside the calls the server failed; and the
// DELETE failed the run's Delete, and Close, which said the objects might
// be left.
func TestExpectedAnswersNotFailed(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	var refuse, missing atomic.Int64
	endpoint := hookProxy(t, srv.Endpoint, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		switch {
		case r.Method == http.MethodPut && r.Header.Get("If-None-Match") != "" && refuse.Add(-1) >= 0:
			s3Error(w, http.StatusPreconditionFailed, "PreconditionFailed")
			return true
		case r.Method == http.MethodGet && r.URL.Query().Has("uploads"):
			s3Error(w, http.StatusNotImplemented, "NotImplemented")
			return true
		case r.Method == http.MethodDelete:
			// A server that answers 404 to a DELETE of what is not there
			// (S3 answers 204).
			key := strings.TrimPrefix(r.URL.Path, "/"+bucket+"/")
			if _, err := srv.Client().HeadObject(r.Context(), &awss3.HeadObjectInput{Bucket: aws.String(bucket), Key: &key}); err != nil {
				missing.Add(1)
				s3Error(w, http.StatusNotFound, "NoSuchKey")
				return true
			}
		}
		return false
	})
	// The claim refused once, and gone when read: claimed by a PUT again.
	refuse.Store(1)
	b, err := s3.New(context.Background(), s3.Config{Endpoint: endpoint, Bucket: bucket, Prefix: "bench", RunID: "expected", MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st := b.Stats()
	if st.Requests["PutObject"] != 2 || st.Requests["GetObject"] != 1 || st.Requests["ListMultipartUploads"] != 1 || len(st.Failed) != 0 {
		t.Errorf("New, its claim refused and then free, on a service without ListMultipartUploads: requests %v, failed %v; want 2 PUTs, a GET and a list of uploads, none failed",
			st.Requests, st.Failed)
	}
	// An object of the run that another client deleted.
	ctx := context.Background()
	if err := b.Put(ctx, "k", bytes.NewReader([]byte("bytes")), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(b.RunPrefix() + "k")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "k"); err != nil {
		t.Errorf("Delete of an object gone already, the server answering 404: %v", err)
	}
	// One put and gone again, which Close deletes.
	if err := b.Put(ctx, "left", bytes.NewReader([]byte("bytes")), 5); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client().DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(b.RunPrefix() + "left")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close, an object gone already, the server answering 404: %v", err)
	}
	if missing.Load() != 2 {
		t.Errorf("%d DELETEs answered 404; want 2", missing.Load())
	}
	if st := b.Stats(); len(st.Failed) != 0 {
		t.Errorf("after the run: requests %v, failed %v; want none failed", st.Requests, st.Failed)
	}
	noneUnder(t, srv, "bench/run-expected/")
}
