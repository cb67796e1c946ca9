// Package s3 owns kvreplay's object-storage tier: a backend.Backend whose
// objects are objects in an S3 bucket, written whole (one PUT, or a
// multipart upload above the part size), read by ranged GETs of the
// blocks the engine asks for, and deleted when the trace deletes them.
//
// A run works under a prefix of its own, <prefix>/run-<id>/, which must be
// empty when the backend is made (so that everything under it is the
// run's), and Close removes what the run created there (objects and
// unfinished multipart uploads) and nothing else, unless told to keep it.
// kvreplay never creates or deletes buckets. Found empty, the prefix is
// claimed by an object, <prefix>/run-<id>/.kvreplay-run, holding a random
// token of the run's, created by a conditional PUT (If-None-Match: *): of
// runs given the same run id at once (a library caller's; kvreplay makes a
// random one), which all find the prefix empty, one creates it and the
// others refuse the prefix. A retry of the PUT whose first answer was lost
// knows the object it finds for its own by the token; one refused for a
// claim that is not there when read is sent again, and one whose claim
// cannot be read fails the check.
// That holds on servers that make conditional writes atomic (AWS S3,
// versitygw, tested; MinIO and Ceph RGW take the header too). One that
// refuses the header (501 Not Implemented) leaves the prefix unclaimed,
// and the run says so; one that ignores it cannot be told from one that
// takes it, and there two runs of one id at once would share the prefix.
//
// Endpoint, bucket and prefix come from Config; credentials, region and,
// when Config has none, the endpoint come from the standard AWS
// environment and configuration chain (AWS_ACCESS_KEY_ID, AWS_PROFILE,
// ~/.aws/config, AWS_ENDPOINT_URL_S3, AWS_CA_BUNDLE for an https endpoint
// with a private CA, ...), through aws-sdk-go-v2. Credentials are never
// written anywhere: errors that might carry them are scrubbed.
//
// The S3 protocol has no partial writes, so an Object assembles its
// blocks in part-sized buffers and uploads each part as soon as it is
// written whole: an object of at most PartSize bytes is one PUT when its
// last block arrives, a bigger one a multipart upload whose parts go up
// as they fill and which completes with its last part. An object exists
// on the server, and Open finds it, once it has been written whole. The
// backend keeps the names, sizes and ETags of the run's objects itself,
// so Open costs no request; a GET is conditional on the ETag its object's
// upload was answered with (If-Match: no request more), and its answer is
// checked against them (its ETag, and its Content-Range or
// Content-Length), so that an object another client replaced, with bytes
// of any size, or truncated, fails the read instead of being read as the
// run's. A server that gives no ETag leaves the sizes alone to tell.
//
// Memory: what is bounded and what is not. Requests in flight are
// bounded by Config.Concurrency (and idle connections kept by twice it).
// Buffers come from pools by size class (the least power of two that
// holds them), which keep them until a collection. The parts being
// assembled are bounded by a budget of Concurrency + Concurrency/4 + 1
// parts, softly: a writer that needs a part buffer past the budget waits
// only while a part is on its way up (whose buffer comes back when its
// request ends); with none going up, the buffers out are parts waiting
// for the engine's next blocks, and it takes one anyway, so the parts
// out may pass the budget by as many parts as are written in part at
// once (the parts of the objects the engine is writing bound them).
// Reads are not budgeted: a read of a whole part goes straight into the
// caller's buffer, and the blocks read of one part share one part-sized
// buffer, taken before its GET waits for a slot of Concurrency and held
// until the part's last byte is copied out or the Object is closed; so
// up to a part per part being read in blocks at once, which the engine's
// reads in flight bound, not Concurrency. Put and Get
// (backend.ObjectStore) hold no part buffers: a Get streams through a
// 256 KiB buffer a request.
//
// Every request is counted by type, with its retries, the throttling
// responses among them (503 SlowDown, 429) and, for GETs, the time to the
// first byte of the response that brought the bytes, from the call (a
// retried GET's earlier attempts and backoff included, as in the
// operation's latency, and counted apart); Stats reports them, over the whole run and,
// once StartClock marked the replay's clock's start, split between the
// measured window (until Close) and the setup (New's check, the untimed
// writes before the clock, Close's clean-up).
//
// A run ends in bounded time whatever the server does: an attempt that
// gets no byte for Config.Timeout fails, and is tried again as one that
// got a reset or a 503 is (a GET's body cut short is tried again too, one
// that stopped coming for Timeout is not); once a request found the
// server unreachable or silent on every attempt, every later request
// fails at once, until Close, whose clean-up first asks the server once
// (a list, within Timeout) whether it answers again, and if it does,
// removes what the run made: so a run whose server stalled once waits up
// to Timeout more in Close where it stays silent. Where the run's claim
// got no answer, its clean-up looks for it past that refusal. The
// context given to New is the run's: once it is done
// (SIGINT, SIGTERM), the requests in flight end and later ones fail at
// once, and Close removes what it can while the server answers (see
// Config.CleanupGrace). The
// errors of New's check name the flag or variable to change; IsInput
// tells those the user's input caused.
package s3

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/objname"
	"github.com/kvbench/kvbench/replay/backend"
	"github.com/kvbench/kvbench/schema"
)

// Defaults of Config, those of a well-tuned client: sixteen requests in
// flight and 8 MiB parts (the AWS CLI's part size; rclone's --transfers
// is 4, the AWS CLI's 10, and an object store serves more at once).
const (
	DefaultConcurrency = 16
	DefaultPartSize    = 8 << 20
	// MinPartSize is S3's least part size (the last part excepted).
	MinPartSize = 5 << 20
	// MaxParts is S3's most parts in a multipart upload.
	MaxParts = 10000
	// DefaultMaxAttempts is how many times a request is tried, retries
	// of throttling responses and transient errors included.
	DefaultMaxAttempts = 5
	// DefaultTimeout is how long a connection may go without a byte from
	// the server while a request waits for its response or reads its
	// body: a server that stops answering fails the request's attempt
	// after it, not never.
	DefaultTimeout = 30 * time.Second
	// DefaultCleanupGrace is how long Close's clean-up, once the run's
	// context is done, may go without a request ending: an interrupted
	// run removes its objects from a server that answers, and exits in
	// seconds from one that does not.
	DefaultCleanupGrace = 2 * time.Second
	// CleanupGraces bounds an interrupted run's clean-up to this many
	// CleanupGraces in all, however the server answers.
	CleanupGraces = 15
)

// Config says where a run's objects live and how they move.
type Config struct {
	// Endpoint is the S3 service's URL (http://127.0.0.1:7070,
	// https://s3.example.com); "" takes the AWS chain's
	// (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, endpoint_url in the
	// profile) or AWS's own for the region. With an endpoint, buckets are
	// addressed by path, as S3-compatible servers expect.
	Endpoint string
	// Bucket must exist; it is never created or deleted.
	Bucket string
	// Prefix is where in the bucket the run makes its own prefix,
	// <Prefix>/run-<id>/; "" is the bucket's top.
	Prefix string
	// RunID names the run's prefix; "" makes a unique one (time and
	// random bytes).
	RunID string
	// Concurrency is the most requests in flight (and connections kept
	// open); 0 is DefaultConcurrency.
	Concurrency int
	// PartSize is the size of a multipart upload's parts, and the size
	// above which an object is uploaded in parts; 0 is DefaultPartSize.
	// It is at least MinPartSize.
	PartSize int64
	// MaxAttempts is how many times a request is tried; 0 is
	// DefaultMaxAttempts. AWS_MAX_ATTEMPTS (or max_attempts in the
	// profile), when set, overrides it, as it does for every AWS client.
	MaxAttempts int
	// MaxBackoff bounds the wait between two attempts; 0 is the SDK's
	// (20 s).
	MaxBackoff time.Duration
	// Timeout is how long a request's attempt may wait for the server's
	// next byte (its response, or more of its body), and how long New
	// waits for its check; 0 is DefaultTimeout.
	Timeout time.Duration
	// CleanupGrace bounds Close's clean-up once the context given to New
	// is done (an interrupted run): it stops once CleanupGrace passes
	// without a request of it ending (a server that stopped answering),
	// or CleanupGraces of them after the run's end; 0 is
	// DefaultCleanupGrace. A clean-up cut short says what is left. It
	// bounds a failed Put's abort of its upload the same way once the
	// Put's context is done (Close aborts what is left).
	CleanupGrace time.Duration
	// Keep leaves the run's objects in the bucket at Close (its
	// unfinished multipart uploads, no object of it, are aborted).
	Keep bool
	// Warn, when set, is also told what Close could not remove, for a
	// caller that closes its backends without looking at the error.
	Warn func(msg string)
}

// PartSizeOrDefault is the part size the tier uploads and reads objects
// in: PartSize, or DefaultPartSize for 0. A replay's plan counts the
// tier's requests with it (replay.Config.S3PartSize).
func (c *Config) PartSizeOrDefault() int64 {
	if c.PartSize == 0 {
		return DefaultPartSize
	}
	return c.PartSize
}

// Validate reports every problem of c at once, one per line, named by
// kvreplay's flags: a bucket not named, and CheckFlags's. It is the one
// definition of the rules: New applies it (its errors are IsInput), and
// a command applies CheckFlags with its other flags.
func (c *Config) Validate() error {
	var errs []error
	if c.Bucket == "" {
		errs = append(errs, errors.New("--s3-bucket: a tier maps to s3 and names no bucket: give the bucket kvreplay writes to (it must exist)"))
	}
	if err := c.CheckFlags(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckFlags reports every problem of the values c was given, one per
// line: Validate's rules but that a bucket is named, which only a tier
// that is made needs. A command checks them with its other flags, before
// it knows whether the trace uses the tier (a bucket S3 cannot name, an
// endpoint that is no URL, stop it before its plan).
func (c *Config) CheckFlags() error {
	var errs []error
	if c.Bucket != "" && !validBucket(c.Bucket) {
		errs = append(errs, fmt.Errorf("--s3-bucket %q: not a bucket name (3 to 63 lower-case letters, digits, '.' and '-')", c.Bucket))
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--s3-endpoint %q: want a URL such as http://127.0.0.1:7070 or https://s3.example.com", c.Endpoint))
		} else if u.User != nil {
			errs = append(errs, errors.New("--s3-endpoint: carries credentials in the URL: give them through the AWS environment or profile instead"))
		} else if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			errs = append(errs, fmt.Errorf("--s3-endpoint %q: has a query or fragment: give the server's URL alone (the bucket is --s3-bucket)", c.Endpoint))
		}
	}
	if strings.HasPrefix(c.Prefix, "/") {
		errs = append(errs, fmt.Errorf("--s3-prefix %q: starts with '/': give it without (a key never starts with one)", c.Prefix))
	}
	if c.Concurrency < 0 || c.Concurrency > 4096 {
		errs = append(errs, fmt.Errorf("--s3-concurrency %d: must be between 1 and 4096 (0 for %d)", c.Concurrency, DefaultConcurrency))
	}
	if c.PartSize != 0 && (c.PartSize < MinPartSize || c.PartSize > 5<<30) {
		errs = append(errs, fmt.Errorf("--s3-part-size %d: must be between 5 MiB and 5 GiB, S3's limits", c.PartSize))
	}
	if c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("s3: max attempts %d: must be at least 1 (0 for %d)", c.MaxAttempts, DefaultMaxAttempts))
	}
	return errors.Join(errs...)
}

// validBucket checks S3's bucket naming rules, loosely.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// Backend is the S3 tier. It and its Objects are safe for concurrent use.
// Close must be called: it removes what the run created.
type Backend struct {
	cfg    Config
	ctx    context.Context // the run's: its object requests end with it
	c      *client
	runDir string // <prefix>/run-<id>/, the run's own prefix
	part   int64
	// claimed says that New created claimName under runDir (checkPrefix),
	// which Close removes with the run's objects.
	claimed bool

	mu     sync.Mutex
	objs   map[string]*slot // nil once closed
	closed atomic.Bool
	pools  [64]sync.Pool // *[]byte of part buffers, by size class
	parts  partBudget
	unwake func() bool // stops New's context.AfterFunc

	// The counters at the measured window's start (StartClock) and end
	// (Close); nil until then.
	wmu        sync.Mutex
	start, end *tally
}

// partBudget bounds the memory of the parts being assembled: a writer
// that needs a part buffer waits while the buffers out hold the budget
// and a part written whole is on its way up (whose buffer comes back
// when it is), so that the engine's writes run no further ahead of the
// uploads than the budget. It never waits with no part on its way up:
// the buffers out are then parts that wait for the engine's next blocks,
// which a writer that waited would hold back.
type partBudget struct {
	mu      sync.Mutex
	cond    sync.Cond
	max     int64 // bytes
	held    int64 // bytes of the buffers out
	peak    int64 // the most held
	pending int   // parts written whole, not yet up
	// waiting, when set, is called (with mu held) each time a take is
	// about to wait: tests see a writer blocked on the budget.
	waiting func()
}

// take reserves n bytes of buffer, waiting as above (or until ctx is
// done).
func (p *partBudget) take(ctx context.Context, n int64) {
	p.mu.Lock()
	for p.held+n > p.max && p.pending > 0 && ctx.Err() == nil {
		if p.waiting != nil {
			p.waiting()
		}
		p.cond.Wait()
	}
	p.held += n
	p.peak = max(p.peak, p.held)
	p.mu.Unlock()
}

// give returns n bytes taken, and the part on its way up that they held
// (up: 1) or none (0).
func (p *partBudget) give(n int64, up int) {
	p.mu.Lock()
	p.held -= n
	p.pending -= up
	p.cond.Broadcast()
	p.mu.Unlock()
}

// sending marks a part written whole, on its way up.
func (p *partBudget) sending() {
	p.mu.Lock()
	p.pending++
	p.mu.Unlock()
}

// slot is what the backend knows of one key: its current object, and
// whether the server may hold bytes under its name (from it or an object
// it replaced), which Remove and Close then delete.
type slot struct {
	cur      *entry
	onServer bool
}

var _ backend.Backend = (*Backend)(nil)

// New makes the tier: it loads the AWS configuration, and checks with two
// requests that the bucket exists, that the credentials are accepted and
// that the run's prefix is empty: no object and no unfinished multipart
// upload under it. ctx is the run's: it bounds the check,
// and every request of the Objects; once it is done they fail at once
// (the requests in flight are abandoned), and Close's clean-up goes on
// while the server answers (Config.CleanupGrace).
func New(ctx context.Context, cfg Config) (*Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, usage(err)
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	cfg.PartSize = cfg.PartSizeOrDefault()
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.CleanupGrace <= 0 {
		cfg.CleanupGrace = DefaultCleanupGrace
	}
	if cfg.RunID == "" {
		var r [4]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, fmt.Errorf("s3: run id: %w", err)
		}
		cfg.RunID = time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(r[:])
	}
	c, err := newClient(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, ctx: ctx, c: c, part: cfg.PartSize, objs: map[string]*slot{}}
	b.parts.cond.L = &b.parts.mu
	// The parts going up, and a quarter more being assembled.
	b.parts.max = int64(cfg.Concurrency+cfg.Concurrency/4+1) * cfg.PartSize
	// Writers waiting for the budget see the run's end. Stopped when the
	// backend is done with: the context, the run's, outlives it (a
	// search makes a backend a probe) and would keep it.
	b.unwake = context.AfterFunc(ctx, func() { b.parts.give(0, 0) })
	b.runDir = "run-" + cfg.RunID + "/"
	if p := cfg.Prefix; p != "" {
		b.runDir = strings.TrimSuffix(p, "/") + "/" + b.runDir
	}
	if err := b.checkPrefix(ctx); err != nil {
		c.close()
		b.unwake()
		return nil, err
	}
	return b, nil
}

// claimLooks and claimGap bound how long dropClaim looks for a claim
// whose request got no answer: a request given up (its timeout, an
// interrupt, a connection lost) may still be under way at the server, and
// make the claim after the first look.
const (
	claimLooks = 4
	claimGap   = time.Second
)

// dropClaim removes the claim of this run (it holds tok) whose request
// failed with err: it may have been made though its answer never came.
// One the server answered with an error is looked for once (a lost
// answer: the claim was made before it); one that got no answer, up to
// claimLooks times, claimGap apart. The clean-up goes on after ctx is done
// (an interrupted run removes what it made), within one deadline: timeout
// and the gaps.
func (c *client) dropClaim(ctx context.Context, claim string, tok []byte, err error, timeout time.Duration) {
	looks := claimLooks
	if answered(err) {
		looks = 1
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout+time.Duration(looks-1)*claimGap)
	defer cancel()
	for i := range looks {
		if i > 0 {
			select {
			case <-time.After(claimGap):
			case <-dctx.Done():
				return
			}
		}
		if c.holds(dctx, claim, tok) {
			// Not delete, which refuses every request once one got no
			// answer in time: the claim's may have been the one, and
			// the server has just answered the look.
			c.deleteNow(dctx, claim)
			return
		}
	}
}

// claimName is the object that claims a run's prefix for it: a leading
// '.' never begins an object's name (objname.FileName encodes it).
const claimName = ".kvreplay-run"

// checkPrefix checks that the run's prefix is its own: it holds no object
// and no unfinished multipart upload, either of which is another run's (of
// the same id, going on or crashed), which Close would remove or abort;
// then claims it, creating claimName there by a conditional PUT, which
// fails when another run of the same id, started at once, checked it
// empty too and claimed it first. A server that does not implement
// conditional writes leaves it unclaimed, with a warning (the package
// doc). Each request is bounded: a server that takes the connection and
// never answers fails it in Timeout, not after every attempt's.
func (b *Backend) checkPrefix(ctx context.Context) error {
	c, timeout := b.c, b.cfg.Timeout
	failed := func(err error) error {
		if ctx.Err() != nil {
			// The SDK's account of the cancelled request says no more.
			return fmt.Errorf("s3: %s: the check of the bucket was interrupted: %w", b.Where(), ctx.Err())
		}
		return c.checkError(err, timeout)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	keys, err := c.list(cctx, b.runDir, 1)
	cancel()
	if err != nil {
		return failed(err)
	}
	if len(keys) > 0 {
		return fmt.Errorf("s3: %s: the run's prefix holds objects already (%s): kvreplay works only under a prefix of its own; give another --s3-prefix or run id", b.Where(), keys[0])
	}
	cctx, cancel = context.WithTimeout(ctx, timeout)
	up, err := c.firstUpload(cctx, b.runDir)
	cancel()
	if err != nil {
		return failed(err)
	}
	if up != "" {
		return fmt.Errorf("s3: %s: the run's prefix holds an unfinished multipart upload already (of %s): kvreplay works only under a prefix of its own; give another --s3-prefix or run id", b.Where(), up)
	}
	cctx, cancel = context.WithTimeout(ctx, timeout)
	claim := b.runDir + claimName
	// A token of this run's own, so that a retry of the claim whose
	// answer was lost knows the object it finds for its own.
	var token [16]byte
	rand.Read(token[:])
	tok := []byte(hex.EncodeToString(token[:]))
	made, err := c.create(cctx, claim, tok)
	cancel()
	switch {
	case unsupported(err):
		if b.cfg.Warn != nil {
			b.cfg.Warn(fmt.Sprintf("s3: %s: the server does not implement conditional writes (If-None-Match): the run's prefix was found empty but is not claimed, so another run given the same run id at the same time would share it", b.Where()))
		}
	case err != nil:
		c.dropClaim(ctx, claim, tok, err, timeout)
		return failed(err)
	case !made:
		return fmt.Errorf("s3: %s: another run claimed the run's prefix (%s exists) while this one checked it: kvreplay works only under a prefix of its own; give another --s3-prefix or run id", b.Where(), claimName)
	default:
		b.claimed = true
	}
	return nil
}

// Where names the run's prefix and the server: "s3://bucket/p/run-x/ at
// http://127.0.0.1:7070". It carries no credentials.
func (b *Backend) Where() string {
	return "s3://" + b.cfg.Bucket + "/" + b.runDir + " at " + b.c.endpoint
}

// RunPrefix is the run's own prefix in the bucket, "<prefix>/run-<id>/".
func (b *Backend) RunPrefix() string { return b.runDir }

// aws is the AWS CLI's command for the backend's server: "aws", with
// --endpoint-url for an endpoint of the user's.
func (b *Backend) aws() string {
	if strings.Contains(b.c.endpoint, "://") {
		return "aws --endpoint-url " + b.c.endpoint
	}
	return "aws"
}

// RemoveCommand is the AWS CLI's command that removes the run's objects
// ("aws --endpoint-url URL s3 rm --recursive s3://bucket/p/run-x/"), for
// a user who kept them.
func (b *Backend) RemoveCommand() string {
	return b.aws() + " s3 rm --recursive s3://" + b.cfg.Bucket + "/" + b.runDir
}

// Caps reports Name "s3", no alignment and no bound; Open and Remove make
// requests, so they are not FastMeta.
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{Name: "s3", Align: 1}
}

// Describe fills the tier path of a result: the bucket, the run's prefix,
// the server, and the requests made so far (Stats), split between the
// measured window and the setup once StartClock was called; never
// credentials.
func (b *Backend) Describe(pi *schema.PathInfo) {
	pi.Backend = "s3"
	pi.Path = "s3://" + b.cfg.Bucket + "/" + b.runDir
	pi.FileSystem = "s3"
	pi.Device = b.c.endpoint
	if s := b.c.server.Load(); s != nil {
		pi.Model = *s
	}
	st := b.Stats()
	pi.S3 = &schema.S3Path{Endpoint: b.c.endpoint, Bucket: b.cfg.Bucket, Prefix: b.runDir, Concurrency: b.cfg.Concurrency, PartSize: b.part,
		S3Requests: st.Counts, GetTTFB: st.TTFB, GetTTFBRetried: st.TTFBRetried, Measured: st.Measured, Setup: st.Setup}
}

// objectKey is the S3 key of the run's object named key: the run's prefix
// and the key's file name (objname.FileName: no '/', no "." or "..", at
// most 200 bytes), so that servers that store objects as files
// (versitygw, MinIO) hold every key, and distinct keys stay distinct.
func (b *Backend) objectKey(key string) string { return b.runDir + objname.FileName(key) }

// Open returns the object named key. With create it starts a new object
// of size bytes, replacing any of that name (the server keeps the old
// bytes until the new object is written whole); without, an object of
// that name and size must have been written whole (ErrNotFound
// otherwise). Open makes no request.
func (b *Backend) Open(key string, size int64, create bool) (backend.Object, error) {
	if size < 0 {
		return nil, fmt.Errorf("s3: open %q: negative size %d", key, size)
	}
	if create {
		if err := b.checkParts("create", key, size); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.objs == nil {
		return nil, fmt.Errorf("s3: open %q: %w", key, backend.ErrClosed)
	}
	s := b.objs[key]
	if !create {
		if s == nil || s.cur == nil || !s.cur.stored() || s.cur.gone.Load() {
			return nil, fmt.Errorf("s3: open %q: %w", key, backend.ErrNotFound)
		}
		if s.cur.size != size {
			return nil, fmt.Errorf("s3: open %q of %d bytes: the object has %d", key, size, s.cur.size)
		}
		return &object{b: b, key: key, name: b.objectKey(key), e: s.cur}, nil
	}
	e := newEntry(size, b.part)
	return &object{b: b, key: key, name: b.objectKey(key), e: e, s: b.replaceLocked(key, e)}, nil
}

// checkParts fails an object of size bytes that an operation op (create,
// put) could not upload: more than MaxParts parts of PartSize.
func (b *Backend) checkParts(op, key string, size int64) error {
	if size > int64(MaxParts)*b.part {
		return fmt.Errorf("s3: %s %q of %d bytes: more than %d parts of %d bytes: raise --s3-part-size", op, key, size, MaxParts, b.part)
	}
	return nil
}

// replaceLocked makes e the current object of key, replacing any (whose
// Objects then fail with backend.ErrStale), and returns key's slot; b.mu
// is held.
func (b *Backend) replaceLocked(key string, e *entry) *slot {
	s := b.objs[key]
	if s == nil {
		s = &slot{}
		b.objs[key] = s
	}
	if s.cur != nil {
		s.cur.gone.Store(true)
	}
	s.cur = e
	return s
}

// Close removes the run's objects and unfinished uploads from the bucket
// (the uploads only, with Config.Keep) and releases the backend; its
// Objects then fail with ErrClosed. It deletes what the backend knows it
// wrote, then lists the run's prefix for anything left (a request that
// failed on the client after the server took it), so that the prefix is
// empty afterwards. Once the run's context is done it stops when the
// server answers nothing for Config.CleanupGrace. An error says what is
// left and where.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.objs == nil {
		b.mu.Unlock()
		return fmt.Errorf("s3: close: %w", backend.ErrClosed)
	}
	objs := b.objs
	b.objs = nil
	b.closed.Store(true)
	b.mu.Unlock()
	b.wmu.Lock()
	if b.start != nil && b.end == nil {
		// The replay is over: what follows is the clean-up.
		end := b.c.stats.tally()
		b.end = &end
	}
	b.wmu.Unlock()
	defer b.unwake()
	defer b.c.close()
	ctx, stop := b.cleanupContext(b.ctx)
	defer stop()
	// A server that stopped answering in the run may answer again: the
	// clean-up asks once before it takes it for down.
	b.c.probe(ctx, b.runDir)
	var errs []error
	var names []string
	for key, s := range objs {
		if s.cur != nil {
			s.cur.gone.Store(true)
			if id := s.cur.abandon(b); id != "" {
				if err := b.c.abort(ctx, b.objectKey(key), id); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if s.onServer {
			names = append(names, b.objectKey(key))
		}
	}
	claim := b.runDir + claimName
	if !b.cfg.Keep {
		if err := b.c.deleteMany(ctx, names); err != nil {
			errs = append(errs, err)
		}
		// Whatever the run's prefix still holds is the run's own, while
		// its claim is there: the claim goes last, below.
		left, err := b.c.list(ctx, b.runDir, 0)
		left = slices.DeleteFunc(left, func(k string) bool { return k == claim })
		if err == nil && len(left) > 0 {
			err = b.c.deleteMany(ctx, left)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.c.abortAll(ctx, b.runDir); err != nil {
		errs = append(errs, err)
	}
	if !b.cfg.Keep && b.claimed {
		// Last: once it is gone, another run of the run's id may claim
		// the prefix, whose objects and uploads the listings above would
		// have taken for this run's.
		if err := b.c.delete(ctx, claim); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		if down := b.c.down.Load(); down != nil {
			// Each request failed so: say it once.
			errs = []error{*down}
		} else if cause := context.Cause(ctx); cause != nil {
			// Each request after it failed so.
			errs = []error{cause}
		}
		what := "the run's objects and unfinished uploads"
		if b.cfg.Keep {
			what = "the run's unfinished uploads"
		}
		// aws s3 rm leaves unfinished uploads, whose parts a store keeps
		// (and bills) until they are aborted.
		err := fmt.Errorf("s3: close: %s may be left under %s (remove the objects with: %s; list the uploads with: %s s3api list-multipart-uploads --bucket %s --prefix %s, and abort each with s3api abort-multipart-upload): %w",
			what, b.Where(), b.RemoveCommand(), b.aws(), b.cfg.Bucket, b.runDir, errors.Join(errs...))
		if b.cfg.Warn != nil {
			b.cfg.Warn(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		return err
	}
	return nil
}

// errCleanupCut ends a clean-up after the run was interrupted: no request
// ended for grace, or it went on for the most graces.
type errCleanupCut struct {
	grace time.Duration
	idle  bool
}

func (e errCleanupCut) Error() string {
	if e.idle {
		return fmt.Sprintf("the run was interrupted, and the clean-up stopped when the server answered nothing for %s", e.grace)
	}
	return fmt.Sprintf("the run was interrupted, and the clean-up stopped %s after", e.grace*CleanupGraces)
}

// cleanupContext is the context of a clean-up's requests after an
// operation whose context is run (Close's, after the run; a failed Put's
// abort of its upload): not ended by run, so that an interrupted run
// still removes what it made, but once run is done (and the clean-up
// started), ended by a CleanupGrace in which no request ended, or
// CleanupGraces after. stop releases it.
func (b *Backend) cleanupContext(run context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(run))
	done := make(chan struct{})
	go func() {
		select {
		case <-run.Done():
		case <-done:
			return
		}
		grace := b.cfg.CleanupGrace
		t := time.NewTicker(grace)
		defer t.Stop()
		last := b.c.stats.ended()
		for n := 1; ; n++ {
			select {
			case <-t.C:
			case <-done:
				return
			}
			now := b.c.stats.ended()
			if now == last || n >= CleanupGraces {
				cancel(errCleanupCut{grace: grace, idle: now == last})
				return
			}
			last = now
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// StartClock marks the start of the replay's measured window, as its
// clock starts (after the untimed writes of the cold objects): Stats
// tells the requests made from then until Close from the others (New's
// check, the writes before, Close's clean-up). Calls after the first,
// and after Close, change nothing.
func (b *Backend) StartClock() {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	if b.start == nil && !b.closed.Load() {
		start := b.c.stats.tally()
		b.start = &start
	}
}

// Stats returns the requests made so far, by type, with their retries,
// throttling responses and times to first byte, and their split between
// the measured window and the rest once StartClock was called.
func (b *Backend) Stats() Stats {
	b.wmu.Lock()
	start, end := b.start, b.end
	b.wmu.Unlock()
	return b.c.stats.snapshot(start, end)
}

// getBuf returns a buffer of n bytes (at most PartSize) from the pool of
// its size class: the least power of two that holds it.
func (b *Backend) getBuf(n int64) []byte {
	c := bits.Len64(uint64(max(n, 1) - 1))
	if p, ok := b.pools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<c)
}

// getPart returns a buffer for n bytes of a part being assembled, within
// the part budget (partBudget.take).
func (b *Backend) getPart(n int64) []byte {
	b.parts.take(b.ctx, n)
	return b.getBuf(n)
}

// putPart gives a buffer from getPart back; up says that it held a part
// written whole (partBudget.sending).
func (b *Backend) putPart(p []byte, up bool) {
	n := int64(len(p))
	b.putBuf(p)
	u := 0
	if up {
		u = 1
	}
	b.parts.give(n, u)
}

// putBuf gives a buffer from getBuf back.
func (b *Backend) putBuf(p []byte) {
	c := bits.Len64(uint64(max(cap(p), 1) - 1))
	if c < len(b.pools) && cap(p) == 1<<c {
		p = p[:cap(p)]
		b.pools[c].Put(&p)
	}
}
