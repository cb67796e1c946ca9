package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// TestAnswered: a claim that failed with the server's answer (an S3 error,
// an HTTP status) is looked for once, one that got none (the SDK's
// response error of status 0 for a timeout, a cancel, a lost connection)
// again over seconds: it may still land (dropClaim).
func TestAnswered(t *testing.T) {
	status := func(code int, err error) error {
		return fmt.Errorf("operation error S3: PutObject: %w", &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: err}})
	}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"403", status(403, &smithy.GenericAPIError{Code: "AccessDenied"}), true},
		{"500 lost answer", status(500, errors.New("internal error")), true},
		{"timeout", status(0, context.DeadlineExceeded), false},
		{"canceled", status(0, context.Canceled), false},
		{"connection", errors.New("read tcp: connection reset by peer"), false},
	} {
		if got := answered(tt.err); got != tt.want {
			t.Errorf("%s: answered %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestBriefNoResponse: a request that got no response in time, or was
// given up, says so; only one whose connection failed says the
// connection failed ("the connection failed (context deadline exceeded)"
// read as a network fault).
func TestBriefNoResponse(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Put", URL: "http://x/k", Err: context.DeadlineExceeded}, "no response (context deadline exceeded)"},
		{&url.Error{Op: "Put", URL: "http://x/k", Err: context.Canceled}, "no response (context canceled)"},
		{&url.Error{Op: "Put", URL: "http://x/k", Err: io.ErrUnexpectedEOF}, "the connection failed (unexpected EOF)"},
	} {
		if got := brief(fmt.Errorf("operation error S3: PutObject: %w", tt.err)); got != tt.want {
			t.Errorf("brief(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
