// Package s3test starts a real S3 server for tests: Versity's S3 gateway
// (versitygw, `go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`)
// on 127.0.0.1 over a fresh directory, and a throttling proxy in front of
// it that answers 503 SlowDown on demand. A test that needs the server is
// skipped, with a message that says how to install it, where versitygw is
// neither on PATH nor in ~/go/bin.
package s3test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Install is how to get the server, for skip messages.
const Install = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// Binary returns versitygw's path: on PATH, else in $GOPATH/bin or
// ~/go/bin; "" where it is in none.
func Binary() string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	var dirs []string
	if gp := os.Getenv("GOPATH"); gp != "" {
		dirs = append(dirs, filepath.Join(filepath.SplitList(gp)[0], "bin"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Options are a Server's.
type Options struct {
	// TLS serves https with a certificate of a fresh private CA, whose
	// PEM file is Server.CAFile.
	TLS bool
	// KeepAlive keeps connections open between requests; versitygw closes
	// them after each by default.
	KeepAlive bool
	// Root is the directory the server keeps its buckets in; "" is a new
	// temporary one. A server started again on the same Root sees the
	// same buckets and objects.
	Root string
}

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT (https with TLS).
	Endpoint  string
	AccessKey string
	SecretKey string
	// Root is the directory of its buckets.
	Root string
	// CAFile is the PEM file of the CA that signed its certificate (TLS).
	CAFile string

	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
}

// Start starts a server for the test, stopped at its end; it skips the
// test where versitygw is not installed.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skipf("versitygw is not on PATH nor in ~/go/bin: install it with %s (.ci/run does) to run the S3 tests", Install)
	}
	s := &Server{AccessKey: "kvbenchtestkey", SecretKey: "kvbench-test-secret-" + randHex(8), Root: opts.Root}
	if s.Root == "" {
		s.Root = t.TempDir()
	}
	var certArgs []string
	scheme := "http"
	if opts.TLS {
		dir := t.TempDir()
		s.CAFile, certArgs = writeCert(t, dir)
		scheme = "https"
	}
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		args := append([]string{"--access", s.AccessKey, "--secret", s.SecretKey, "--port", addr, "--quiet"}, certArgs...)
		if opts.KeepAlive {
			args = append(args, "--keep-alive")
		}
		args = append(args, "posix", s.Root)
		s.log = &syncBuffer{}
		s.cmd = exec.Command(bin, args...)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("start versitygw: %v", err)
		}
		s.exited = make(chan struct{})
		go func(cmd *exec.Cmd, done chan struct{}) {
			cmd.Wait()
			close(done)
		}(s.cmd, s.exited)
		if lastErr = s.waitUp(addr); lastErr == nil {
			s.Endpoint = scheme + "://" + addr
			t.Cleanup(s.Kill)
			return s
		}
		s.Kill()
	}
	t.Fatalf("versitygw did not start: %v\n%s", lastErr, s.log.String())
	return nil
}

// waitUp waits until the server accepts connections on addr, or exits.
func (s *Server) waitUp(addr string) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("it exited: %s", s.log.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-s.exited:
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("no connection on %s within 20 s", addr)
}

// Kill stops the server at once (SIGKILL), as a crash would, and waits
// for it to exit. It is idempotent.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// Env points the AWS configuration chain at the server for the rest of
// the test: its credentials and a region in the environment, and no
// configuration or credentials file of the user's.
func (s *Server) Env(t testing.TB) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           s.AccessKey,
		"AWS_SECRET_ACCESS_KEY":       s.SecretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "us-east-1",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	if s.CAFile != "" {
		t.Setenv("AWS_CA_BUNDLE", s.CAFile)
	} else {
		// The server is http: a CA bundle of the environment's (a proxy's)
		// has nothing to do with it.
		t.Setenv("AWS_CA_BUNDLE", "")
	}
}

// Client returns an S3 client of the server's, for a test to set up and
// inspect buckets behind the backend's back.
func (s *Server) Client() *s3.Client {
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	if s.CAFile != "" {
		pem, _ := os.ReadFile(s.CAFile)
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		hc.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		HTTPClient:   hc,
	})
}

// Bucket creates a bucket.
func (s *Server) Bucket(t testing.TB, name string) {
	t.Helper()
	if _, err := s.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &name}); err != nil {
		t.Fatalf("create bucket %q: %v", name, err)
	}
}

// Put stores an object of the test's, outside any run.
func (s *Server) Put(t testing.TB, bucket, key string, p []byte) {
	t.Helper()
	if _, err := s.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(p)}); err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

// Get reads an object whole.
func (s *Server) Get(t testing.TB, bucket, key string) []byte {
	t.Helper()
	out, err := s.Client().GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	p, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	return p
}

// Keys lists every key in the bucket, and the keys of its unfinished
// multipart uploads after them, each as "upload:KEY".
func (s *Server) Keys(t testing.TB, bucket string) []string {
	t.Helper()
	c := s.Client()
	var keys []string
	in := &s3.ListObjectsV2Input{Bucket: &bucket}
	for {
		out, err := c.ListObjectsV2(context.Background(), in)
		if err != nil {
			t.Fatalf("list %s: %v", bucket, err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.ContinuationToken = out.NextContinuationToken
	}
	ups, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("list the multipart uploads of %s: %v", bucket, err)
	}
	for _, u := range ups.Uploads {
		keys = append(keys, "upload:"+aws.ToString(u.Key))
	}
	return keys
}

// Log is what the server printed.
func (s *Server) Log() string { return s.log.String() }

// Proxy is a reverse proxy in front of a server that answers requests
// with 503 SlowDown when told to, as a throttling S3 service does, or
// stops answering, as a server that hangs does.
type Proxy struct {
	// Endpoint is the proxy's URL, to give the client instead of the
	// server's.
	Endpoint string
	// CAFile is the PEM file of the CA that signed its certificate
	// (ThrottleTLS).
	CAFile  string
	h2      atomic.Int64           // requests over HTTP/2
	conns   sync.Map               // the client connections' addresses
	fail    atomic.Int64           // requests still to refuse; < 0: all
	broken  atomic.Bool            // refuse with 500 InternalError, not 503 SlowDown
	unimpl  atomic.Pointer[string] // a query parameter or header whose requests get 501
	refused atomic.Int64
	served  atomic.Int64
	hang    atomic.Int32 // a Hang mode
	hung    atomic.Int64
	cut     atomic.Int64 // responses still to cut
	drop    atomic.Int64 // requests still to drop (Drop)
	drops   atomic.Int64
	cuts    atomic.Int64
	lose    atomic.Int64           // responses still to lose (Lose, Withhold)
	loseIf  atomic.Pointer[string] // the header of the requests whose responses are lost
	silent  atomic.Bool            // a lost response is withheld (Withhold), not a 500
	lateBy  atomic.Int64           // a withheld request reaches the server this long after its client gave it up (WithholdLate)
	lost    atomic.Int64
	stop    chan struct{} // closed at the test's end: hung requests end
	// Requests passed through now, the most at once, and how long each
	// waits before it is.
	inflight, peak, delay atomic.Int64
}

// Hang modes.
const (
	// Answer passes requests through.
	Answer = iota
	// Silent takes every request and never answers it.
	Silent
	// MidBody passes every request through, sends its response's headers
	// and its body's first kilobyte, then nothing more (a response with
	// less body passes whole).
	MidBody
)

// Hang makes the requests that come after it hang as mode says (Answer,
// Silent, MidBody); a hung request ends when its client gives it up, or
// at the test's end.
func (p *Proxy) Hang(mode int) { p.hang.Store(int32(mode)) }

// Hung is how many requests were hung.
func (p *Proxy) Hung() int64 { return p.hung.Load() }

// Cut makes the next n responses whose bodies pass a kilobyte end after
// their first kilobyte: the connection is closed, as a reset one is.
func (p *Proxy) Cut(n int) { p.cut.Store(int64(n)) }

// Cuts is how many responses were cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// Drop makes the next n requests get no response at all: the proxy reads
// their first kilobyte and closes the connection, as a server that
// crashes or resets it mid-request does. Nothing reaches the server.
func (p *Proxy) Drop(n int) { p.drop.Store(int64(n)) }

// Drops is how many requests were dropped.
func (p *Proxy) Drops() int64 { return p.drops.Load() }

// Lose makes the next n requests that carry header pass to the server,
// which does what they ask, and answers each with 500 InternalError in
// place of the server's response, as a proxy whose upstream answer was
// lost does: the client retries what was already done.
func (p *Proxy) Lose(header string, n int) {
	p.silent.Store(false)
	p.loseIf.Store(&header)
	p.lose.Store(int64(n))
}

// Withhold is Lose with no answer at all in place of the server's
// response: the client waits until it gives the request up (its
// timeout, the run's end), and its connection is then closed.
func (p *Proxy) Withhold(header string, n int) {
	p.lateBy.Store(0)
	p.silent.Store(true)
	p.loseIf.Store(&header)
	p.lose.Store(int64(n))
}

// WithholdLate is Withhold of a request that reaches the server only
// after its client gave it up (its timeout, the run's end), d later: the
// server then does what it asks, as one does a request whose client
// timed out while it was on its way or queued.
func (p *Proxy) WithholdLate(header string, n int, d time.Duration) {
	p.Withhold(header, n)
	p.lateBy.Store(int64(d))
}

// Lost is how many responses were lost (Lose, Withhold), each counted
// once the server has done what its request asked.
func (p *Proxy) Lost() int64 { return p.lost.Load() }

// internalError answers 500 InternalError, as S3 does.
func internalError(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusInternalServerError)
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>`)
}

// discard is a response nobody reads.
type discard http.Header

func (d discard) Header() http.Header         { return http.Header(d) }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

// stallWriter passes left bytes of a response body through, flushes
// them and calls at, which blocks, or panics to cut the connection, or
// returns false to pass the rest through.
type stallWriter struct {
	http.ResponseWriter
	left int
	at   func() bool
}

func (w *stallWriter) Write(p []byte) (int, error) {
	if w.left < 0 {
		return w.ResponseWriter.Write(p)
	}
	n, err := w.ResponseWriter.Write(p[:min(len(p), w.left)])
	w.left -= n
	if err != nil || w.left > 0 {
		return n, err
	}
	http.NewResponseController(w.ResponseWriter).Flush()
	if w.at() {
		return n, errors.New("s3test: the response hangs")
	}
	w.left = -1
	m, err := w.ResponseWriter.Write(p[n:])
	return n + m, err
}

// Throttle starts a proxy in front of srv on 127.0.0.1, closed at the
// test's end. It passes every request through until Fail says otherwise.
func Throttle(t testing.TB, srv *Server) *Proxy {
	t.Helper()
	return throttle(t, srv, false)
}

// ThrottleTLS is Throttle serving https, HTTP/2 offered as Go's servers
// offer it, with a certificate of a fresh private CA
// whose PEM file is Proxy.CAFile.
func ThrottleTLS(t testing.TB, srv *Server) *Proxy {
	t.Helper()
	return throttle(t, srv, true)
}

func throttle(t testing.TB, srv *Server, tls bool) *Proxy {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{stop: make(chan struct{})}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		// The client signed the Host it sent: keep it.
		r.Out.Host = r.In.Host
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, rp) })}
	p.Endpoint = "http://" + ln.Addr().String()
	if tls {
		cert, args := writeCert(t, t.TempDir())
		p.CAFile = cert
		p.Endpoint = "https://" + ln.Addr().String()
		go hs.ServeTLS(ln, cert, args[3])
	} else {
		go hs.Serve(ln)
	}
	t.Cleanup(func() {
		close(p.stop)
		hs.Close()
	})
	return p
}

// serve is the proxy's handler: it passes r to the server through rp, or
// refuses, hangs, cuts or loses it as the proxy was told.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy) {
	if r.ProtoMajor == 2 {
		p.h2.Add(1)
	}
	p.conns.Store(r.RemoteAddr, true)
	wait := func() {
		select {
		case <-r.Context().Done():
		case <-p.stop:
		}
	}
	if p.interrupt(w, r, rp, wait) || p.refuse(w, r) {
		return
	}
	p.served.Add(1)
	n := p.inflight.Add(1)
	for m := p.peak.Load(); n > m && !p.peak.CompareAndSwap(m, n); m = p.peak.Load() {
	}
	if d := p.delay.Load(); d > 0 {
		select {
		case <-time.After(time.Duration(d)):
		case <-r.Context().Done():
		case <-p.stop:
		}
	}
	rp.ServeHTTP(w, r)
	p.inflight.Add(-1)
}

// interrupt hangs (Hang), drops (Drop), cuts (Cut) or loses (Lose) r as
// the proxy was told, waiting with wait where it hangs; false when it
// does none of these.
func (p *Proxy) interrupt(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy, wait func()) bool {
	switch p.hang.Load() {
	case Silent:
		p.hung.Add(1)
		io.Copy(io.Discard, r.Body)
		wait()
		return true
	case MidBody:
		p.hung.Add(1)
		rp.ServeHTTP(&stallWriter{ResponseWriter: w, left: 1 << 10, at: func() bool { wait(); return true }}, r)
		return true
	}
	if n := p.drop.Load(); n > 0 && p.drop.CompareAndSwap(n, n-1) {
		p.drops.Add(1)
		io.CopyN(io.Discard, r.Body, 1<<10)
		panic(http.ErrAbortHandler)
	}
	if r.Method == http.MethodGet && p.cut.Load() > 0 {
		rp.ServeHTTP(&stallWriter{ResponseWriter: w, left: 1 << 10, at: func() bool {
			if n := p.cut.Load(); n > 0 && p.cut.CompareAndSwap(n, n-1) {
				p.cuts.Add(1)
				panic(http.ErrAbortHandler)
			}
			return false
		}}, r)
		return true
	}
	if h := p.loseIf.Load(); h != nil && r.Header.Get(*h) != "" {
		if n := p.lose.Load(); n > 0 && p.lose.CompareAndSwap(n, n-1) {
			if d := time.Duration(p.lateBy.Load()); d > 0 {
				p.late(r, rp, wait, d)
			}
			// The server does what the request asked, whether or not
			// its client is still there to hear of it.
			rp.ServeHTTP(discard(http.Header{}), r.WithContext(context.WithoutCancel(r.Context())))
			p.lost.Add(1)
			if p.silent.Load() {
				wait()
				panic(http.ErrAbortHandler)
			}
			internalError(w)
			return true
		}
	}
	return false
}

// late passes r to the server d after its client gave it up (wait
// returns then), with no client to answer (WithholdLate), and ends the
// handler: it never returns.
func (p *Proxy) late(r *http.Request, rp *httputil.ReverseProxy, wait func(), d time.Duration) {
	body, _ := io.ReadAll(r.Body)
	wait()
	select {
	case <-time.After(d):
	case <-p.stop:
		panic(http.ErrAbortHandler)
	}
	late := r.Clone(context.WithoutCancel(r.Context()))
	late.Body, late.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	rp.ServeHTTP(discard(http.Header{}), late)
	p.lost.Add(1)
	panic(http.ErrAbortHandler)
}

// refuse answers r with an error as the proxy was told (Unimplemented,
// Fail, Break); false when it does not.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request) bool {
	if q := p.unimpl.Load(); q != nil && (r.URL.Query().Has(*q) || r.Header.Get(*q) != "") {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header or query you provided implies functionality that is not implemented.</Message></Error>`)
		return true
	}
	if n := p.fail.Load(); n != 0 && (n < 0 || p.fail.CompareAndSwap(n, n-1)) {
		p.refused.Add(1)
		io.Copy(io.Discard, r.Body)
		if p.broken.Load() {
			internalError(w)
			return true
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return true
	}
	return false
}

// Delay holds each request that passes through for d before passing it.
func (p *Proxy) Delay(d time.Duration) { p.delay.Store(int64(d)) }

// Peak is the most requests passed through at once since the proxy
// started, or since the last ResetPeak.
func (p *Proxy) Peak() int64 { return p.peak.Load() }

// ResetPeak starts Peak's count afresh.
func (p *Proxy) ResetPeak() { p.peak.Store(0) }

// HTTP2 is how many requests came over HTTP/2.
func (p *Proxy) HTTP2() int64 { return p.h2.Load() }

// Conns is how many client connections requests came on.
func (p *Proxy) Conns() int {
	n := 0
	p.conns.Range(func(any, any) bool { n++; return true })
	return n
}

// Fail makes the next n requests fail with 503 SlowDown; n < 0 makes all
// of them fail until the next Fail, and 0 none.
func (p *Proxy) Fail(n int) { p.broken.Store(false); p.fail.Store(int64(n)) }

// Break is Fail with 500 InternalError, a server's failure, instead of
// throttling.
func (p *Proxy) Break(n int) { p.broken.Store(true); p.fail.Store(int64(n)) }

// Unimplemented answers 501 NotImplemented to every request with the query
// parameter or the header param (such as "uploads": the listings of
// multipart uploads; "If-None-Match": conditional writes), as an S3
// service without that API does.
func (p *Proxy) Unimplemented(param string) { p.unimpl.Store(&param) }

// Refused is how many requests were refused (Fail, Break).
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// Served is how many requests went through to the server.
func (p *Proxy) Served() int64 { return p.served.Load() }

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir, and returns the certificate's path (its own CA) and
// versitygw's arguments to serve it.
func writeCert(t testing.TB, dir string) (string, []string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kvbench test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, []string{"--cert", certPath, "--key", keyPath}
}

// syncBuffer is a bytes.Buffer safe for the server's two output streams.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 {
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// MountS3FS mounts bucket of the server (http only) at a new directory
// with s3fs-fuse, the POSIX gateway MLPerf's rules name, and unmounts it
// when the test ends. The credentials go in a passwd file of the test's
// own (mode 0600), as s3fs wants. It skips the test, saying why, where
// s3fs or /dev/fuse is missing or the mount fails (no FUSE in a
// container).
func (s *Server) MountS3FS(t testing.TB, bucket string) string {
	t.Helper()
	bin, err := exec.LookPath("s3fs")
	if err != nil {
		t.Skip("s3fs is not installed (Debian: apt-get install s3fs)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE mounts are not possible here")
	}
	if s.CAFile != "" {
		t.Fatal("MountS3FS: the server serves https; s3fs would need its CA")
	}
	dir := t.TempDir()
	passwd, point := filepath.Join(dir, "passwd"), filepath.Join(dir, "mnt")
	if err := os.WriteFile(passwd, []byte(s.AccessKey+":"+s.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(point, 0o755); err != nil {
		t.Fatal(err)
	}
	// endpoint names the region s3fs signs for; versitygw's is us-east-1.
	cmd := exec.Command(bin, bucket, point, "-o", "passwd_file="+passwd, "-o", "url="+s.Endpoint,
		"-o", "use_path_request_style", "-o", "endpoint=us-east-1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("s3fs could not mount the bucket (%v): %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		var errs []string
		for _, c := range [][]string{{"umount", point}, {"fusermount", "-u", point}, {"umount", "-l", point}} {
			out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
			if err == nil {
				return
			}
			errs = append(errs, fmt.Sprintf("%s: %v: %s", strings.Join(c, " "), err, bytes.TrimSpace(out)))
		}
		t.Errorf("unmounting %s: %s", point, strings.Join(errs, "; "))
	})
	// s3fs daemonizes before the mount is in place: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for !mounted(point) {
		if time.Now().After(deadline) {
			t.Skipf("s3fs did not mount %s within 10 s", point)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return point
}

// mounted reports whether /proc/self/mounts lists point as a mount point.
func mounted(point string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for l := range strings.Lines(string(b)) {
		if f := strings.Fields(l); len(f) > 2 && f[1] == point {
			return true
		}
	}
	return false
}
