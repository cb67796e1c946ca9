package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/replay/replaytest"
	"github.com/kvbench/kvbench/replay/s3"
	"github.com/kvbench/kvbench/replay/s3/s3test"
)

const bucket = "kvbench-test"

// start starts a server with a bucket, its environment set for the test.
func start(t *testing.T, opts s3test.Options) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t, opts)
	srv.Env(t)
	srv.Bucket(t, bucket)
	return srv
}

// newBackend makes a backend on srv (or on endpoint, when given) with the
// test's config, closed at the test's end unless closed before.
func newBackend(t *testing.T, endpoint string, cfg s3.Config) *s3.Backend {
	t.Helper()
	cfg.Endpoint = endpoint
	if cfg.Bucket == "" {
		cfg.Bucket = bucket
	}
	b, err := s3.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	return b
}

// noneUnder fails the test when the bucket holds a key (or an upload)
// under prefix.
func noneUnder(t *testing.T, srv *s3test.Server, prefix string) {
	t.Helper()
	for _, k := range srv.Keys(t, bucket) {
		if strings.HasPrefix(strings.TrimPrefix(k, "upload:"), prefix) {
			t.Errorf("the bucket still holds %q of the run under %q", k, prefix)
		}
	}
}

func TestConformance(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	n := 0
	replaytest.Run(t, func(t *testing.T) backend.Backend {
		n++
		// A part size below the suite's biggest objects (16 blocks of 4 KiB
		// are 64 KiB) would need parts below S3's 5 MiB; the multipart path
		// has its own test.
		b := newBackend(t, srv.Endpoint, s3.Config{RunID: fmt.Sprintf("conformance-%d", n)})
		prefix := b.RunPrefix()
		// Run closes the backend before this clean-up runs.
		t.Cleanup(func() { noneUnder(t, srv, prefix) })
		return b
	})
}

// TestMultipart writes objects above the part size in blocks of 1 MiB, in
// a random order from several goroutines, and reads them back by ranges:
// each is one multipart upload of its parts, every byte as written.
func TestMultipart(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	b := newBackend(t, srv.Endpoint, s3.Config{PartSize: s3.MinPartSize, Concurrency: 4})
	const blk = 1 << 20
	sizes := []int64{12 << 20, 5 << 20, 5<<20 + blk, 3 << 20}
	for i, size := range sizes {
		key := fmt.Sprintf("obj-%d", i)
		o, err := b.Open(key, size, true)
		if err != nil {
			t.Fatal(err)
		}
		offs := make([]int64, 0, size/blk)
		for off := int64(0); off < size; off += blk {
			offs = append(offs, off)
		}
		rand.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
		var wg sync.WaitGroup
		errs := make(chan error, len(offs))
		for w := range 4 {
			wg.Go(func() {
				p := make([]byte, blk)
				for k := w; k < len(offs); k += 4 {
					replaytest.Fill(p, uint64(i), offs[k])
					if _, err := o.WriteAt(p, offs[k]); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if held, up := s3.PartsHeld(b); held != 0 || up != 0 {
		t.Errorf("after every object was written whole: %d bytes of part buffers out, %d parts going up; want none", held, up)
	}
	want := make([]byte, 3*blk)
	for i, size := range sizes {
		o, err := b.Open(fmt.Sprintf("obj-%d", i), size, false)
		if err != nil {
			t.Fatal(err)
		}
		// Whole, and by 3 MiB ranges across part boundaries.
		whole := make([]byte, size)
		if n, err := o.ReadAt(whole, 0); err != nil || int64(n) != size {
			t.Fatalf("ReadAt whole = %d, %v", n, err)
		}
		full := make([]byte, size)
		replaytest.Fill(full, uint64(i), 0)
		if !bytes.Equal(whole, full) {
			t.Fatalf("object %d of %d bytes: bytes read differ from those written", i, size)
		}
		for off := int64(0); off < size; off += 3 * blk {
			p := make([]byte, 3*blk)
			n, err := o.ReadAt(p, off)
			end := min(off+3*blk, size)
			if int64(n) != end-off || (end < off+3*blk) != errors.Is(err, io.EOF) {
				t.Fatalf("ReadAt(%d) = %d, %v", off, n, err)
			}
			replaytest.Fill(want, uint64(i), off)
			if !bytes.Equal(p[:n], want[:n]) {
				t.Fatalf("object %d: range at %d differs", i, off)
			}
		}
		o.Close()
	}
	st := b.Stats()
	// 12 MiB: 3 parts; 5 MiB: one PUT; 6 MiB: 2 parts; 3 MiB: one PUT;
	// and New's PUT that claims the run's prefix.
	if st.Requests["CreateMultipartUpload"] != 2 || st.Requests["UploadPart"] != 5 || st.Requests["CompleteMultipartUpload"] != 2 || st.Requests["PutObject"] != 3 {
		t.Errorf("requests %v: want 2 multipart uploads of 5 parts in all, and 3 PUTs (2 objects, the claim)", st.Requests)
	}
	var total int64
	for _, s := range sizes {
		total += s
	}
	if st.BytesPut != total || st.BytesGot != 2*total {
		t.Errorf("bytes put %d, got %d; want %d and %d", st.BytesPut, st.BytesGot, total, 2*total)
	}
	// Bodies of up to 5 MiB (those above 2 MiB sent with Expect:
	// 100-continue, the SDK's default); none failed, and
	// none was read twice.
	if st.BytesPutFailed != 0 {
		t.Errorf("%d bytes of failed PUTs and parts; none failed", st.BytesPutFailed)
	}
	if st.TTFB.Count != st.Requests["GetObject"] || st.TTFB.P50US <= 0 {
		t.Errorf("TTFB %+v of %d GETs", st.TTFB, st.Requests["GetObject"])
	}
	prefix := b.RunPrefix()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	noneUnder(t, srv, prefix)
}

// TestOthersUntouched: objects in the bucket that the run did not create,
// beside its prefix and under the same --s3-prefix, are left as they were,
// and a run prefix that holds objects is refused.
func TestOthersUntouched(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	theirs := map[string][]byte{
		"keep-me":               []byte("not kvbench's"),
		"bench/other":           []byte("beside the runs"),
		"bench/run-old/0_key":   []byte("another run's"),
		"bench/run-taken/0_key": []byte("in the way"),
	}
	for k, v := range theirs {
		srv.Put(t, bucket, k, v)
	}
	b := newBackend(t, srv.Endpoint, s3.Config{Prefix: "bench", RunID: "mine"})
	for i, key := range []string{"0_key", "other", "keep-me", "../keep-me"} {
		o, err := b.Open(key, 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 4096)
		replaytest.Fill(p, uint64(i), 0)
		if _, err := o.WriteAt(p, 0); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			err = o.Remove()
		} else {
			err = o.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	keys := srv.Keys(t, bucket)
	slices.Sort(keys)
	want := []string{"bench/other", "bench/run-old/0_key", "bench/run-taken/0_key", "keep-me"}
	if !slices.Equal(keys, want) {
		t.Errorf("after the run the bucket holds %q, want %q", keys, want)
	}
	for k, v := range theirs {
		if got := srv.Get(t, bucket, k); !bytes.Equal(got, v) {
			t.Errorf("%s now holds %q, was %q", k, got, v)
		}
	}
	_, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "bench/", RunID: "taken"})
	if err == nil || !strings.Contains(err.Error(), "holds objects already") {
		t.Errorf("a run prefix with objects: %v, want a refusal", err)
	}
	if got := srv.Get(t, bucket, "bench/run-taken/0_key"); string(got) != "in the way" {
		t.Errorf("the refused run touched %q", got)
	}
}

// TestUploadsOfAnotherRun: a run prefix that holds another's unfinished
// multipart upload (a run of the same id, still going or crashed) is
// refused, as one that holds objects is: Close would abort that upload,
// which the run did not start.
func TestUploadsOfAnotherRun(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	c := srv.Client()
	key := "bench/run-busy/0_key"
	out, err := c.CreateMultipartUpload(context.Background(), &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "bench", RunID: "busy"})
	if err == nil {
		b.Close()
		t.Error("a run prefix with another's unfinished upload was taken")
	} else if !strings.Contains(err.Error(), "unfinished multipart upload") {
		t.Errorf("error %q: want it to name the unfinished upload", err)
	}
	// A service without ListMultipartUploads: the check of objects alone.
	px := s3test.Throttle(t, srv)
	px.Unimplemented("uploads")
	b, err = s3.New(context.Background(), s3.Config{Endpoint: px.Endpoint, Bucket: bucket, Prefix: "bench", RunID: "elsewhere"})
	if err != nil {
		t.Errorf("a service that answers ListMultipartUploads with NotImplemented: %v", err)
	} else if err := b.Close(); err != nil {
		t.Errorf("Close on a service without ListMultipartUploads: %v", err)
	}
	ups, err := c.ListMultipartUploads(context.Background(), &awss3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 1 || *ups.Uploads[0].UploadId != *out.UploadId {
		t.Errorf("the other's upload is gone: the bucket's uploads are %v", ups.Uploads)
	}
}

// TestServerErrorMidRun: a server that fails requests mid-run (500
// InternalError on every attempt) fails the writes it refuses, counted as
// failed with their retries and not as throttling; Close then removes
// every object the run wrote and aborts its upload, and leaves another
// run's prefix and the rest of the bucket as they were.
func TestServerErrorMidRun(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	theirs := map[string]string{"bench/run-other/0_a": "another run's", "bench/run-other-upload/x": "", "other": "not kvbench's"}
	for k, v := range theirs {
		if v != "" {
			srv.Put(t, bucket, k, []byte(v))
		}
	}
	c := srv.Client()
	key := "bench/run-other-upload/x"
	if _, err := c.CreateMultipartUpload(context.Background(), &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: &key}); err != nil {
		t.Fatal(err)
	}
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{Prefix: "bench", RunID: "mine", PartSize: s3.MinPartSize, MaxAttempts: 2, MaxBackoff: time.Millisecond})
	write := func(key string, size int64) error {
		o, err := b.Open(key, size, true)
		if err != nil {
			return err
		}
		p := make([]byte, size)
		replaytest.Fill(p, uint64(size), 0)
		for off := int64(0); off < size; off += 1 << 20 {
			if _, err := o.WriteAt(p[off:min(off+1<<20, size)], off); err != nil {
				o.Close()
				return err
			}
		}
		return o.Close()
	}
	for i, size := range []int64{4096, 6 << 20} {
		if err := write(fmt.Sprintf("ok%d", i), size); err != nil {
			t.Fatal(err)
		}
	}
	// The second part of a multipart upload fails, then a whole PUT.
	big := int64(11 << 20)
	o, err := b.Open("broken", big, true)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, big)
	if _, err := o.WriteAt(p[:s3.MinPartSize], 0); err != nil {
		t.Fatal(err)
	}
	px.Break(-1)
	if _, err := o.WriteAt(p[s3.MinPartSize:], s3.MinPartSize); err == nil || !strings.Contains(err.Error(), "InternalError") {
		t.Errorf("a part refused by the server: %v, want its InternalError", err)
	}
	o.Close()
	if err := write("refused", 4096); err == nil {
		t.Error("a PUT refused by the server succeeded")
	}
	st := b.Stats()
	if st.Failed["UploadPart"] != 1 || st.Failed["PutObject"] != 1 || st.Throttled != 0 || st.Retries < 2 {
		t.Errorf("failed %v, %d retries, %d throttled: want a part and a PUT failed after their retries, none throttled", st.Failed, st.Retries, st.Throttled)
	}
	px.Break(0)
	if err := b.Close(); err != nil {
		t.Fatalf("Close once the server is well: %v", err)
	}
	noneUnder(t, srv, b.RunPrefix())
	keys := srv.Keys(t, bucket)
	slices.Sort(keys)
	want := []string{"bench/run-other/0_a", "other", "upload:bench/run-other-upload/x"}
	if !slices.Equal(keys, want) {
		t.Errorf("after the run the bucket holds %q, want %q", keys, want)
	}
	for k, v := range theirs {
		if v == "" {
			continue
		}
		if got := srv.Get(t, bucket, k); string(got) != v {
			t.Errorf("%s now holds %q, was %q", k, got, v)
		}
	}
}

// TestCheckErrors: New's check fails, for every set-up a user can get
// wrong, with one line that names the flag or variable to change and
// says what to do, marked as the user's input (IsInput) where it is, within Config.Timeout where the server never answers, and without
// a credential.
func TestCheckErrors(t *testing.T) {
	srv := start(t, s3test.Options{})
	silent := s3test.Throttle(t, srv)
	silent.Hang(s3test.Silent)
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + refused.Addr().String()
	refused.Close()
	for _, tc := range []struct {
		name   string
		cfg    s3.Config
		env    map[string]string
		want   string
		input  bool // the user's input, not the server's failure
		within time.Duration
	}{
		{name: "missing bucket", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: "no-such-bucket"},
			want: "--s3-bucket no-such-bucket: no such bucket at " + srv.Endpoint + ": create it first", input: true},
		// S3's rules refuse what validBucket lets through for legacy
		// buckets: the server's answer names the flag too.
		{name: "bucket name the server refuses", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: "KV_bad"},
			want: "--s3-bucket KV_bad: " + srv.Endpoint + " refuses the name (InvalidBucketName: The specified bucket is not valid): give the bucket's name (3 to 63 lower-case letters, digits, '.' and '-')", input: true},
		{name: "wrong secret", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: bucket}, env: map[string]string{"AWS_SECRET_ACCESS_KEY": "wrong-secret-0123456789"},
			want: srv.Endpoint + " refused the credentials (SignatureDoesNotMatch): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", input: true},
		{name: "wrong key", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: bucket}, env: map[string]string{"AWS_ACCESS_KEY_ID": "wrongkey0123456789"},
			want: srv.Endpoint + " refused the credentials", input: true},
		{name: "wrong region", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: bucket}, env: map[string]string{"AWS_REGION": "eu-west-1"},
			want: "s3: " + srv.Endpoint + ": bucket " + bucket + " is not in region eu-west-1 (AuthorizationHeaderMalformed: ", input: true},
		{name: "no credentials", cfg: s3.Config{Endpoint: srv.Endpoint, Bucket: bucket}, env: map[string]string{"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""},
			want: "no AWS credentials found for " + srv.Endpoint + ": set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE", input: true},
		{name: "endpoint with a path", cfg: s3.Config{Endpoint: srv.Endpoint + "/s3", Bucket: bucket},
			want: "--s3-bucket " + bucket + ": no such bucket at " + srv.Endpoint + "/s3: the endpoint has a path (/s3), which the requests' paths start with: give the server's URL without it", input: true},
		{name: "nothing listening", cfg: s3.Config{Endpoint: closed, Bucket: bucket},
			want: "--s3-endpoint " + closed + ": cannot connect (connect: connection refused): is this the server's address, and is it up?", input: true},
		{name: "endpoint from the environment", cfg: s3.Config{Bucket: bucket}, env: map[string]string{"AWS_ENDPOINT_URL_S3": closed},
			want: "AWS_ENDPOINT_URL_S3 " + closed + " (no --s3-endpoint): cannot connect", input: true},
		{name: "https to an http server", cfg: s3.Config{Endpoint: strings.Replace(srv.Endpoint, "http:", "https:", 1), Bucket: bucket},
			want: "--s3-endpoint https://" + strings.TrimPrefix(srv.Endpoint, "http://") + ": the server answers http, not https: give its http:// URL", input: true},
		{name: "a server that never answers", cfg: s3.Config{Endpoint: silent.Endpoint, Bucket: bucket, Timeout: 300 * time.Millisecond},
			want: "--s3-endpoint " + silent.Endpoint + ": no answer within 300ms: is it an S3 server, and is it up?", input: false, within: 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			begin := time.Now()
			b, err := s3.New(context.Background(), tc.cfg)
			if err == nil {
				b.Close()
				t.Fatalf("New succeeded; want %q", tc.want)
			}
			if took := time.Since(begin); tc.within > 0 && took > tc.within {
				t.Errorf("New took %v to fail, want at most %v", took, tc.within)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "RequestID") {
				t.Errorf("New: %q\nwant one line with %q (and not the SDK's account of the request)", msg, tc.want)
			}
			if s3.IsInput(err) != tc.input {
				t.Errorf("New: %v: IsInput %v, want %v", err, s3.IsInput(err), tc.input)
			}
			for _, secret := range []string{srv.SecretKey, "wrong-secret-0123456789", "wrongkey0123456789"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error carries a credential: %v", err)
				}
			}
		})
	}
}

// TestServerHangs: a server that takes requests and stops answering, or
// stops in the middle of a response's body, fails the request once every
// attempt went Timeout without a byte, and every later request at once,
// so that a run ends in bounded time instead of hanging.
func TestServerHangs(t *testing.T) {
	for _, mode := range []int{s3test.Silent, s3test.MidBody} {
		t.Run(map[int]string{s3test.Silent: "silent", s3test.MidBody: "mid-body"}[mode], func(t *testing.T) {
			srv := start(t, s3test.Options{KeepAlive: true})
			px := s3test.Throttle(t, srv)
			b := newBackend(t, px.Endpoint, s3.Config{MaxAttempts: 2, MaxBackoff: time.Millisecond, Timeout: 300 * time.Millisecond})
			const size = 64 << 10
			p := make([]byte, size)
			replaytest.Fill(p, 7, 0)
			o, err := b.Open("k", size, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.WriteAt(p, 0); err != nil {
				t.Fatal(err)
			}
			px.Hang(mode)
			begin := time.Now()
			_, err = o.ReadAt(make([]byte, size), 0)
			if took := time.Since(begin); err == nil || took > 5*time.Second ||
				!strings.Contains(err.Error(), px.Endpoint+" sent nothing for 300ms: is the server up and well?") {
				t.Fatalf("a read from a server that hangs: %v after %v; want it to fail within seconds, saying so", err, took)
			}
			// The SDK retries a request that got no response; a body that
			// stops is the one attempt's.
			if want := map[int]int64{s3test.Silent: 2, s3test.MidBody: 1}[mode]; px.Hung() < want {
				t.Errorf("the proxy hung %d requests, want at least %d", px.Hung(), want)
			}
			begin = time.Now()
			_, err = o.ReadAt(make([]byte, size), 0)
			if took := time.Since(begin); err == nil || took > time.Second || !strings.Contains(err.Error(), "stopped answering") {
				t.Errorf("a read after one hung: %v after %v; want it to fail at once", err, took)
			}
			o.Close()
			px.Hang(s3test.Answer)
		})
	}
}

// TestThrottled: 503 SlowDown responses are retried and counted; a storm
// longer than the attempts fails the request with a clear error.
func TestThrottled(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{MaxAttempts: 4, MaxBackoff: time.Millisecond})
	defer b.Close()
	p := make([]byte, 64<<10)
	replaytest.Fill(p, 1, 0)
	b.StartClock()
	px.Fail(3)
	o, err := b.Open("k", int64(len(p)), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatalf("a write through 3 throttling responses and 4 attempts: %v", err)
	}
	st := b.Stats()
	if st.Throttled != 3 || st.Retries != 3 || px.Refused() != 3 {
		t.Errorf("throttled %d, retries %d (the proxy refused %d); want 3 and 3", st.Throttled, st.Retries, px.Refused())
	}
	// The proxy read each refused attempt's body whole: it was sent, in
	// vain, and counts apart from the bytes the server took; all of it in
	// the measured window.
	n := int64(len(p))
	if st.BytesPut != n || st.BytesPutFailed != 3*n || st.Measured.BytesPut != n || st.Measured.BytesPutFailed != 3*n || st.Setup.BytesPutFailed != 0 {
		t.Errorf("bytes put %d, failed %d (measured %d and %d, setup %d failed); want %d, %d, all measured",
			st.BytesPut, st.BytesPutFailed, st.Measured.BytesPut, st.Measured.BytesPutFailed, st.Setup.BytesPutFailed, n, 3*n)
	}
	px.Fail(-1)
	q := make([]byte, len(p))
	_, err = o.ReadAt(q, 0)
	// The server's answer and the attempts, not the SDK's account of the
	// operation ("operation error S3: GetObject, ... RequestID: , HostID: ,").
	want := "GET " + b.RunPrefix() + `k: HTTP 503 SlowDown (Please reduce your request rate), after 4 attempts: the server kept throttling after every retry`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "operation error") {
		t.Errorf("a read in a storm of 503s: %v, want an error with %q", err, want)
	}
	if st := b.Stats(); st.Throttled != 3+4 || st.Failed["GetObject"] != 1 {
		t.Errorf("after the storm: throttled %d, failed %v; want 7 and one GET", st.Throttled, st.Failed)
	}
	px.Fail(0)
	if _, err := o.ReadAt(q, 0); err != nil || !bytes.Equal(p, q) {
		t.Errorf("a read after the storm: %v", err)
	}
	o.Close()
}

// TestFailedUploadAbortedOnce: a multipart upload whose part fails after
// every attempt is aborted once, and neither the object's Close nor the
// backend's aborts it again (the second abort's 404 NoSuchUpload counted
// as a failed request), and it leaves nothing.
func TestFailedUploadAbortedOnce(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{PartSize: s3.MinPartSize, MaxAttempts: 2, MaxBackoff: time.Millisecond})
	const size = s3.MinPartSize + 4096
	p := make([]byte, size)
	o, err := b.Open("k", size, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(p[:s3.MinPartSize], 0); err != nil {
		t.Fatal(err)
	}
	px.Fail(2)
	if _, err := o.WriteAt(p[s3.MinPartSize:], s3.MinPartSize); err == nil || !strings.Contains(err.Error(), "SlowDown") {
		t.Fatalf("the last part through 2 503s of 2 attempts: %v, want a SlowDown error", err)
	}
	o.Close()
	prefix := b.RunPrefix()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.Requests["AbortMultipartUpload"] != 1 || st.Failed["AbortMultipartUpload"] != 0 || st.Failed["UploadPart"] != 1 {
		t.Errorf("requests %v, failed %v: want one abort, not failed, and one failed UploadPart", st.Requests, st.Failed)
	}
	// The first part went up; both attempts of the last were sent and
	// refused.
	if st := b.Stats(); st.BytesPut != s3.MinPartSize || st.BytesPutFailed != 2*4096 {
		t.Errorf("bytes put %d, failed %d; want %d and %d", st.BytesPut, st.BytesPutFailed, s3.MinPartSize, 2*4096)
	}
	noneUnder(t, srv, prefix)
}

// TestCutBodies: a GET whose body is cut short (the connection reset
// after its first kilobyte) is tried again within the attempts, counted
// as a retry, and its bytes are right; one cut on every attempt fails the
// read, saying how much came. The bytes got count what each cut attempt
// brought (a kilobyte): it crossed the wire.
func TestCutBodies(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{MaxAttempts: 3, MaxBackoff: time.Millisecond})
	defer b.Close()
	const size = 64 << 10
	p := make([]byte, size)
	replaytest.Fill(p, 3, 0)
	o, err := b.Open("k", size, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	px.Cut(2)
	q := make([]byte, size)
	if _, err := o.ReadAt(q, 0); err != nil || !bytes.Equal(p, q) {
		t.Fatalf("a read whose first 2 responses were cut, of 3 attempts: %v (bytes equal: %v)", err, bytes.Equal(p, q))
	}
	// The kilobyte each cut response brought crossed the wire: it counts.
	if st := b.Stats(); px.Cuts() != 2 || st.Requests["GetObject"] != 1 || st.Retries != 2 || st.Failed["GetObject"] != 0 || st.BytesGot != size+2<<10 {
		t.Errorf("after 2 cut responses: %d cut, requests %v, retries %d, failed %v, %d bytes got; want 2, one GET, 2 retries, none failed, %d bytes",
			px.Cuts(), st.Requests, st.Retries, st.Failed, st.BytesGot, size+2<<10)
	}
	px.Cut(3)
	_, err = o.ReadAt(q, 0)
	if err == nil || !strings.Contains(err.Error(), "read 1024 of 65536 bytes of the response") {
		t.Errorf("a read cut on every attempt: %v, want an error that says how much came", err)
	}
	if st := b.Stats(); px.Cuts() != 5 || st.Failed["GetObject"] != 1 || st.BytesGot != size+5<<10 {
		t.Errorf("after a read cut on every attempt: %d cut, failed %v, %d bytes got; want 5, one GET and %d bytes", px.Cuts(), st.Failed, st.BytesGot, size+5<<10)
	}
}

// TestCloseAbortsEveryUpload: Close aborts the unfinished multipart
// uploads under the run's prefix that the backend does not know of (a
// create that failed on the client after the server took it), however
// many pages of them the server lists.
func TestCloseAbortsEveryUpload(t *testing.T) {
	defer s3.SetUploadsPage(2)()
	srv := start(t, s3test.Options{})
	srv.Put(t, bucket, "theirs", []byte("theirs"))
	cl := srv.Client()
	var theirs string
	if out, err := cl.CreateMultipartUpload(context.Background(), &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("their-upload")}); err != nil {
		t.Fatal(err)
	} else {
		theirs = aws.ToString(out.UploadId)
	}
	b := newBackend(t, srv.Endpoint, s3.Config{})
	for i := range 5 {
		key := fmt.Sprintf("%sorphan-%d", b.RunPrefix(), i)
		if _, err := cl.CreateMultipartUpload(context.Background(), &awss3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: &key}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	noneUnder(t, srv, b.RunPrefix())
	keys := srv.Keys(t, bucket)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"theirs", "upload:their-upload"}) {
		t.Errorf("after Close the bucket holds %q: want theirs, and their upload", keys)
	}
	cl.AbortMultipartUpload(context.Background(), &awss3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("their-upload"), UploadId: &theirs})
}

// TestServerKilled: requests to a server that died fail with an error that
// says so, Close says what it could not delete and where, and a server
// started again on the same directory shows that only the run's objects
// were left, the others untouched.
func TestServerKilled(t *testing.T) {
	root := t.TempDir()
	srv := start(t, s3test.Options{Root: root})
	srv.Put(t, bucket, "theirs", []byte("theirs"))
	var warned []string
	b := newBackend(t, srv.Endpoint, s3.Config{MaxAttempts: 2, MaxBackoff: time.Millisecond, RunID: "killed",
		Warn: func(m string) { warned = append(warned, m) }})
	p := make([]byte, 4096)
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	o.Close()
	srv.Kill()
	o2, err := b.Open("k2", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = o2.WriteAt(p, 0)
	if err == nil || !strings.Contains(err.Error(), "is the server up?") {
		t.Errorf("a write to a dead server: %v, want an error that says the server cannot be reached", err)
	}
	err = b.Close()
	// What is left, and the command that removes it from this server; the
	// server's absence said once, not once per object.
	if err == nil || !strings.Contains(err.Error(), "run-killed/") ||
		!strings.Contains(err.Error(), "aws --endpoint-url "+srv.Endpoint+" s3 rm --recursive s3://"+bucket+"/run-killed/") ||
		!strings.Contains(err.Error(), "aws --endpoint-url "+srv.Endpoint+" s3api list-multipart-uploads --bucket "+bucket+" --prefix run-killed/") ||
		strings.Count(err.Error(), "is the server up?") != 1 {
		t.Errorf("Close after the server died: %v, want an error naming what is left and how to remove it, the cause once", err)
	}
	if len(warned) != 1 || strings.Contains(warned[0], "\n") || !strings.Contains(warned[0], "run-killed/") {
		t.Errorf("Warn was told %q, want one line naming what is left", warned)
	}
	again := s3test.Start(t, s3test.Options{Root: root})
	keys := again.Keys(t, bucket)
	slices.Sort(keys)
	if len(keys) != 3 || keys[0] != "run-killed/.kvreplay-run" || keys[1] != "run-killed/0_k" && keys[1] != "run-killed/k" || keys[2] != "theirs" {
		t.Errorf("after the crash the bucket holds %q: want the run's claim and one object, and theirs", keys)
	}
}

// TestHTTP1: over https to a server that offers HTTP/2 (as a Go server
// does by default), the requests go over HTTP/1.1, a connection each request
// in flight, as --s3-concurrency says and S3 serves: they were all
// multiplexed on one HTTP/2 connection (through such a proxy in front of
// versitygw, 96 GETs of 4 MiB, 16 at once, alternated runs: 370-560 MB/s
// over HTTP/1.1, 112-303 over one HTTP/2 connection).
func TestHTTP1(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.ThrottleTLS(t, srv)
	t.Setenv("AWS_CA_BUNDLE", px.CAFile)
	b := newBackend(t, px.Endpoint, s3.Config{Concurrency: 4})
	defer b.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			p := bytes.Repeat([]byte{byte(i)}, 256<<10)
			if err := b.Put(context.Background(), fmt.Sprint(i), bytes.NewReader(p), int64(len(p))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := px.HTTP2(); n != 0 {
		t.Errorf("%d requests went over HTTP/2", n)
	}
	if n := px.Conns(); n < 2 {
		t.Errorf("8 PUTs, 4 at once, came on %d connection(s)", n)
	}
}

// TestReadSpanningParts: a read that spans several parts (a block bigger
// than the part size) makes their GETs at once, not one after another,
// and gets every byte.
func TestReadSpanningParts(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	px := s3test.Throttle(t, srv)
	b := newBackend(t, px.Endpoint, s3.Config{Concurrency: 4, PartSize: s3.MinPartSize})
	defer b.Close()
	size := int64(4 * s3.MinPartSize)
	p := make([]byte, size)
	replaytest.Fill(p, 7, 0)
	o, err := b.Open("big", size, true)
	if err != nil {
		t.Fatal(err)
	}
	for off := int64(0); off < size; off += 1 << 20 {
		if _, err := o.WriteAt(p[off:off+1<<20], off); err != nil {
			t.Fatal(err)
		}
	}
	o.Close()
	o, err = b.Open("big", size, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// Each GET held 100 ms: one after another they never overlap.
	px.Delay(100 * time.Millisecond)
	px.ResetPeak()
	q := make([]byte, size-2<<20)
	if _, err := o.ReadAt(q, 1<<20); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q, p[1<<20:size-1<<20]) {
		t.Error("the read's bytes differ from those written")
	}
	if n := px.Peak(); n < 2 {
		t.Errorf("a read of 4 parts had %d GET(s) in flight at most", n)
	}
}

// TestHTTPS: an https endpoint whose certificate a private CA signed works
// with that CA in AWS_CA_BUNDLE, and is refused without it.
func TestHTTPS(t *testing.T) {
	srv := start(t, s3test.Options{TLS: true})
	b := newBackend(t, srv.Endpoint, s3.Config{})
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	replaytest.Fill(p, 5, 0)
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	q := make([]byte, 4096)
	if _, err := o.ReadAt(q, 0); err != nil || !bytes.Equal(p, q) {
		t.Fatalf("read over https: %v", err)
	}
	o.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", "")
	_, err = s3.New(context.Background(), s3.Config{Endpoint: srv.Endpoint, Bucket: bucket, MaxAttempts: 1})
	if want := "--s3-endpoint " + srv.Endpoint + ": the server's certificate is not trusted (x509: certificate signed by unknown authority"; err == nil ||
		!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "give its CA's PEM file in AWS_CA_BUNDLE") || !s3.IsInput(err) {
		t.Errorf("https without the CA: %v, want the user's input error %q..., naming AWS_CA_BUNDLE", err, want)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  s3.Config
		want string // "" valid
	}{
		{s3.Config{Bucket: "b-1"}, ""},
		{s3.Config{Bucket: "b-1", Endpoint: "https://s3.example.com", Prefix: "a/b", Concurrency: 64, PartSize: 16 << 20}, ""},
		{s3.Config{}, "--s3-bucket: a tier maps to s3 and names no bucket"},
		{s3.Config{Bucket: "a/b"}, `--s3-bucket "a/b": not a bucket name`},
		{s3.Config{Bucket: "bb", Endpoint: "127.0.0.1:7070"}, `--s3-endpoint "127.0.0.1:7070": want a URL`},
		{s3.Config{Bucket: "bbb", Endpoint: "http://key:secret@host"}, "--s3-endpoint: carries credentials"},
		{s3.Config{Bucket: "bbb", Endpoint: "http://host:7070?x=1"}, `--s3-endpoint "http://host:7070?x=1": has a query or fragment`},
		{s3.Config{Bucket: "bbb", Endpoint: "http://host:7070/#a"}, `--s3-endpoint "http://host:7070/#a": has a query or fragment`},
		{s3.Config{Bucket: "bbb", Prefix: "/p"}, `--s3-prefix "/p": starts with '/'`},
		{s3.Config{Bucket: "bbb", Concurrency: -1}, "--s3-concurrency -1"},
		{s3.Config{Bucket: "bbb", PartSize: 1 << 20}, "--s3-part-size 1048576: must be between 5 MiB and 5 GiB"},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") && !strings.Contains(tc.want, "credentials") {
			t.Errorf("Validate(%+v) = %v: carries a credential", tc.cfg, err)
		}
		// CheckFlags is the same rules but the bucket's being named.
		if ferr := tc.cfg.CheckFlags(); tc.cfg.Bucket != "" && fmt.Sprint(ferr) != fmt.Sprint(err) || tc.cfg.Bucket == "" && ferr != nil {
			t.Errorf("CheckFlags(%+v) = %v; Validate = %v", tc.cfg, ferr, err)
		}
		// New applies Validate, and says that the input is to change.
		if tc.want != "" {
			_, nerr := s3.New(context.Background(), tc.cfg)
			if nerr == nil || nerr.Error() != err.Error() || !s3.IsInput(nerr) {
				t.Errorf("New(%+v) = %v (input: %v); want Validate's %v, input", tc.cfg, nerr, s3.IsInput(nerr), err)
			}
		}
	}
	// Without a bucket, CheckFlags still sees the others.
	if err := (&s3.Config{Endpoint: "127.0.0.1:1"}).CheckFlags(); err == nil || err.Error() != `--s3-endpoint "127.0.0.1:1": want a URL such as http://127.0.0.1:7070 or https://s3.example.com` {
		t.Errorf("CheckFlags of an endpoint that is no URL, no bucket: %v", err)
	}
	// Every problem at once, one per line.
	err := (&s3.Config{Bucket: "x", Prefix: "/p", Concurrency: -1}).Validate()
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Errorf("three problems: %v, want three lines", err)
	}
}

// TestBlockReadsShareGets: the blocks an engine reads of one object, at
// once and in any order, share one GET per part, and each gets its bytes.
func TestBlockReadsShareGets(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	b := newBackend(t, srv.Endpoint, s3.Config{PartSize: s3.MinPartSize})
	defer b.Close()
	for _, tc := range []struct {
		size int64
		blk  int
		gets int64
	}{
		{12 << 20, 1 << 20, 3},
		{300 << 10, 4 << 10, 1},
		{5<<20 + 4096, 1 << 20, 2}, // the last block passes the end
	} {
		o, err := b.Open("k", tc.size, true)
		if err != nil {
			t.Fatal(err)
		}
		whole := make([]byte, tc.size)
		replaytest.Fill(whole, uint64(tc.size), 0)
		if _, err := o.WriteAt(whole, 0); err != nil {
			t.Fatal(err)
		}
		before := b.Stats().Requests["GetObject"]
		var offs []int64
		for off := int64(0); off < tc.size; off += int64(tc.blk) {
			offs = append(offs, off)
		}
		rand.Shuffle(len(offs), func(i, j int) { offs[i], offs[j] = offs[j], offs[i] })
		var wg sync.WaitGroup
		errs := make(chan error, len(offs))
		for _, off := range offs {
			wg.Go(func() {
				p := make([]byte, tc.blk)
				n, err := o.ReadAt(p, off)
				end := min(off+int64(tc.blk), tc.size)
				if int64(n) != end-off || err != nil && !(errors.Is(err, io.EOF) && end < off+int64(tc.blk)) {
					errs <- fmt.Errorf("ReadAt(%d) = %d, %w", off, n, err)
				} else if !bytes.Equal(p[:n], whole[off:end]) {
					errs <- fmt.Errorf("block at %d differs", off)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := b.Stats().Requests["GetObject"] - before; got != tc.gets {
			t.Errorf("%d bytes read in blocks of %d: %d GETs, want %d (one a part)", tc.size, tc.blk, got, tc.gets)
		}
		if err := o.Remove(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEndpointFromEnv: with no endpoint given, the AWS chain's
// (AWS_ENDPOINT_URL_S3) is used, addressed by path.
func TestEndpointFromEnv(t *testing.T) {
	srv := start(t, s3test.Options{})
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	b := newBackend(t, "", s3.Config{})
	if !strings.HasSuffix(b.Where(), " at "+srv.Endpoint) {
		t.Errorf("Where() = %q, want the environment's endpoint %s", b.Where(), srv.Endpoint)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestOnePartOneBuffer: the blocks of one part written at once take one
// part buffer between them (each took one, and all but one went back: a
// part of 8 MiB written by 64 blocks at once held up to 512 MiB).
func TestOnePartOneBuffer(t *testing.T) {
	srv := start(t, s3test.Options{KeepAlive: true})
	b := newBackend(t, srv.Endpoint, s3.Config{PartSize: s3.MinPartSize})
	defer b.Close()
	const size, blk = 2 * s3.MinPartSize, 64 << 10
	o, err := b.Open("k", size, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	want := make([]byte, size)
	replaytest.Fill(want, 13, 0)
	go1 := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, size/blk)
	for off := int64(0); off < size; off += blk {
		wg.Go(func() {
			<-go1
			if _, err := o.WriteAt(want[off:off+blk], off); err != nil {
				errs <- err
			}
		})
	}
	close(go1)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if peak := s3.PartsPeak(b); peak > size {
		t.Errorf("the %d blocks of 2 parts written at once held %d bytes of part buffers at most; want at most the 2 parts' %d", size/blk, peak, int64(size))
	}
	got := make([]byte, size)
	if _, err := o.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Errorf("read back: %v (bytes equal: %v)", err, bytes.Equal(got, want))
	}
}

// TestKeep: with Keep, Close leaves the run's objects where they are, and
// aborts its unfinished multipart uploads (no object of the run's: parts
// a store would keep, and bill, out of sight of aws s3 ls).
func TestKeep(t *testing.T) {
	srv := start(t, s3test.Options{})
	b := newBackend(t, srv.Endpoint, s3.Config{Keep: true, RunID: "kept", PartSize: s3.MinPartSize})
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	replaytest.Fill(p, 9, 0)
	if _, err := o.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	o.Close()
	// The run ends with an object whose first part only is up.
	big, err := b.Open("big", s3.MinPartSize+4096, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := big.WriteAt(make([]byte, s3.MinPartSize), 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if held, up := s3.PartsHeld(b); held != 0 || up != 0 {
		t.Errorf("after Close: %d bytes of part buffers out, %d parts going up; want the abandoned part's given back", held, up)
	}
	if got := srv.Get(t, bucket, "run-kept/k"); !bytes.Equal(got, p) {
		t.Errorf("the kept object holds %d bytes, not those written", len(got))
	}
	if keys := srv.Keys(t, bucket); !slices.Equal(keys, []string{"run-kept/.kvreplay-run", "run-kept/k"}) {
		t.Errorf("after Close with Keep the bucket holds %q: want the run's claim and the object written, no upload", keys)
	}
}

// TestStartClock: Stats splits the requests at StartClock and Close: the
// window's from one to the other, the setup's before (New's check, the
// writes before the clock) and after (Close's clean-up); a second
// StartClock moves nothing, and without one nothing is split.
func TestStartClock(t *testing.T) {
	srv := start(t, s3test.Options{})
	b := newBackend(t, srv.Endpoint, s3.Config{})
	put := func(key string) backend.Object {
		t.Helper()
		o, err := b.Open(key, 4096, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
			t.Fatal(err)
		}
		return o
	}
	put("before").Close()
	if st := b.Stats(); st.Measured != nil || st.Setup != nil {
		t.Fatalf("before StartClock: measured %+v, setup %+v; want neither", st.Measured, st.Setup)
	}
	b.StartClock()
	o := put("in")
	b.StartClock() // changes nothing
	if _, err := o.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	o.Close()
	st := b.Stats()
	wantM := map[string]int64{"PutObject": 1, "GetObject": 1}
	if st.Measured == nil || !maps.Equal(st.Measured.Requests, wantM) || st.Measured.BytesPut != 4096 || st.Measured.BytesGot != 4096 {
		t.Fatalf("in the window: measured %+v; want %v, 4096 bytes each way", st.Measured, wantM)
	}
	if st.BytesPutFailed != 0 {
		t.Errorf("%d bytes of failed PUTs of a run none failed: the client read the bodies more than once", st.BytesPutFailed)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.StartClock() // after Close: nothing
	st = b.Stats()
	if !maps.Equal(st.Measured.Requests, wantM) || st.Measured.BytesPut != 4096 || st.Measured.BytesGot != 4096 {
		t.Errorf("after Close: measured %+v; want the window's %v, 4096 bytes each way", st.Measured, wantM)
	}
	su := st.Setup
	if su.Requests["PutObject"] != 2 || su.BytesPut != 4096 || su.Requests["DeleteObject"] != 3 || su.Requests["ListObjectsV2"] != 2 ||
		su.Requests["ListMultipartUploads"] != 2 || su.Requests["GetObject"] != 0 || su.BytesGot != 0 {
		t.Errorf("setup %+v; want New's claim of the prefix (an empty PUT) and the write before, the check's and the clean-up's listings (of objects and of uploads), the clean-up's 3 deletes (2 objects, the claim)", su)
	}
	for op, n := range st.Requests {
		if st.Measured.Requests[op]+su.Requests[op] != n {
			t.Errorf("%s: %d measured and %d setup of %d", op, st.Measured.Requests[op], su.Requests[op], n)
		}
	}
}

// TestEmptyRead: a read of no bytes within an object reads nothing and
// succeeds, as io.ReaderAt's does (it indexed the first of no parts and
// panicked).
func TestEmptyRead(t *testing.T) {
	srv := start(t, s3test.Options{})
	b := newBackend(t, srv.Endpoint, s3.Config{})
	defer b.Close()
	o, err := b.Open("k", 4096, true)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	if n, err := o.ReadAt(nil, 100); n != 0 || err != nil {
		t.Errorf("a read of no bytes at offset 100 of 4096: %d, %v; want 0, nil", n, err)
	}
}
