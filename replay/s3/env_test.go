package s3_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
	"github.com/kvbench/kvbench/schema"
)

// TestEndpointCredentialsFromEnv: an endpoint from the environment
// (AWS_ENDPOINT_URL_S3) that carries credentials in its URL never reaches
// the result's tier path nor the messages: it is refused, as
// --s3-endpoint's is, naming the variable.
func TestEndpointCredentialsFromEnv(t *testing.T) {
	srv := start(t, s3test.Options{})
	secret := "hunter2-" + srv.SecretKey
	t.Setenv("AWS_ENDPOINT_URL_S3", strings.Replace(srv.Endpoint, "://", "://"+srv.AccessKey+":"+secret+"@", 1))
	b, err := s3.New(context.Background(), s3.Config{Bucket: bucket})
	if err == nil {
		var pi schema.PathInfo
		b.Describe(&pi)
		js, _ := json.Marshal(pi)
		b.Close()
		t.Fatalf("an endpoint with credentials in AWS_ENDPOINT_URL_S3 was taken; the tier path reads %s", js)
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL_S3") || !s3.IsInput(err) {
		t.Errorf("error %q (input %v): want a refusal naming AWS_ENDPOINT_URL_S3, without the secret", err, s3.IsInput(err))
	}
}

// TestCABundleOverHTTP: AWS_CA_BUNDLE set (as a proxy's CA is in many
// environments) does not stop a run against an http endpoint.
func TestCABundleOverHTTP(t *testing.T) {
	tls := s3test.Start(t, s3test.Options{TLS: true})
	srv := start(t, s3test.Options{})
	t.Setenv("AWS_CA_BUNDLE", tls.CAFile)
	b := newBackend(t, srv.Endpoint, s3.Config{})
	if err := b.Put(context.Background(), "k", strings.NewReader("bytes"), 5); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", filepath.Join(t.TempDir(), "missing.pem"))
	_, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket})
	if err == nil || !strings.Contains(err.Error(), "AWS_CA_BUNDLE") || !s3.IsInput(err) {
		t.Errorf("AWS_CA_BUNDLE naming no file: %v, want an input error naming it", err)
	}
}
