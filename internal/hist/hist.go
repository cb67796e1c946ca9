// Package hist owns kvbench's latency histograms: HdrHistograms of
// microseconds from 1 µs to 1 hour at 3 significant digits
// (github.com/HdrHistogram/hdrhistogram-go), their rendering into a
// schema.Latency (percentiles plus the whole histogram in the HdrHistogram
// V2 compressed encoding, base64), the decoding of that encoding, and exact
// merges of histograms and of Latency values, which kvreport's merges of
// trials and ranks rest on.
//
// Every histogram of this package has the same geometry, so merges never
// approximate: a merged histogram is the one that recording every value of
// its sources into one histogram would have given. A decoded histogram of
// another geometry is refused (ErrGeometry) rather than re-bucketed.
package hist

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kvbench/kvbench/schema"
)

// The geometry of every Histogram: values are microseconds.
const (
	// LowestUS is the smallest value recorded; shorter durations are
	// recorded as LowestUS.
	LowestUS = 1
	// HighestUS is the largest value recorded (one hour); longer durations
	// are recorded as HighestUS.
	HighestUS = int64(time.Hour / time.Microsecond)
	// SigFigs is the number of significant decimal digits kept: a recorded
	// value is reported within 0.1 % of what was recorded.
	SigFigs = 3
)

// The ways a Latency can fail to decode or merge. Errors of this package
// wrap one of them; test with errors.Is.
var (
	// ErrNoHistogram: a Latency counts values but carries no histogram, so
	// it cannot be merged exactly.
	ErrNoHistogram = errors.New("no encoded histogram")
	// ErrCorrupt: the histogram is not valid base64, not the HdrHistogram
	// V2 compressed encoding, or its zlib stream or payload is damaged.
	ErrCorrupt = errors.New("corrupt histogram")
	// ErrGeometry: the histogram is valid but was not recorded with this
	// package's range and precision (1 µs to 1 h, 3 digits).
	ErrGeometry = errors.New("histogram of another geometry")
	// ErrCountMismatch: the Latency's count differs from its histogram's.
	ErrCountMismatch = errors.New("count differs from the histogram's")
	// ErrOverflow: a merge would count more than math.MaxInt64 values.
	ErrOverflow = errors.New("count overflows")
)

// percentiles are the ones a Latency reports, in its field order.
var percentiles = [...]float64{50, 90, 95, 99, 99.9, 99.99}

// Histogram is a latency histogram in microseconds. The zero value is not
// usable; call New. A Histogram is not safe for concurrent use: one
// goroutine records into it, or callers serialise every call. Use
// Concurrent where many goroutines record.
type Histogram struct {
	h *hdrhistogram.Histogram
	// clampedLow and clampedHigh count the values recorded at LowestUS or
	// HighestUS because they were out of range.
	clampedLow, clampedHigh int64
}

// New returns an empty Histogram. It holds about 190 KB of counters.
func New() *Histogram {
	return &Histogram{h: hdrhistogram.New(LowestUS, HighestUS, SigFigs)}
}

// Record adds one duration, truncated to whole microseconds. A duration
// below 1 µs (including zero and negative ones) is recorded as 1 µs and one
// above an hour as an hour; Clamped counts both.
func (h *Histogram) Record(d time.Duration) {
	us := int64(d / time.Microsecond)
	switch {
	case us < LowestUS:
		us = LowestUS
		h.clampedLow++
	case us > HighestUS:
		us = HighestUS
		h.clampedHigh++
	}
	// Cannot fail: us is in range and one more value cannot overflow the
	// total before 2^63 records.
	_ = h.h.RecordValue(us)
}

// Count returns the number of values recorded.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Clamped returns how many recorded durations were below 1 µs (low) or
// above an hour (high) and were recorded as those bounds. The counts are
// not part of the encoding: a Histogram decoded by FromLatency reports
// zero, and Merge adds them.
func (h *Histogram) Clamped() (low, high int64) { return h.clampedLow, h.clampedHigh }

// Reset empties h.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.clampedLow, h.clampedHigh = 0, 0
}

// ValueAtPercentile returns the value in microseconds at or below which p
// percent (0 to 100) of the recorded values lie, as HdrHistogram reports it
// (the highest value equivalent to the bucket's); 0 for an empty Histogram.
func (h *Histogram) ValueAtPercentile(p float64) int64 {
	return h.h.ValueAtPercentile(nearestRank(p, h.h.TotalCount()))
}

// nearestRank is the percentile to ask hdrhistogram-go for p percent of n
// values: the one whose rank there is p's nearest rank, ceil(p/100 n), the
// rank HdrHistogram's Java reference takes, at or below which at least p
// percent of the values lie. hdrhistogram-go rounds p/100 n to the nearest
// rank instead: of 11 values its p95 was the 10th, below which only 90.9 %
// lie, and a P95 criterion passed with one operation in 11 past its limit.
// p 0 (the minimum) and an empty histogram are left as they are.
func nearestRank(p float64, n int64) float64 {
	if p <= 0 || n <= 0 {
		return p
	}
	x := min(p, 100) / 100 * float64(n)
	// Less a few ulps, so that a product that is an integer but for
	// rounding (0.999 of 1000) does not go up one rank.
	k := max(1, math.Ceil(x-x*1e-12))
	// hdrhistogram-go's rank of q is int(q/100 n + 0.5): k of this.
	return 100 * (k - 0.25) / float64(n)
}

// Latency renders h: count, min, mean, the percentiles and max in
// microseconds, and the histogram itself encoded (HdrHistogram V2
// compressed, base64). An empty h gives the zero Latency, with no
// histogram.
func (h *Histogram) Latency() schema.Latency {
	n := h.h.TotalCount()
	if n == 0 {
		return schema.Latency{}
	}
	var ranks [len(percentiles)]float64
	for i, p := range percentiles {
		ranks[i] = nearestRank(p, n)
	}
	ps := h.h.ValueAtPercentilesSlice(ranks[:])
	enc, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		// The encoder writes to memory buffers, which cannot fail, and
		// this version is the one it supports.
		panic("hist: encoding a histogram: " + err.Error())
	}
	return schema.Latency{
		Count:     n,
		MinUS:     float64(h.h.Min()),
		MeanUS:    h.h.Mean(),
		P50US:     float64(ps[0]),
		P90US:     float64(ps[1]),
		P95US:     float64(ps[2]),
		P99US:     float64(ps[3]),
		P999US:    float64(ps[4]),
		P9999US:   float64(ps[5]),
		MaxUS:     float64(h.h.Max()),
		Histogram: string(enc),
	}
}

// FromLatency decodes the histogram l carries. A Latency with no values
// and no histogram gives an empty Histogram. It fails with ErrNoHistogram
// when l counts values but has no histogram, ErrCorrupt when the histogram
// does not decode, ErrGeometry when it was recorded with another range or
// precision, and ErrCountMismatch when l.Count differs from its count. The
// percentiles of l are not checked: Latency recomputes them.
func FromLatency(l schema.Latency) (*Histogram, error) {
	var d decoder
	counts := make([]int64, countsLen)
	if _, err := d.add(counts, 0, l); err != nil {
		return nil, fmt.Errorf("hist: %w", err)
	}
	return fromCounts(counts), nil
}

// fromCounts builds a Histogram of counts, indexed as this package's
// geometry indexes them.
func fromCounts(counts []int64) *Histogram {
	return &Histogram{h: hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  LowestUS,
		HighestTrackableValue: HighestUS,
		SignificantFigures:    SigFigs,
		Counts:                counts,
	})}
}

// The HdrHistogram V2 compressed encoding (HdrHistogram's
// AbstractHistogram.encodeIntoCompressedByteBuffer): a big-endian int32
// cookie, an int32 length and that many bytes of zlib holding a 40-byte
// header (cookie, payload length, normalizing index offset, significant
// digits: int32; lowest, highest: int64; integer to double ratio: float64)
// and the payload: the counts in index order as ZigZag LEB128 varints, a
// negative number -n standing for n zero counts. Bits 4 to 7 of a
// cookie (the 1 of 0x1c849314) hold a word size V2 does not use; readers
// mask them off. The normalizing index offset describes the writer's memory
// layout, not the payload (which is in logical index order), so readers
// ignore it, as the Java and Go readers do.
const (
	compressedCookie = 0x1c849304
	payloadCookie    = 0x1c849303
	cookieMask       = ^uint32(0xf0)
	headerSize       = 40
	// countsLen is the number of counters of this package's geometry: a
	// first bucket of 2048 counters of width 1, then 21 buckets of 1024
	// counters, each bucket's twice as wide as the last's, reaching 2^32
	// µs, past HighestUS.
	countsLen = 23 * 1024
	// maxPayload bounds the payload: at most one varint of at most 9
	// bytes per counter.
	maxPayload = countsLen * 9
)

// decoder decodes V2 compressed histograms of this package's geometry,
// reusing its buffers and zlib state across calls. hdrhistogram-go's Decode
// would allocate a histogram per call and merging it walks every counter;
// kvreport merges tens of thousands of them.
type decoder struct {
	raw     []byte
	payload []byte
	src     bytes.Reader
	z       io.ReadCloser
}

// add decodes l's histogram and adds its counts to counts, whose values
// already total total; it returns the new total. On error counts may have
// been changed.
func (d *decoder) add(counts []int64, total int64, l schema.Latency) (int64, error) {
	if l.Histogram == "" {
		if l.Count != 0 {
			return 0, fmt.Errorf("latency of %d values: %w", l.Count, ErrNoHistogram)
		}
		return total, nil
	}
	var err error
	d.raw, err = base64.StdEncoding.AppendDecode(d.raw[:0], []byte(l.Histogram))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	raw := d.raw
	if len(raw) < 8 {
		return 0, fmt.Errorf("%w: %d bytes, want at least 8", ErrCorrupt, len(raw))
	}
	if c := binary.BigEndian.Uint32(raw) & cookieMask; c != compressedCookie {
		return 0, fmt.Errorf("%w: cookie %#x, want the V2 compressed encoding %#x", ErrCorrupt, c, compressedCookie)
	}
	if n := binary.BigEndian.Uint32(raw[4:]); uint64(n) > uint64(len(raw)-8) {
		return 0, fmt.Errorf("%w: compressed length %d, only %d bytes follow", ErrCorrupt, n, len(raw)-8)
	} else {
		raw = raw[8 : 8+n]
	}
	d.src.Reset(raw)
	if d.z == nil {
		d.z, err = zlib.NewReader(&d.src)
	} else {
		err = d.z.(zlib.Resetter).Reset(&d.src, nil)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	var hdr [headerSize]byte
	if _, err := io.ReadFull(d.z, hdr[:]); err != nil {
		return 0, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	if c := binary.BigEndian.Uint32(hdr[0:]) & cookieMask; c != payloadCookie {
		return 0, fmt.Errorf("%w: payload cookie %#x, want %#x", ErrCorrupt, c, payloadCookie)
	}
	digits := int32(binary.BigEndian.Uint32(hdr[12:]))
	lowest := int64(binary.BigEndian.Uint64(hdr[16:]))
	highest := int64(binary.BigEndian.Uint64(hdr[24:]))
	ratio := math.Float64frombits(binary.BigEndian.Uint64(hdr[32:]))
	if digits != SigFigs || lowest != LowestUS || highest != HighestUS {
		return 0, fmt.Errorf("%w: %d to %d at %d digits, want %d to %d at %d", ErrGeometry, lowest, highest, digits, LowestUS, HighestUS, SigFigs)
	}
	if ratio != 1 {
		return 0, fmt.Errorf("%w: integer to double ratio %g, want 1", ErrGeometry, ratio)
	}
	n := binary.BigEndian.Uint32(hdr[4:])
	if n > maxPayload {
		return 0, fmt.Errorf("%w: payload of %d bytes, at most %d possible", ErrCorrupt, n, maxPayload)
	}
	// Read one byte more than the payload: only a stream that ends there,
	// with io.EOF, is whole; zlib checks the Adler-32 before returning it.
	// (io.ReadFull will not do: it reports a stream cut short, which flate
	// signals with io.ErrUnexpectedEOF, like a short read.)
	d.payload = slices.Grow(d.payload[:0], int(n)+1)[:n+1]
	got, err := 0, error(nil)
	for err == nil && got < len(d.payload) {
		var k int
		k, err = d.z.Read(d.payload[got:])
		got += k
	}
	switch {
	case got > int(n):
		return 0, fmt.Errorf("%w: payload longer than its %d bytes", ErrCorrupt, n)
	case err != io.EOF:
		return 0, fmt.Errorf("%w: payload: %w", ErrCorrupt, err)
	case got != int(n):
		return 0, fmt.Errorf("%w: payload of %d bytes, want %d", ErrCorrupt, got, n)
	}
	var sum int64
	p := d.payload[:n]
	for i := 0; len(p) > 0; {
		u, k := varint9(p)
		if k == 0 {
			return 0, fmt.Errorf("%w: truncated varint at counter %d", ErrCorrupt, i)
		}
		p = p[k:]
		v := int64(u>>1) ^ -int64(u&1) // ZigZag
		if v < 0 {
			if v == math.MinInt64 || -v > int64(countsLen-i) {
				return 0, fmt.Errorf("%w: run of %d zeros at counter %d overflows the %d counters", ErrCorrupt, uint64(-v), i, countsLen)
			}
			i += int(-v)
			continue
		}
		if i >= countsLen {
			return 0, fmt.Errorf("%w: counter %d beyond the %d counters", ErrCorrupt, i, countsLen)
		}
		if v > math.MaxInt64-sum {
			return 0, fmt.Errorf("%w: counts sum past 2^63", ErrCorrupt)
		}
		sum += v
		counts[i] += v
		i++
	}
	if sum != l.Count {
		return 0, fmt.Errorf("count %d, histogram's %d: %w", l.Count, sum, ErrCountMismatch)
	}
	if total > math.MaxInt64-sum {
		return 0, fmt.Errorf("%d + %d values: %w", total, sum, ErrOverflow)
	}
	return total + sum, nil
}

// Merge adds the values of src to dst, exactly. It fails with ErrOverflow,
// leaving dst unchanged, if dst would count more than math.MaxInt64
// values. src is not modified; dst and src must not be the same Histogram.
func Merge(dst, src *Histogram) error {
	if err := merge(dst, src); err != nil {
		return fmt.Errorf("hist: %w", err)
	}
	return nil
}

// merge is Merge with errors not yet prefixed.
func merge(dst, src *Histogram) error {
	if n, m := dst.h.TotalCount(), src.h.TotalCount(); n > math.MaxInt64-m {
		return fmt.Errorf("%d + %d values: %w", n, m, ErrOverflow)
	}
	if dropped := dst.h.Merge(src.h); dropped != 0 {
		// Cannot happen: both have the same geometry and the total fits.
		return fmt.Errorf("%d values dropped: %w", dropped, ErrOverflow)
	}
	dst.clampedLow += src.clampedLow
	dst.clampedHigh += src.clampedHigh
	return nil
}

// MergeLatencies decodes the histograms of ls and renders their exact
// merge: the Latency of one histogram holding every value of every l. Zero
// Latencies (no values, no histogram) are skipped; none at all give the
// zero Latency. An error names the index of the Latency that failed and
// wraps one of this package's sentinel errors. It is the fast way to merge
// many: the counts are added as they are decoded.
func MergeLatencies(ls ...schema.Latency) (schema.Latency, error) {
	var d decoder
	counts := make([]int64, countsLen)
	var total int64
	for i, l := range ls {
		var err error
		if total, err = d.add(counts, total, l); err != nil {
			return schema.Latency{}, fmt.Errorf("hist: latency %d: %w", i, err)
		}
	}
	return fromCounts(counts).Latency(), nil
}

// Concurrent is a Histogram that many goroutines may record into at once,
// for the replay's workers. Recording takes a mutex held for a few
// nanoseconds; the zero value is not usable, call NewConcurrent.
type Concurrent struct {
	mu sync.Mutex
	h  *Histogram
}

// NewConcurrent returns an empty Concurrent.
func NewConcurrent() *Concurrent {
	return &Concurrent{h: New()}
}

// Record adds one duration as Histogram.Record does. It is safe for
// concurrent use.
func (c *Concurrent) Record(d time.Duration) {
	c.mu.Lock()
	c.h.Record(d)
	c.mu.Unlock()
}

// Snapshot returns a copy of the values recorded so far, which the caller
// owns. It is safe for concurrent use with Record.
func (c *Concurrent) Snapshot() *Histogram {
	out := New()
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = merge(out, c.h) // an empty destination cannot overflow
	return out
}

// Latency renders the values recorded so far, as Histogram.Latency does.
// It is safe for concurrent use with Record.
func (c *Concurrent) Latency() schema.Latency {
	return c.Snapshot().Latency()
}

// varint9 reads HdrHistogram's LEB128-64b9B varint (its ZigZagEncoding):
// LEB128, except that a ninth byte, if any, holds 8 bits, so no value takes
// more than 9 bytes. It returns the value and its length, 0 if p ends
// inside it.
func varint9(p []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i == len(p) {
			return 0, 0
		}
		v |= uint64(p[i]&0x7f) << (7 * i)
		if p[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(p) < 9 {
		return 0, 0
	}
	return v | uint64(p[8])<<56, 9
}
