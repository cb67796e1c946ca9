package s3

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// client is the S3 client of a Backend: aws-sdk-go-v2's, a semaphore that
// bounds the requests in flight, and the counters.
type client struct {
	s3       *s3.Client
	bucket   string
	endpoint string // for messages: the URL, or "AWS S3 (region)"
	// from names where the endpoint came from, for messages that tell
	// what to change: "--s3-endpoint http://...", "AWS_ENDPOINT_URL_S3
	// http://...", or AWS's own for the region.
	from     string
	credErr  error  // the chain found no credentials
	region   string // the requests are signed for
	path     string // the endpoint's path, "" when none
	sem      chan struct{}
	timeout  time.Duration // Config.Timeout
	attempts int           // Config.MaxAttempts, or AWS_MAX_ATTEMPTS's
	stats    stats
	secrets  []string // scrubbed from every error
	server   atomic.Pointer[string]
	down     atomic.Pointer[error] // the server was unreachable: every request fails so
	idle     func()                // closes idle connections
	bufs     sync.Pool             // *[]byte of 256 KiB, for bodies streamed into a WriterAt
}

// newClient loads the AWS configuration chain and makes the client.
func newClient(ctx context.Context, cfg *Config) (*client, error) {
	c := &client{bucket: cfg.Bucket, sem: make(chan struct{}, cfg.Concurrency), timeout: cfg.Timeout, attempts: cfg.MaxAttempts}
	c.bufs.New = func() any {
		p := make([]byte, 256<<10)
		return &p
	}
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient(cfg)),
		// The SDK's own warnings ("falling back to IMDSv1" while it looks
		// for credentials) would come on stderr before kvreplay's one
		// line; what goes wrong reaches the user through the errors.
		config.WithLogger(logging.Nop{}),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = cfg.MaxAttempts
				if cfg.MaxBackoff > 0 {
					o.MaxBackoff = cfg.MaxBackoff
				}
				// A benchmark counts throttling instead of failing once a
				// client-side retry budget is spent.
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	ac, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, usage(configError(err))
	}
	if ac.Region == "" {
		ac.Region = "us-east-1"
	}
	endpoint, err := c.resolveEndpoint(cfg, &ac)
	if err != nil {
		return nil, err
	}
	c.endpoint, c.region = endpoint, ac.Region
	if u, err := url.Parse(endpoint); err == nil && strings.Trim(u.Path, "/") != "" {
		c.path = u.Path
	}
	if endpoint == "" {
		c.endpoint = "AWS S3 (" + ac.Region + ")"
		c.from = "AWS S3's endpoint for region " + ac.Region + " (no --s3-endpoint)"
	}
	c.keepSecrets(ctx, &ac)
	if h, ok := ac.HTTPClient.(*awshttp.BuildableClient); ok {
		// The transport as the chain left it (AWS_CA_BUNDLE's roots), in a
		// client of ours, so that Close can drop its connections.
		tr := h.GetTransport()
		ac.HTTPClient = &http.Client{Transport: tr}
		c.idle = tr.CloseIdleConnections
	}
	c.s3 = s3.NewFromConfig(ac, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
		// The bytes are checked end to end by --verify; a checksum of every
		// request would cost the client CPU that rclone does not spend.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.APIOptions = append(o.APIOptions, c.countAttempts)
	})
	// AWS_MAX_ATTEMPTS (max_attempts) overrides Config.MaxAttempts in the
	// SDK's retries: in a GET's retries of a body cut short too.
	if r := c.s3.Options().Retryer; r != nil && r.MaxAttempts() > 0 {
		c.attempts = r.MaxAttempts()
	}
	return c, nil
}

// configError names the variable and value behind a failure to load the
// AWS configuration chain, and what to do.
func configError(err error) error {
	var np config.SharedConfigProfileNotExistError
	var pe *fs.PathError
	ca := os.Getenv("AWS_CA_BUNDLE")
	switch {
	case errors.As(err, &np):
		files := np.Filename
		if len(files) == 0 {
			files = []string{cmp.Or(os.Getenv("AWS_CONFIG_FILE"), config.DefaultSharedConfigFilename()),
				cmp.Or(os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), config.DefaultSharedCredentialsFilename())}
		}
		return fmt.Errorf("s3: AWS_PROFILE %s: no such profile in %s: name one they define (or set AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE to the files that do)", np.Profile, strings.Join(files, " or "))
	case ca != "" && errors.As(err, &pe) && pe.Path == ca:
		return fmt.Errorf("s3: AWS_CA_BUNDLE %s: cannot be read (%w): give the PEM file of the server's CA, or unset AWS_CA_BUNDLE", ca, pe.Err)
	case ca != "" && strings.Contains(err.Error(), "CA bundle"):
		return fmt.Errorf("s3: AWS_CA_BUNDLE %s: holds no PEM certificate: give the PEM file of the server's CA, or unset AWS_CA_BUNDLE", ca)
	}
	return fmt.Errorf("s3: the AWS configuration (AWS_PROFILE, AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CA_BUNDLE): %w", err)
}

// httpClient is the client's HTTP transport for cfg: a connection for
// each request in flight, kept for the next, over HTTP/1.1.
func httpClient(cfg *Config) *awshttp.BuildableClient {
	conc := cfg.Concurrency
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		// Every request in flight keeps its connection for the next.
		tr.MaxIdleConns = 2 * conc
		tr.MaxIdleConnsPerHost = 2 * conc
		tr.ResponseHeaderTimeout = 2 * time.Minute
		tr.DisableCompression = true
		// HTTP/1.1, a connection for each request in flight, as S3
		// serves and as --s3-concurrency says: a server that offers
		// HTTP/2 over TLS (as a Go server does by default) had every request
		// multiplexed on one connection, one TCP stream.
		tr.ForceAttemptHTTP2 = false
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		if tr.TLSClientConfig != nil {
			// The SDK's transport, cloned, offers h2 in the handshake.
			tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
		tr.WriteBufferSize = 64 << 10
		tr.ReadBufferSize = 64 << 10
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &idleConn{Conn: nc, timeout: cfg.Timeout}, nil
		}
		// An idle connection goes before its read deadline can.
		tr.IdleConnTimeout = cfg.Timeout / 2
	})
}

// resolveEndpoint finds the endpoint as the SDK would (--s3-endpoint, then
// AWS_ENDPOINT_URL_S3, then the configuration's) and records where it came
// from; one from the environment that carries credentials is refused.
func (c *client) resolveEndpoint(cfg *Config, ac *aws.Config) (string, error) {
	endpoint := cfg.Endpoint
	c.from = "--s3-endpoint " + endpoint
	if endpoint == "" && os.Getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") != "true" {
		// The service's own variable wins over the global one, as in the SDK.
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
		c.from = "AWS_ENDPOINT_URL_S3 " + endpoint + " (no --s3-endpoint)"
	}
	if endpoint == "" && ac.BaseEndpoint != nil {
		endpoint = *ac.BaseEndpoint
		c.from = "the AWS configuration's endpoint " + endpoint + " (AWS_ENDPOINT_URL or endpoint_url; no --s3-endpoint)"
	}
	if u, err := url.Parse(endpoint); endpoint != cfg.Endpoint && err == nil && u.User != nil {
		// The endpoint is written in the result and in messages: one that
		// carries credentials is refused, as --s3-endpoint's is, and not
		// echoed.
		from := "AWS_ENDPOINT_URL_S3"
		if endpoint != os.Getenv(from) {
			from = "the AWS configuration's endpoint (AWS_ENDPOINT_URL or endpoint_url)"
		}
		return "", usage(fmt.Errorf("s3: %s carries credentials in the URL: give them through the AWS environment or profile instead", from))
	}
	return endpoint, nil
}

// keepSecrets retrieves the credentials once, keeping them to scrub from
// messages, or why there are none.
func (c *client) keepSecrets(ctx context.Context, ac *aws.Config) {
	if ac.Credentials == nil {
		c.credErr = errors.New("no credential provider")
	} else if cr, err := ac.Credentials.Retrieve(ctx); err != nil {
		c.credErr = err
	} else {
		for _, s := range []string{cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken} {
			if len(s) >= 4 {
				c.secrets = append(c.secrets, s)
			}
		}
	}
}

// close releases the idle connections.
func (c *client) close() {
	if c.idle != nil {
		c.idle()
	}
}

// countAttempts adds, below the retry loop, a step that sees every
// attempt's response: it counts the attempts (the requests written,
// those Go's transport sends again by itself included), the throttling
// responses among them, and notes the server's name.
func (c *client) countAttempts(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("kvbenchAttempts",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			// The requests written: Go's transport sends a GET again by
			// itself when its kept connection closed before any answer,
			// an attempt the SDK never sees; one that failed before a
			// byte was written (a dial) is an attempt too.
			var wrote atomic.Int64
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Add(1) }})
			out, md, err := next.HandleDeserialize(ctx, in)
			op := opIndex(awsmiddleware.GetOperationName(ctx))
			c.stats.attempts[op].Add(max(1, wrote.Load()))
			if r, ok := out.RawResponse.(*smithyhttp.Response); ok {
				if r.StatusCode == http.StatusServiceUnavailable || r.StatusCode == http.StatusTooManyRequests {
					c.stats.throttled[op].Add(1)
				}
				if c.server.Load() == nil {
					if s := r.Header.Get("Server"); s != "" {
						c.server.Store(&s)
					}
				}
			}
			return out, md, err
		}), middleware.After)
}

// acquire takes a slot of the requests in flight. Once a request found
// the server unreachable after all its attempts, every later one fails at
// once with that error: a run whose server went away stops in seconds,
// not after every object's retries.
func (c *client) acquire(ctx context.Context) error {
	if err := c.down.Load(); err != nil {
		return *err
	}
	if err := ctx.Err(); err != nil {
		// Not a request: none is sent, none counted (a free slot would
		// win the select below half the time).
		return err
	}
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *client) release() { <-c.sem }

// probe asks the server once, past the breaker, whether it answers again
// after a request found it down: one list of prefix, one attempt, within
// Timeout. An answer (the server's error too) closes the breaker, so that
// Close's clean-up removes what the run made; none leaves it as it was.
func (c *client) probe(ctx context.Context, prefix string) {
	if c.down.Load() == nil {
		return
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer c.release()
	pctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := c.s3.ListObjectsV2(pctx, &s3.ListObjectsV2Input{Bucket: &c.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1)},
		func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	c.stats.done(opList, err)
	if err == nil || answered(err) {
		c.down.Store(nil)
	}
}

// unsigned sends a body without hashing it for the signature (the
// UNSIGNED-PAYLOAD of SigV4), as the AWS CLI does over https: the bytes
// are the benchmark's, checked by --verify.
var unsigned = s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)

// put stores p as the whole object name, and returns its ETag (etagOf).
func (c *client) put(ctx context.Context, name string, p []byte) (string, error) {
	return c.putFrom(ctx, name, bytes.NewReader(p), int64(len(p)))
}

// putFrom stores the size bytes of body as the whole object name, and
// returns its ETag (etagOf); a retry seeks body back to its start.
func (c *client) putFrom(ctx context.Context, name string, body io.ReadSeeker, size int64) (string, error) {
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	sb := &sentBody{r: body}
	out, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &c.bucket, Key: &name, Body: sb, ContentLength: aws.Int64(size)}, unsigned)
	c.stats.done(opPut, err)
	c.stats.sent(size, sb.n.Load(), err)
	if err != nil {
		return "", c.wrap("PUT", name, err)
	}
	return etagOf(out.ETag), nil
}

// etagOf is an ETag as a server sent it, without its quotes: the opaque
// tag that identifies one version of an object's bytes, "" when none
// came, or when it is weak (W/, which S3 never sends but a gateway might:
// a weak tag never matches an If-Match, RFC 9110 13.1.1, so it could only
// fail every read). A multipart object's ("<md5 of the parts'
// md5s>-<parts>") is no MD5 of its bytes, and is compared as the tag it
// is, never computed.
func etagOf(s *string) string {
	t := strings.TrimSpace(aws.ToString(s))
	if strings.HasPrefix(t, "W/") {
		return ""
	}
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		t = t[1 : len(t)-1]
	}
	return t
}

// claimPuts bounds create's conditional PUTs of a claim: one refused
// for a claim that is gone when read (the run that held it gave it up,
// or a PUT in flight beside it failed) is sent again.
const claimPuts = 3

// create stores object name holding token unless one exists, by a
// conditional PUT (If-None-Match: *), which a server that takes it makes
// atomic: of two such PUTs of one name, one succeeds. made is false when
// the server refused it because the object exists (412 Precondition
// Failed, or 409 Conditional Request Conflict while another such PUT of it
// was in flight) and the object read back is not this token's: a retry
// of a PUT the server had done, whose answer was lost, finds its own
// object, which is made. A refused PUT whose object is not there when
// read is sent again (up to claimPuts in all); err is the request's
// failure otherwise, the PUT's (501 Not Implemented: a server without
// conditional writes, unsupported) or the read's (after its attempts):
// an object that cannot be read is nobody's claim yet.
func (c *client) create(ctx context.Context, name string, token []byte) (made bool, err error) {
	if err := c.acquire(ctx); err != nil {
		return false, err
	}
	defer c.release()
	for try := 1; ; try++ {
		_, err = c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &c.bucket, Key: &name, Body: bytes.NewReader(token), ContentLength: aws.Int64(int64(len(token))),
			IfNoneMatch: aws.String("*")}, unsigned)
		var ae smithy.APIError
		exists := errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict")
		// The refusal is the answer asked for, and one of a server without
		// conditional writes is acted on (checkPrefix): neither is a
		// failure.
		c.stats.doneExpecting(opPut, err, exists || unsupported(err))
		if !exists {
			return err == nil, c.wrap("PUT", name, err)
		}
		got, err := c.read(ctx, name, int64(len(token)))
		var nk *types.NoSuchKey
		switch {
		case err == nil:
			return bytes.Equal(got, token), nil
		case !errors.As(err, &nk):
			return false, c.wrap("GET", name, err)
		case try == claimPuts:
			return false, fmt.Errorf("PUT %s: refused %d times for an object that exists, which was not there when read: %w", name, try, c.wrap("GET", name, err))
		}
		select {
		case <-time.After(time.Duration(try) * 50 * time.Millisecond):
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// read returns object name, when it has at most n bytes (n+1 of it
// otherwise). It is a check whether the object is there (the claim's):
// one that is not (NoSuchKey) is an answer, not a failure.
func (c *client) read(ctx context.Context, name string, n int64) ([]byte, error) {
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.bucket, Key: &name})
	if err == nil {
		var got []byte
		got, err = io.ReadAll(io.LimitReader(out.Body, n+1))
		out.Body.Close()
		if err == nil {
			c.stats.done(opGet, nil)
			return got, nil
		}
	}
	c.stats.doneExpecting(opGet, err, noSuchKey(err))
	return nil, err
}

// noSuchKey reports that err is the server's answer that the object is
// not there: NoSuchKey, or a 404 with no code (a HEAD's, or a body the SDK
// could not read). A 404 of another code (NoSuchBucket) is not.
func noSuchKey(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound"
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// holds reports whether object name holds exactly token (false where it
// cannot be read).
func (c *client) holds(ctx context.Context, name string, token []byte) bool {
	got, err := c.read(ctx, name, int64(len(token)))
	return err == nil && bytes.Equal(got, token)
}

// unsupported reports that the server refused a request as one it does
// not implement (501 Not Implemented).
func unsupported(err error) bool {
	var ae smithy.APIError
	var re *awshttp.ResponseError
	return errors.As(err, &ae) && ae.ErrorCode() == "NotImplemented" || errors.As(err, &re) && re.HTTPStatusCode() == 501
}

// answered reports whether err is the server's answer to a request (an
// S3 error, an HTTP status), not the lack of one (the SDK's response
// error of status 0: a timeout, a cancel, a connection lost).
func answered(err error) bool {
	var ae smithy.APIError
	var re *awshttp.ResponseError
	return errors.As(err, &ae) || errors.As(err, &re) && re.HTTPStatusCode() > 0
}

// sentBody counts the bytes of a request's body read to be sent, over all
// of its attempts (a retry seeks it back to its start): with the size of
// the one that succeeded they tell the bytes of those that failed
// (stats.sent). A body the server refused before reading it (a 503 to
// an Expect: 100-continue) is not read, and counts nothing.
type sentBody struct {
	r io.ReadSeeker
	n atomic.Int64
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func (b *sentBody) Seek(off int64, whence int) (int64, error) { return b.r.Seek(off, whence) }

// putWhole stores p as the object name: one PUT up to part bytes, a
// multipart upload of its parts in order above. It returns the object's
// ETag (etagOf).
func (c *client) putWhole(ctx context.Context, name string, p []byte, part int64) (string, error) {
	if int64(len(p)) <= part {
		return c.put(ctx, name, p)
	}
	id, err := c.createMultipart(ctx, name)
	if err != nil {
		return "", err
	}
	var etags []string
	for off := int64(0); off < int64(len(p)); off += part {
		etag, err := c.uploadPart(ctx, name, id, len(etags)+1, p[off:min(off+part, int64(len(p)))])
		if err != nil {
			c.abort(ctx, name, id)
			return "", err
		}
		etags = append(etags, etag)
	}
	etag, err := c.completeMultipart(ctx, name, id, etags)
	if err != nil {
		c.abort(ctx, name, id)
		return "", err
	}
	return etag, nil
}

func (c *client) createMultipart(ctx context.Context, name string) (string, error) {
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	out, err := c.s3.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &c.bucket, Key: &name})
	c.stats.done(opCreateMultipart, err)
	if err != nil {
		return "", c.wrap("start the multipart upload of", name, err)
	}
	return aws.ToString(out.UploadId), nil
}

func (c *client) uploadPart(ctx context.Context, name, id string, n int, p []byte) (string, error) {
	return c.uploadPartFrom(ctx, name, id, n, bytes.NewReader(p), int64(len(p)))
}

// uploadPartFrom uploads the size bytes of body as part n.
func (c *client) uploadPartFrom(ctx context.Context, name, id string, n int, body io.ReadSeeker, size int64) (string, error) {
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	sb := &sentBody{r: body}
	out, err := c.s3.UploadPart(ctx, &s3.UploadPartInput{Bucket: &c.bucket, Key: &name, UploadId: &id, PartNumber: aws.Int32(int32(n)),
		Body: sb, ContentLength: aws.Int64(size)}, unsigned)
	c.stats.done(opUploadPart, err)
	c.stats.sent(size, sb.n.Load(), err)
	if err != nil {
		return "", c.wrap(fmt.Sprintf("upload part %d of", n), name, err)
	}
	return aws.ToString(out.ETag), nil
}

// completeMultipart completes the upload id of object name, of the parts
// whose ETags are etags, and returns the object's ETag (etagOf).
func (c *client) completeMultipart(ctx context.Context, name, id string, etags []string) (string, error) {
	parts := make([]types.CompletedPart, len(etags))
	for i, e := range etags {
		parts[i] = types.CompletedPart{ETag: aws.String(e), PartNumber: aws.Int32(int32(i + 1))}
	}
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	defer c.release()
	out, err := c.s3.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &c.bucket, Key: &name, UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	c.stats.done(opCompleteMultipart, err)
	if err != nil {
		return "", c.wrap("complete the multipart upload of", name, err)
	}
	return etagOf(out.ETag), nil
}

// abort ends an unfinished multipart upload; an error is returned and
// also left for Close, which lists and aborts what is left.
func (c *client) abort(ctx context.Context, name, id string) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	_, err := c.s3.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &c.bucket, Key: &name, UploadId: &id})
	var nf *types.NoSuchUpload
	if errors.As(err, &nf) {
		// Gone already: what the abort is for, not a failure.
		err = nil
	}
	c.stats.done(opAbortMultipart, err)
	return c.wrap("abort the multipart upload of", name, err)
}

// version is what the run knows of one of its objects, that a GET's
// answer is checked against: its size and, where the server gave one at
// its upload, its ETag.
type version struct {
	size int64
	etag string // "" when unknown: the size alone is checked
}

// getRange reads len(p) bytes at off of the object name, of version v: a
// ranged GET (a plain one for the whole object).
func (c *client) getRange(ctx context.Context, name string, off int64, p []byte, v version) error {
	_, err := c.getRangeFirst(ctx, name, off, p, v)
	return err
}

// getRangeFirst is getRange, and the instant the response's first byte
// came (zero when unknown).
func (c *client) getRangeFirst(ctx context.Context, name string, off int64, p []byte, v version) (time.Time, error) {
	return c.get(ctx, name, off, int64(len(p)), v, func(body io.Reader) (int64, error) {
		n, err := io.ReadFull(body, p)
		return int64(n), err
	})
}

// getInto reads n bytes at off of the object name, of version v, into w
// at the same offset, streamed through a buffer of the client's.
func (c *client) getInto(ctx context.Context, name string, w io.WriterAt, off, n int64, v version) error {
	_, err := c.get(ctx, name, off, n, v, func(body io.Reader) (int64, error) {
		buf := c.bufs.Get().(*[]byte)
		defer c.bufs.Put(buf)
		return io.CopyBuffer(io.NewOffsetWriter(w, off), io.LimitReader(body, n), *buf)
	})
	return err
}

// get makes a GET of n bytes at off of the object name (of version v: a
// plain GET when that is all of it, a ranged one otherwise) and gives the
// body to consume, which returns how many bytes it took; fewer than n is
// an error. The GET is conditional on v's ETag (If-Match, which costs no
// request): an object another client replaced since the run wrote it,
// with bytes of any size, is refused by the server (412), or, by one that
// ignores the condition, answered with another ETag, which fails the
// read too. It records the time from the call to the first byte of the
// response that brought the bytes (its earlier attempts and their backoff
// included: Stats), and returns the instant it came (zero when unknown).
// The bytes got count every attempt's body as far as it came: those of an
// attempt cut short crossed the wire too.
func (c *client) get(ctx context.Context, name string, off, n int64, v version, consume func(io.Reader) (int64, error)) (time.Time, error) {
	if err := c.acquire(ctx); err != nil {
		return time.Time{}, err
	}
	defer c.release()
	size := v.size
	in := &s3.GetObjectInput{Bucket: &c.bucket, Key: &name}
	if off != 0 || n != size {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	}
	if v.etag != "" {
		// Quoted, as RFC 9110 writes an entity tag (S3 takes both).
		in.IfMatch = aws.String(`"` + v.etag + `"`)
	}
	start := time.Now()
	var first atomic.Int64
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: func() { first.Store(int64(time.Since(start))) }})
	out, err := c.s3.GetObject(tctx, in)
	// The attempts made, the SDK's retries of a response (a 503) and
	// those of a body cut short together: a GET is tried at most
	// c.attempts times in all, as every request is.
	tried := 0
	for err == nil {
		tried += attemptsOf(out.ResultMetadata)
		if err = extentError(out, in.Range != nil, off, n, size); err == nil {
			err = etagError(out, v.etag)
		}
		if err != nil {
			// Not tried again: the object stays as it is.
			out.Body.Close()
			break
		}
		var got int64
		got, err = consume(out.Body)
		c.stats.bytesGot.Add(got)
		again := false
		switch {
		case err == nil && got < n:
			err = fmt.Errorf("the response ended after %d of %d bytes", got, n)
			again = true
		case err == nil:
			// The body's end, so that the connection is kept.
			var one [1]byte
			if m, _ := out.Body.Read(one[:]); m != 0 {
				c.stats.bytesGot.Add(int64(m))
				err = fmt.Errorf("the server sent more than the %d bytes asked", n)
			}
		default:
			// A body cut short (a connection reset) is tried again, as the
			// SDK tries a request that got no response; one that stopped
			// coming for Timeout is not: it waited enough.
			again = ctx.Err() == nil && !stalled(err)
			err = fmt.Errorf("read %d of %d bytes of the response: %w", got, n, err)
		}
		out.Body.Close()
		if err == nil || !again || tried >= c.attempts {
			break
		}
		left := c.attempts - tried
		out, err = c.s3.GetObject(tctx, in, func(o *s3.Options) { o.RetryMaxAttempts = left })
		var ma *retry.MaxAttemptsError
		if errors.As(err, &ma) {
			// The GET's attempts, not this call's.
			ma.Attempt += tried
		}
	}
	c.stats.done(opGet, err)
	if err != nil {
		return time.Time{}, c.wrap("GET", name, err)
	}
	d := first.Load()
	if d <= 0 {
		return time.Time{}, nil
	}
	c.stats.ttfb.record(time.Duration(d), tried)
	return start.Add(time.Duration(d)), nil
}

// extentError checks that a GET's response is what was asked of an
// object of size bytes: a ranged GET's Content-Range ("bytes
// FIRST-LAST/TOTAL") names the range asked and size as the object's, a
// whole GET's Content-Length is size. An object that another client
// replaced or truncated since the run wrote it has another size, and a
// range of its bytes would be read as the run's. A total the server does
// not know ("*") is taken on trust.
func extentError(out *s3.GetObjectOutput, ranged bool, off, n, size int64) error {
	changed := func(has int64) error {
		return fmt.Errorf("the object has %d bytes, not the %d the run wrote: another client replaced or truncated it", has, size)
	}
	if !ranged {
		if l := out.ContentLength; l != nil && *l >= 0 && *l != size {
			return changed(*l)
		}
		return nil
	}
	cr := aws.ToString(out.ContentRange)
	first, last, total, ok := parseContentRange(cr)
	switch {
	case !ok:
		return fmt.Errorf("the server answered the range %d-%d without a valid Content-Range (%q)", off, off+n-1, cr)
	case total >= 0 && total != size:
		return changed(total)
	case first != off || last != off+n-1:
		return fmt.Errorf("the server sent bytes %d-%d of the object, not the %d-%d asked", first, last, off, off+n-1)
	}
	return nil
}

// etagError checks that a GET's response is of the object the run wrote,
// whose ETag is etag: a server that ignores If-Match answers with the
// bytes of an object another client put in its place, of the same size
// too, and their ETag. No ETag asked or none answered is taken on trust.
func etagError(out *s3.GetObjectOutput, etag string) error {
	if got := etagOf(out.ETag); etag != "" && got != "" && got != etag {
		return fmt.Errorf("the object's ETag is %q, not the %q the run wrote: another client replaced it", got, etag)
	}
	return nil
}

// parseContentRange parses a Content-Range of bytes, "bytes FIRST-LAST/TOTAL"
// (RFC 9110, 14.4); total is -1 where it is "*".
func parseContentRange(s string) (first, last, total int64, ok bool) {
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, 0, false
	}
	rng, tot, ok := strings.Cut(rest, "/")
	a, z, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return 0, 0, 0, false
	}
	first, ok1 := digits(a)
	last, ok2 = digits(z)
	total, ok3 := int64(-1), true
	if tot != "*" {
		total, ok3 = digits(tot)
	}
	if !ok1 || !ok2 || !ok3 || last < first || total >= 0 && last >= total {
		return 0, 0, 0, false
	}
	return first, last, total, true
}

// digits parses s, a decimal number of digits only (no sign: RFC 9110's
// 1*DIGIT), that fits an int64.
func digits(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// attemptsOf is how many attempts the SDK made of the call whose result
// is md (at least one).
func attemptsOf(md middleware.Metadata) int {
	if r, ok := retry.GetAttemptResults(md); ok {
		return max(1, len(r.Results))
	}
	return 1
}

// delete removes the object name.
func (c *client) delete(ctx context.Context, name string) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	return c.deleteNow(ctx, name)
}

// deleteNow is delete without a request slot, and sent whether or not
// an earlier request found the server down: the clean-up of a request
// that got no answer (dropClaim), which is that request.
func (c *client) deleteNow(ctx context.Context, name string) error {
	_, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &c.bucket, Key: &name})
	if noSuchKey(err) {
		// Gone already (a PUT the server never took, an object another
		// client removed): what the DELETE is for. S3 answers it 204; some
		// servers 404.
		err = nil
	}
	c.stats.done(opDelete, err)
	return c.wrap("DELETE", name, err)
}

// deleteMany removes the objects names, a DELETE each, as many at once as
// requests may be in flight: S3's DeleteObjects would need a checksum of
// its body, which servers vary in accepting. It stops at the first
// failure and says how many were not deleted.
func (c *client) deleteMany(ctx context.Context, names []string) error {
	var (
		mu    sync.Mutex
		first error
		left  = len(names)
		wg    sync.WaitGroup
		next  = make(chan string)
	)
	for range min(cap(c.sem), len(names)) {
		wg.Go(func() {
			for n := range next {
				err := c.delete(ctx, n)
				mu.Lock()
				if err == nil {
					left--
				} else if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	for _, n := range names {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- n
	}
	close(next)
	wg.Wait()
	if first != nil {
		return fmt.Errorf("%d of %d objects not deleted: %w", left, len(names), first)
	}
	return nil
}

// list returns the keys under prefix, at most limit of them (0: all).
func (c *client) list(ctx context.Context, prefix string, limit int) ([]string, error) {
	var keys []string
	in := &s3.ListObjectsV2Input{Bucket: &c.bucket, Prefix: &prefix}
	if limit > 0 {
		in.MaxKeys = aws.Int32(int32(limit))
	}
	for {
		if err := c.acquire(ctx); err != nil {
			return nil, err
		}
		out, err := c.s3.ListObjectsV2(ctx, in)
		c.release()
		c.stats.done(opList, err)
		if err != nil {
			return nil, c.wrap("list", prefix, err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if limit > 0 && len(keys) >= limit || !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return keys, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// firstUpload returns the key of an unfinished multipart upload under
// prefix, "" when there is none.
func (c *client) firstUpload(ctx context.Context, prefix string) (string, error) {
	if err := c.acquire(ctx); err != nil {
		return "", err
	}
	out, err := c.s3.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &c.bucket, Prefix: &prefix, MaxUploads: aws.Int32(1)})
	c.release()
	c.stats.doneExpecting(opListUploads, err, notImplemented(err))
	if notImplemented(err) {
		// A service that cannot list them cannot tell: the objects'
		// check stands alone.
		return "", nil
	}
	if err != nil {
		return "", c.wrap("list the multipart uploads under", prefix, err)
	}
	for _, u := range out.Uploads {
		if k := aws.ToString(u.Key); strings.HasPrefix(k, prefix) {
			return k, nil
		}
	}
	return "", nil
}

// notImplemented reports that err is the service's NotImplemented: an S3
// API it does not have.
func notImplemented(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NotImplemented"
}

// uploadsPage is how many uploads a ListMultipartUploads asks for (S3's
// most); tests make it smaller.
var uploadsPage int32 = 1000

// abortAll aborts the unfinished multipart uploads under prefix, every
// page of them: it lists the first page again after aborting one (a
// marker naming an aborted upload is refused by some servers), until a
// page is the last or an abort failed. A server may list an upload a
// while after its abort (whose abort again answers NoSuchUpload): one
// aborted already is not aborted again, and a page of none but those is
// passed by its marker, so that the clean-up ends.
func (c *client) abortAll(ctx context.Context, prefix string) error {
	in := &s3.ListMultipartUploadsInput{Bucket: &c.bucket, Prefix: &prefix, MaxUploads: aws.Int32(uploadsPage)}
	aborted := map[[2]string]bool{} // by key and upload id
	for {
		if err := c.acquire(ctx); err != nil {
			return err
		}
		out, err := c.s3.ListMultipartUploads(ctx, in)
		c.release()
		c.stats.doneExpecting(opListUploads, err, notImplemented(err))
		if notImplemented(err) {
			// The uploads the run knows of it aborted by their ids.
			return nil
		}
		if err != nil {
			return c.wrap("list the multipart uploads under", prefix, err)
		}
		var errs []error
		fresh := 0
		for _, u := range out.Uploads {
			up := [2]string{aws.ToString(u.Key), aws.ToString(u.UploadId)}
			if !strings.HasPrefix(up[0], prefix) || aborted[up] {
				continue
			}
			if err := c.abort(ctx, up[0], up[1]); err != nil {
				errs = append(errs, err)
				continue
			}
			aborted[up] = true
			fresh++
		}
		if !aws.ToBool(out.IsTruncated) || len(errs) > 0 {
			return errors.Join(errs...)
		}
		if fresh == 0 {
			next, id := aws.ToString(out.NextKeyMarker), aws.ToString(out.NextUploadIdMarker)
			if next == "" || next == aws.ToString(in.KeyMarker) && id == aws.ToString(in.UploadIdMarker) {
				return fmt.Errorf("list the multipart uploads under %s: the server lists uploads aborted already, and no marker past them", prefix)
			}
			in.KeyMarker, in.UploadIdMarker = &next, nil
			if id != "" {
				in.UploadIdMarker = &id
			}
		}
	}
}

// wrap names the request and the object in err, says what to do about
// the errors a user can fix, and scrubs credentials from it.
func (c *client) wrap(what, name string, err error) error {
	if err == nil {
		return nil
	}
	var hint string
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucket":
			hint = fmt.Sprintf(": bucket %q does not exist at %s: create it first (kvreplay never creates buckets)", c.bucket, c.endpoint)
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "XAdminUserNotFound":
			hint = fmt.Sprintf(": %s refused the credentials: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", c.endpoint)
		case "AccessDenied", "Forbidden":
			hint = fmt.Sprintf(": access to bucket %q denied: the credentials need s3:ListBucket, s3:PutObject, s3:GetObject, s3:DeleteObject and s3:AbortMultipartUpload on it", c.bucket)
		case "SlowDown", "ServiceUnavailable":
			hint = ": the server kept throttling after every retry"
		case "InvalidRange":
			// The run asks only for ranges within the objects it wrote.
			hint = ": the object is shorter than the run wrote it: another client replaced or truncated it"
		case "PreconditionFailed":
			// Only a GET's If-Match is refused so (create reads its
			// conditional PUT's refusal itself).
			hint = ": the object's ETag is not the one the run wrote: another client replaced or truncated it"
		}
	}
	var op *net.OpError
	// A request abandoned (a connection's dial too) says nothing of the
	// server.
	abandoned := hint == "" && errors.Is(err, context.Canceled)
	dial := hint == "" && !abandoned && errors.As(err, &op) && op.Op == "dial"
	silent := hint == "" && !abandoned && !dial && stalled(err)
	msg := fmt.Sprintf("%s %s: %s%s", what, name, brief(err), hint)
	switch {
	case abandoned:
		// The SDK's account of a request it abandoned says no more.
		msg = fmt.Sprintf("%s %s: abandoned, the run having been interrupted", what, name)
	case dial:
		// The SDK's account of its attempts says less than the dial error.
		msg = fmt.Sprintf("%s %s: %v: is the server up?", what, name, op)
	case silent:
		msg = fmt.Sprintf("%s %s: %s sent nothing for %s: is the server up and well?", what, name, c.endpoint, c.timeout)
	}
	re := &requestError{msg: c.scrub(msg), err: err}
	var down string
	switch {
	case dial:
		down = fmt.Sprintf("%s is unreachable (an earlier request could not connect: %v): is the server up?", c.endpoint, op)
	case silent:
		down = fmt.Sprintf("%s stopped answering (an earlier request got nothing for %s): is the server up and well?", c.endpoint, c.timeout)
	}
	if down != "" {
		var e error = &requestError{msg: c.scrub(down), err: err}
		c.down.CompareAndSwap(nil, &e)
	}
	return re
}

// checkError turns the failure of New's check (a list of the run's
// prefix, the first request) into one line that names what to change:
// the flag or the variable and its value. A bucket, endpoint or
// credentials that cannot work are the user's input (exit status 2); a
// server that does not answer in time, or another failure, is not.
func (c *client) checkError(err error, timeout time.Duration) error {
	var ae smithy.APIError
	code := ""
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	var op *net.OpError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var msg string
	switch {
	case (code == "NoSuchBucket" || code == "InvalidBucketName") && c.path != "":
		// The path's first part was taken for the bucket.
		return usage(fmt.Errorf("--s3-bucket %s: no such bucket at %s: the endpoint has a path (%s), which the requests' paths start with: give the server's URL without it, or create the bucket first (kvreplay never creates buckets)", c.bucket, c.endpoint, c.path))
	case code == "NoSuchBucket":
		return usage(fmt.Errorf("--s3-bucket %s: no such bucket at %s: create it first (kvreplay never creates buckets)", c.bucket, c.endpoint))
	case code == "InvalidBucketName":
		// A name CheckFlags lets through (upper case, '_': AWS's legacy
		// buckets) that this server refuses.
		return usage(fmt.Errorf("--s3-bucket %s: %s refuses the name (%s: %s): give the bucket's name (3 to 63 lower-case letters, digits, '.' and '-')", c.bucket, c.endpoint, code, strings.TrimSuffix(apiMessage(err), ".")))
	case code == "AccessDenied" || code == "Forbidden":
		return usage(fmt.Errorf("--s3-bucket %s: %s denied access (%s): the credentials need s3:ListBucket, s3:PutObject, s3:GetObject, s3:DeleteObject and s3:AbortMultipartUpload on it", c.bucket, c.endpoint, code))
	case c.credErr != nil && code == "":
		return usage(fmt.Errorf("s3: no AWS credentials found for %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", c.endpoint))
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "InvalidToken" || code == "ExpiredToken" || code == "XAdminUserNotFound":
		return usage(fmt.Errorf("s3: %s refused the credentials (%s): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", c.endpoint, code))
	case code == "AuthorizationHeaderMalformed" || code == "PermanentRedirect" || code == "IncorrectEndpoint":
		// The bucket, or the server, is in another region than the one
		// the requests were signed for.
		return usage(fmt.Errorf("s3: %s: bucket %s is not in region %s (%s: %s): set AWS_REGION (or the profile's region) to its region", c.endpoint, c.bucket, c.region, code, strings.TrimSuffix(apiMessage(err), ".")))
	case code == "":
		switch {
		case errors.As(err, &ua), errors.As(err, &he), errors.As(err, &ci):
			msg = fmt.Sprintf("%s: the server's certificate is not trusted (%s): give its CA's PEM file in AWS_CA_BUNDLE, or a name the certificate holds", c.from, c.scrub(certReason(err)))
		case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
			msg = fmt.Sprintf("%s: the server answers http, not https: give its http:// URL", c.from)
		case errors.As(err, &op) && op.Op == "dial":
			msg = fmt.Sprintf("%s: cannot connect (%v): is this the server's address, and is it up?", c.from, op.Err)
		}
		if msg != "" {
			return usage(errors.New(msg))
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || stalled(err) {
		return fmt.Errorf("%s: no answer within %s: is it an S3 server, and is it up?", c.from, timeout)
	}
	return fmt.Errorf("s3: %s: %w", c.from, err)
}

// apiMessage is the server's message in err, "" when none.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return ""
}

// certReason is the certificate error in err, without the SDK's account
// of the request.
func certReason(err error) string {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &ua):
		return ua.Error()
	case errors.As(err, &he):
		return he.Error()
	case errors.As(err, &ci):
		return ci.Error()
	}
	return err.Error()
}

// usage marks err as the user's input (IsInput).
func usage(err error) error { return &inputError{err} }

// inputError is an error of New that the user's input caused: a flag's
// value, the AWS configuration or credentials.
type inputError struct{ error }

func (e *inputError) Unwrap() error { return e.error }

// IsInput reports that err, from New, was caused by the user's input (a
// bucket that does not exist, an endpoint where no S3 server answers,
// credentials refused or missing, an AWS configuration that cannot be
// read) rather than by a failure of the server: a command exits with the
// status of bad input for it.
func IsInput(err error) bool {
	var ie *inputError
	return errors.As(err, &ie)
}

// brief is err as a line a user reads: for the server's refusal, its HTTP
// status, code, message and request ID (to find it in the server's logs)
// and the attempts made, without the SDK's account of the operation; for
// a request that got no response (a connection closed or reset), the
// connection's error and the attempts; any other error as it is.
func brief(err error) string {
	var ae smithy.APIError
	var ue *url.Error
	var s string
	switch {
	case errors.As(err, &ae):
		s = ae.ErrorCode()
		if m := ae.ErrorMessage(); m != "" {
			s += " (" + strings.TrimSuffix(m, ".") + ")"
		}
		var re *awshttp.ResponseError
		if errors.As(err, &re) {
			s = fmt.Sprintf("HTTP %d %s", re.HTTPStatusCode(), s)
			if id := re.ServiceRequestID(); id != "" {
				s += ", request id " + id
			}
		}
	case errors.As(err, &ue) && ue.Err != nil && (ue.Timeout() || errors.Is(ue.Err, context.Canceled)):
		// No response in time, or the request given up: not a fault of
		// the connection.
		s = "no response (" + ue.Err.Error() + ")"
	case errors.As(err, &ue) && ue.Err != nil:
		// No response (a connection closed or reset mid-request): the
		// cause, without the SDK's account of the operation and the URL.
		s = "the connection failed (" + ue.Err.Error() + ")"
	default:
		return err.Error()
	}
	var ma *retry.MaxAttemptsError
	if errors.As(err, &ma) {
		s += fmt.Sprintf(", after %d attempts", ma.Attempt)
	}
	return s
}

// stalled reports that err is a request whose connection went Timeout
// without a byte from the server (idleConn's deadline), not a context's
// end.
func stalled(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}

func (c *client) scrub(s string) string {
	for _, x := range c.secrets {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	return s
}

// requestError is a failed request: its message names the request and
// the object and carries no credentials, whatever the wrapped error's
// does; Unwrap gives the SDK's error for errors.As.
type requestError struct {
	msg string
	err error
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.err }

// idleConn is a connection to the server on which a read fails once the
// server has sent nothing for timeout: each read, and each write (a
// request going out, after which its response is awaited), sets the read
// deadline afresh. A server that takes a request and never answers, or
// stops in the middle of a body, fails the attempt instead of hanging the
// run.
type idleConn struct {
	net.Conn
	timeout time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	now := time.Now()
	c.Conn.SetWriteDeadline(now.Add(c.timeout))
	c.Conn.SetReadDeadline(now.Add(c.timeout))
	return c.Conn.Write(p)
}
