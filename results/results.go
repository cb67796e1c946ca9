// Package results owns the aggregation of replay measurements into a
// result document (schema.Result) and every metric and threshold the
// document carries: the per tier x operation x phase cells, the tier
// totals, per-request latency by QoS class with the reference's p95
// targets and compliance threshold, latency distributions such as lag, and
// the reference-named summary with its storage_health verdict.
//
// kvreplay and kvreport share it, as vegeta's Metrics serves both its
// attack and its report: kvreplay Adds completed operations and requests,
// kvreport Merges the documents of ranks, and both Finalize into the same
// schema types and Summarize the same way, so a merged document reads as
// if one process had measured the whole run.
//
// Each aggregate is bounded (counters and HdrHistograms of fixed size, from
// internal/hist) and mergeable: Add records one value, Merge adds a
// document's figures (MergeAll many documents' at once, much faster),
// Finalize renders. Merges are exact: counts and bytes
// add and histograms are decoded and added, never averaged. What cannot be
// exact says so in its doc comment (a merged cell's busy time). A document
// whose figures contradict each other is refused (ErrInconsistent), as is a
// QoS class measured against another target (ErrTargetMismatch), because
// no exact merge of it exists.
//
// None of the aggregates is safe for concurrent use: one goroutine adds to
// it, or callers serialise every call.
package results

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// ComplianceTarget is the share of a QoS class's requests that must be
// within its p95 target for the class's SLA to be met (reference section
// 3.6): a class with exactly 95 % of its requests within target is met.
const ComplianceTarget = 0.95

// GB is kvbench's one unit of amounts of data moved, and GB/s of rates:
// 10^9 bytes, decimal, under the reference's names too (its
// tier_*_bandwidth_gbps and *_gb). Sizes that a user gives (objects,
// blocks, memory) stay in binary units (KiB, MiB, GiB), as flags take them.
const GB = 1e9

// GiB is what kv-cache.py divides by for its "GB" (1024**3): kvreport
// converts a kv-cache.py document's figures with it.
const GiB = 1 << 30

// The ways a document can fail to merge besides a damaged histogram
// (which wraps internal/hist's sentinel errors). Test with errors.Is.
var (
	// ErrInconsistent: a document's figures contradict each other (a
	// cell's operations and its histogram's count, a QoS class's requests
	// within target and its count), so no exact merge of it exists.
	ErrInconsistent = errors.New("inconsistent figures")
	// ErrTargetMismatch: a QoS class was measured against another p95
	// target than QoSTarget's, so its requests within target cannot be
	// added to this one's.
	ErrTargetMismatch = errors.New("QoS target differs")
)

// qosTargets are the reference's p95 targets (reference section 3.6), by
// schema.QoS; QoSNone has none.
var qosTargets = [schema.NumQoS]time.Duration{
	schema.QoSInteractive: 50 * time.Millisecond,
	schema.QoSResponsive:  100 * time.Millisecond,
	schema.QoSBatch:       1000 * time.Millisecond,
}

// QoSTarget returns the p95 storage latency target of a QoS class
// (reference section 3.6): interactive 50 ms, responsive 100 ms, batch
// 1000 ms; 0 (no target) for QoSNone and values outside the enumeration.
func QoSTarget(q schema.QoS) time.Duration {
	if !q.Valid() {
		return 0
	}
	return qosTargets[q]
}

// Compliance returns the share of a class's count requests that were
// within target and whether that meets ComplianceTarget. No requests give
// 0 and false.
func Compliance(within, count int64) (share float64, met bool) {
	if count <= 0 {
		return 0, false
	}
	// within/count is correctly rounded and so is the constant: a share of
	// exactly 95 % compares equal, never just below.
	share = float64(within) / float64(count)
	return share, share >= ComplianceTarget
}

// Latency is a mergeable latency distribution (an HdrHistogram of
// microseconds, see internal/hist), such as a run's lag behind schedule.
// Its zero value is an empty distribution, ready to use; its histogram, of
// about 190 KB, is allocated on the first Add or Merge.
type Latency struct {
	h *hist.Histogram // nil until a value is added
}

// NewLatency returns an empty Latency.
func NewLatency() *Latency { return &Latency{} }

// Add records one duration, truncated to whole microseconds and clamped to
// 1 µs .. 1 h as hist.Histogram.Record does.
func (l *Latency) Add(d time.Duration) {
	if l.h == nil {
		l.h = hist.New()
	}
	l.h.Record(d)
}

// Count returns the number of durations added and merged.
func (l *Latency) Count() int64 {
	if l.h == nil {
		return 0
	}
	return l.h.Count()
}

// Merge adds the distribution s carries, exactly, by decoding its
// histogram. It fails, leaving l unchanged, when s counts values but has
// no histogram or a damaged one (internal/hist's sentinel errors) or when
// the total would overflow.
func (l *Latency) Merge(s schema.Latency) error { return mergeOne(l.mergeAll, s) }

// MergeAll is Merge of every distribution of ss at once, and much faster
// than Merge in a loop: the histograms are decoded into one set of
// counters. It fails, leaving l unchanged, as Merge does; an error about
// one of ss is an *IndexError naming it.
func (l *Latency) MergeAll(ss []schema.Latency) error { return mergeMany(l.mergeAll, ss) }

func (l *Latency) mergeAll(ss []schema.Latency) (int, error) {
	h, i, err := decodeAll(ss)
	if err != nil {
		return i, err
	}
	if err := l.fits(h); err != nil {
		return -1, err
	}
	return -1, l.merge(h)
}

// Finalize renders the distribution: percentiles and the encoded
// histogram; the zero schema.Latency when it is empty. l stays usable.
func (l *Latency) Finalize() schema.Latency {
	if l.h == nil {
		return schema.Latency{}
	}
	return l.h.Latency()
}

// decode decodes a document's latency; nil for one with no values and no
// histogram, which adds nothing.
func decode(s schema.Latency) (*hist.Histogram, error) {
	if s.Count == 0 && s.Histogram == "" {
		return nil, nil
	}
	return hist.FromLatency(s)
}

// decodeAll decodes the latencies of ss and adds them into one histogram,
// exactly; nil when they hold no values. On an error about one of ss, i is
// its index; else -1.
func decodeAll(ss []schema.Latency) (h *hist.Histogram, i int, err error) {
	switch len(ss) {
	case 0:
		return nil, -1, nil
	case 1:
		if h, err = decode(ss[0]); err != nil {
			return nil, 0, err
		}
		return h, -1, nil
	}
	// hist.MergeLatencies decodes every histogram into one set of counters
	// with one decoder, where a Histogram per document would allocate its
	// 190 KB of counters twice (kvreport merges 1,000 documents in well
	// under its 2 s bar this way, not the other). Its result, encoded, is
	// decoded once more.
	m, err := hist.MergeLatencies(ss...)
	if err != nil {
		for i, s := range ss {
			if _, err := decode(s); err != nil {
				return nil, i, err
			}
		}
		return nil, -1, err // the total overflows
	}
	if m.Count == 0 {
		return nil, -1, nil
	}
	h, err = hist.FromLatency(m)
	return h, -1, err
}

// IndexError is the error of a MergeAll about one of the values it was
// given: Index is its index, Err what is wrong with it.
type IndexError struct {
	Index int
	Err   error
}

// Error names the value and what is wrong with it.
func (e *IndexError) Error() string { return fmt.Sprintf("value %d: %v", e.Index, e.Err) }

// Unwrap returns e.Err.
func (e *IndexError) Unwrap() error { return e.Err }

// wrapIndex prefixes err with the package and, for i >= 0, wraps it in an
// IndexError.
func wrapIndex(i int, err error) error {
	if i >= 0 {
		err = &IndexError{Index: i, Err: err}
	}
	return fmt.Errorf("results: %w", err)
}

// mergeOne is a Merge of one document's figures through the MergeAll
// implementation merge: its error names no index, since there is one.
func mergeOne[T any](merge func([]T) (int, error), d T) error {
	if _, err := merge([]T{d}); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// mergeMany is a MergeAll through merge, which returns the index of the
// document an error is about (-1 for none): the error is then an
// *IndexError naming it.
func mergeMany[T any](merge func([]T) (int, error), ds []T) error {
	if i, err := merge(ds); err != nil {
		return wrapIndex(i, err)
	}
	return nil
}

// fits reports whether h (nil: nothing) can be merged into l without its
// count overflowing.
func (l *Latency) fits(h *hist.Histogram) error {
	if h == nil {
		return nil
	}
	if n, m := l.Count(), h.Count(); n > math.MaxInt64-m {
		return fmt.Errorf("%d + %d values: %w", n, m, hist.ErrOverflow)
	}
	return nil
}

// merge adds a decoded histogram (nil: nothing), which l may keep: the
// caller gives it up.
func (l *Latency) merge(h *hist.Histogram) error {
	switch {
	case h == nil:
		return nil
	case l.Count() == 0:
		// Nothing recorded yet (nor clamped): adopting h is the merge,
		// without walking its counters.
		l.h = h
		return nil
	}
	return hist.Merge(l.h, h)
}

// addCount adds b to a, failing on overflow.
func addCount(a, b int64) (int64, error) {
	if b > 0 && a > math.MaxInt64-b {
		return 0, fmt.Errorf("%d + %d: %w", a, b, hist.ErrOverflow)
	}
	return a + b, nil
}

// fromSeconds converts a document's seconds back to the duration they were
// written from (Duration.Seconds), rounding to the nanosecond so that a
// round trip is exact below 2^50 ns (13 days).
func fromSeconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
