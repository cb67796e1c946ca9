package s3_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

// TestConfigErrors: a failure to load the AWS configuration chain names
// the variable and its value, and says what to do, in one line, as the
// user's input: it had named four variables, any of which might be at
// fault ("s3: the AWS configuration (AWS_PROFILE, AWS_CONFIG_FILE,
// AWS_SHARED_CREDENTIALS_FILE, AWS_CA_BUNDLE): failed to get shared
// config profile, nosuch").
func TestConfigErrors(t *testing.T) {
	srv := start(t, s3test.Options{})
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no such profile", map[string]string{"AWS_PROFILE": "nosuch"},
			"s3: AWS_PROFILE nosuch: no such profile in " + os.Getenv("AWS_CONFIG_FILE")},
		{"CA bundle missing", map[string]string{"AWS_CA_BUNDLE": missing},
			"s3: AWS_CA_BUNDLE " + missing + ": cannot be read (no such file or directory): give the PEM file of the server's CA, or unset AWS_CA_BUNDLE"},
		{"CA bundle not PEM", map[string]string{"AWS_CA_BUNDLE": garbage},
			"s3: AWS_CA_BUNDLE " + garbage + ": holds no PEM certificate: give the PEM file of the server's CA, or unset AWS_CA_BUNDLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			b, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket})
			if err == nil {
				b.Close()
				t.Fatalf("New succeeded; want %q", tc.want)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "\n") || !s3.IsInput(err) {
				t.Errorf("New: %q (input: %v)\nwant one line, the user's input, starting %q", msg, s3.IsInput(err), tc.want)
			}
		})
	}
}
