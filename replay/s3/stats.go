package s3

import (
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
	requests  [numOps]atomic.Int64 // calls, whatever their attempts
	failed    [numOps]atomic.Int64 // calls that failed after their attempts
	attempts  [numOps]atomic.Int64 // HTTP requests sent
	throttled [numOps]atomic.Int64 // 503 and 429 responses among them
	bytesPut  atomic.Int64
	bytesGot  atomic.Int64
	ttfb      ttfb
}

// ttfb is the histogram of GETs' times to first byte, made on first use.
type ttfb struct {
	h atomic.Pointer[hist.Concurrent]
}

func (t *ttfb) record(d time.Duration) {
	h := t.h.Load()
	if h == nil {
		t.h.CompareAndSwap(nil, hist.NewConcurrent())
		h = t.h.Load()
	}
	h.Record(d)
}

// ended is how many calls ended, of every operation.
func (s *stats) ended() int64 {
	var n int64
	for i := range numOps {
		n += s.requests[i].Load()
	}
	return n
}

func (s *stats) done(o op, err error) {
	s.requests[o].Add(1)
	if err != nil {
		s.failed[o].Add(1)
	}
}

// Stats are the requests of a Backend: by S3 operation, how many calls
// were made, how many failed after their retries, the HTTP requests
// they took (retries are those beyond one per call) and the throttling
// responses among them (503 SlowDown or Service Unavailable, 429); the
// bytes put (the bodies of the PUTs and UploadParts that succeeded) and
// got (every GET attempt's body as far as it came, those of attempts cut
// short and tried again included: they crossed the wire); and the GETs'
// time to first byte (from the call to the response's first byte).
type Stats struct {
	Requests  map[string]int64
	Failed    map[string]int64
	Retries   int64
	Throttled int64
	BytesPut  int64
	BytesGot  int64
	TTFB      schema.Latency
}

// Total is the number of calls made, of every operation.
func (s Stats) Total() int64 {
	var n int64
	for _, v := range s.Requests {
		n += v
	}
	return n
}

func (s *stats) snapshot() Stats {
	out := Stats{Requests: map[string]int64{}, Failed: map[string]int64{}, BytesPut: s.bytesPut.Load(), BytesGot: s.bytesGot.Load()}
	for i := range numOps {
		r, a := s.requests[i].Load(), s.attempts[i].Load()
		if r > 0 {
			out.Requests[opNames[i]] = r
		}
		if f := s.failed[i].Load(); f > 0 {
			out.Failed[opNames[i]] = f
		}
		if a > r {
			out.Retries += a - r
		}
		out.Throttled += s.throttled[i].Load()
	}
	if h := s.ttfb.h.Load(); h != nil {
		out.TTFB = h.Latency()
	}
	return out
}
