package s3

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// op is an S3 operation the backend makes.
type op int

const (
	opPut op = iota
	opGet
	opCreateMultipart
	opUploadPart
	opCompleteMultipart
	opAbortMultipart
	opDelete
	opList
	opListUploads
	opOther
	numOps
)

// opNames are the operations' names in the S3 API, as the SDK names them.
var opNames = [numOps]string{"PutObject", "GetObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
	"AbortMultipartUpload", "DeleteObject", "ListObjectsV2", "ListMultipartUploads", "other"}

func opIndex(name string) op {
	for i, n := range opNames {
		if n == name {
			return op(i)
		}
	}
	return opOther
}

// stats are a client's counters; safe for concurrent use.
type stats struct {
	requests       [numOps]atomic.Int64 // calls, whatever their attempts
	failed         [numOps]atomic.Int64 // calls that failed after their attempts
	attempts       [numOps]atomic.Int64 // HTTP requests sent
	throttled      [numOps]atomic.Int64 // 503 and 429 responses among them
	bytesPut       atomic.Int64
	bytesPutFailed atomic.Int64
	bytesGot       atomic.Int64
	ttfb           ttfb
}

// sent counts a PUT's or UploadPart's body: size bytes put when it
// succeeded (err nil), and the rest of the read bytes, those of its
// attempts that failed, as failed.
func (s *stats) sent(size, read int64, err error) {
	if err == nil {
		s.bytesPut.Add(size)
		read -= size
	}
	s.bytesPutFailed.Add(max(read, 0))
}

// ttfb is the histogram of GETs' times to first byte, made on first use,
// and how many of them took more than one attempt.
type ttfb struct {
	h       atomic.Pointer[hist.Concurrent]
	retried atomic.Int64
}

// record records the time to first byte d of a GET that took attempts.
func (t *ttfb) record(d time.Duration, attempts int) {
	h := t.h.Load()
	if h == nil {
		t.h.CompareAndSwap(nil, hist.NewConcurrent())
		h = t.h.Load()
	}
	h.Record(d)
	if attempts > 1 {
		t.retried.Add(1)
	}
}

// ended is how many calls ended, of every operation.
func (s *stats) ended() int64 {
	var n int64
	for i := range numOps {
		n += s.requests[i].Load()
	}
	return n
}

// done counts a call of o that ended with err. A call abandoned (its
// context canceled: the run stopped, or a sibling part failed its object)
// is not counted as failed: the server did not fail it.
func (s *stats) done(o op, err error) {
	s.requests[o].Add(1)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.failed[o].Add(1)
	}
}

// doneExpecting counts a call of o that ended with err, which is no
// failure where expected: an answer the caller asked for and acts on (a
// check that finds no object, a conditional PUT refused, an API the
// service does not have), not a request the server failed.
func (s *stats) doneExpecting(o op, err error, expected bool) {
	if expected {
		err = nil
	}
	s.done(o, err)
}

// Stats are the requests of a Backend: by S3 operation, how many calls
// were made, how many failed after their retries (not those abandoned,
// nor those whose answer the backend asked for and acts on: a check that
// finds no object, a conditional PUT refused as the object exists, an API
// the service does not have, a DELETE or abort of what is gone), the HTTP
// requests they took (retries are those beyond one per call) and the
// throttling responses among them (503 SlowDown or Service Unavailable,
// 429); the bytes put (the bodies of the PUTs and UploadParts that
// succeeded), put in vain (the bodies of their attempts that failed, as
// far as they were sent) and got (every GET attempt's body as far as it
// came, those of attempts cut short and tried again included: they
// crossed the wire); and the GETs' time to first byte, one figure for the
// whole run: the setup makes no GET, so it is the measured window's. A
// GET's time to first byte runs from the call (its request slot taken)
// to the first byte of the response that brought its bytes: a GET tried
// again (a 503, a connection reset, a body cut short) has its earlier
// attempts and the backoff between them in it, as the operation's latency
// has them (the caller waited for them); TTFBRetried is how many of the
// GETs in TTFB took more than one attempt.
//
// Counts are the whole account, from New to Close. Once StartClock was
// called, Measured is their share from then until Close (or now, before
// it), and Setup the rest: New's check, the writes before the clock and
// Close's clean-up; the two add up to Counts. Both are nil before.
type Stats struct {
	Counts
	TTFB        schema.Latency
	TTFBRetried int64
	Measured    *Counts
	Setup       *Counts
}

// Counts are requests by S3 operation, with their failures, retries,
// throttling responses and bytes (Stats's account, or a share of it), as
// a result document holds them.
type Counts = schema.S3Requests

// tally is a moment's copy of a client's counters: the difference of two
// tells what was asked between them.
type tally struct {
	requests, failed, attempts, throttled [numOps]int64
	bytesPut, bytesPutFailed, bytesGot    int64
}

// tally copies the counters now.
func (s *stats) tally() tally {
	var t tally
	for i := range numOps {
		t.requests[i], t.failed[i] = s.requests[i].Load(), s.failed[i].Load()
		t.attempts[i], t.throttled[i] = s.attempts[i].Load(), s.throttled[i].Load()
	}
	t.bytesPut, t.bytesPutFailed, t.bytesGot = s.bytesPut.Load(), s.bytesPutFailed.Load(), s.bytesGot.Load()
	return t
}

// minus is what t counts beyond u.
func (t tally) minus(u tally) tally {
	for i := range numOps {
		t.requests[i] -= u.requests[i]
		t.failed[i] -= u.failed[i]
		t.attempts[i] -= u.attempts[i]
		t.throttled[i] -= u.throttled[i]
	}
	t.bytesPut -= u.bytesPut
	t.bytesPutFailed -= u.bytesPutFailed
	t.bytesGot -= u.bytesGot
	return t
}

// counts is t as Counts.
func (t tally) counts() Counts {
	c := Counts{Requests: map[string]int64{}, Failed: map[string]int64{}, BytesPut: t.bytesPut, BytesPutFailed: t.bytesPutFailed, BytesGot: t.bytesGot}
	for i := range numOps {
		r, a := t.requests[i], t.attempts[i]
		if r > 0 {
			c.Requests[opNames[i]] = r
		}
		if f := t.failed[i]; f > 0 {
			c.Failed[opNames[i]] = f
		}
		if a > r {
			c.Retries += a - r
		}
		c.Throttled += t.throttled[i]
	}
	return c
}

// snapshot is the account now, split at the marks of the measured window
// when its start was marked: start, and end (nil while it goes on).
func (s *stats) snapshot(start, end *tally) Stats {
	all := s.tally()
	out := Stats{Counts: all.counts()}
	if start != nil {
		stop := all
		if end != nil {
			stop = *end
		}
		in := stop.minus(*start)
		m, rest := in.counts(), all.minus(in).counts()
		out.Measured, out.Setup = &m, &rest
	}
	if h := s.ttfb.h.Load(); h != nil {
		out.TTFB = h.Latency()
	}
	out.TTFBRetried = s.ttfb.retried.Load()
	return out
}
