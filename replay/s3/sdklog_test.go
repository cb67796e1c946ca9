package s3_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestSDKPrintsNothing: the AWS SDK writes nothing of its own on stderr,
// where kvreplay's error is one line. With no credentials and an EC2
// metadata service that refuses IMDSv2's token (as one behind a proxy
// here did), the SDK printed "SDK 2026/11/27 ... WARN falling back to
// IMDSv1: operation error ec2imds: getToken, ..." before kvreplay's line.
func TestSDKPrintsNothing(t *testing.T) {
	srv := start(t, s3test.Options{})
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer imds.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "")
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	b, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket})
	os.Stderr = stderr
	w.Close()
	printed, _ := io.ReadAll(r)
	if err == nil {
		b.Close()
		t.Fatal("New without credentials succeeded")
	}
	if !strings.Contains(err.Error(), "no AWS credentials found for "+srv.Endpoint) {
		t.Errorf("New without credentials: %v; want it to say none were found", err)
	}
	if len(printed) != 0 {
		t.Errorf("the SDK printed on stderr: %q; want nothing but kvreplay's own error", printed)
	}
}
