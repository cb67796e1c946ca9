package results

import (
	"fmt"
	"math"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/schema"
)

// Requests aggregates per-request storage latency (a request's rows, from
// its first row's scheduled time to its last row's completion) overall and
// by QoS class, with the raw count of each class's requests within its
// target, so that merged compliance is exact. The zero value is empty and
// ready to use; histograms are allocated as classes get requests.
type Requests struct {
	count int64
	all   Latency
	// qos is indexed by schema.QoS; QoSNone's entry stays empty (its
	// requests count overall only).
	qos [schema.NumQoS]qosAgg
	// slo counts requests against an SLO (SetSLO); nil without one.
	slo *sloAgg
}

type qosAgg struct {
	count, within int64
	lat           Latency
}

// NewRequests returns an empty Requests.
func NewRequests() *Requests { return &Requests{} }

// Add records one finished request of class q that took d. A request is
// within its class's target when d <= QoSTarget(q). Requests of QoSNone
// (or of a value outside the enumeration) count overall only.
func (r *Requests) Add(q schema.QoS, d time.Duration) {
	r.count++
	r.all.Add(d)
	if r.slo != nil {
		r.slo.add(q, d)
	}
	target := QoSTarget(q)
	if target <= 0 {
		return
	}
	a := &r.qos[q]
	a.count++
	a.lat.Add(d)
	if d <= target {
		a.within++
	}
}

// AddLate adds a request the run cut short (the --duration window closed
// on it with rows left, or before it started though it was due) whose
// rows so far took d (for one not started, the time from when it was due
// to the window's end), where that already passes a target: it missed
// the target whatever its rows left would have taken, and counts as a
// request that missed it, with d (a lower bound) as its latency. Each
// side judges its own target: Requests counts it (overall and in its
// class) when d passes its class's target, and the SLO (SetSLO) counts it
// as a miss when d passes the SLO's target for its class (or for requests
// without one), whether or not it passed the class's. A side whose target
// d does not pass, or that has none, leaves it out, as its outcome there
// is not known. AddLate reports whether Requests counted it (kvreplay's
// ReplayStats.RequestsCutLate); a request only the SLO counts is in the
// SLO's Count and in no count of Requests.
func (r *Requests) AddLate(q schema.QoS, d time.Duration) bool {
	if r.slo != nil {
		if t := r.slo.slo.Target(q); t > 0 && d > t {
			r.slo.add(q, d)
		}
	}
	target := QoSTarget(q)
	if target <= 0 || d <= target {
		return false
	}
	r.count++
	r.all.Add(d)
	a := &r.qos[q]
	a.count++
	a.lat.Add(d)
	return true
}

// Count returns the number of requests added and merged.
func (r *Requests) Count() int64 { return r.count }

// Merge adds a document's request statistics, exactly: counts and
// within-target counts add and histograms are decoded and added. A class's
// within-target count is its WithinTarget; documents written before that
// field existed carry only Compliance (within/count as a float64), and
// then it is recovered as round(Compliance*Count), which is exact for
// counts below 2^51. Such a document is recognised by WithinTarget 0 with
// Compliance above 0: a document that has the field and no request within
// target has Compliance 0, and with Compliance 0 both readings give 0.
//
// It fails, leaving r unchanged, on a damaged histogram, on an unknown or
// repeated class, on a class measured against another target
// (ErrTargetMismatch), on figures that contradict each other
// (ErrInconsistent: a count other than its histogram's, more requests
// within target than requests, a Compliance other than within/count), or
// on overflow.
func (r *Requests) Merge(s schema.RequestStats) error { return mergeOne(r.mergeAll, s) }

// MergeAll is Merge of every document's statistics of ss at once, and
// much faster than Merge in a loop (see Latency.MergeAll). It fails,
// leaving r unchanged, as Merge does; an error about one of ss is an
// *IndexError naming it.
func (r *Requests) MergeAll(ss []schema.RequestStats) error { return mergeMany(r.mergeAll, ss) }

func (r *Requests) mergeAll(ss []schema.RequestStats) (int, error) {
	count := r.count
	all := make([]schema.Latency, len(ss))
	// Per class: counts, the documents' latencies and which document each
	// came from.
	var counts, within [schema.NumQoS]int64
	var lats [schema.NumQoS][]schema.Latency
	var from [schema.NumQoS][]int
	for q := range counts {
		counts[q], within[q] = r.qos[q].count, r.qos[q].within
	}
	var sloCount, sloWithin [schema.NumQoS]int64
	slo := r.slo
	if slo == nil && r.count == 0 && len(ss) > 0 && ss[0].SLO != nil {
		// Empty, as kvreport's merge starts: the first document's targets.
		slo = &sloAgg{slo: sloOf(ss[0].SLO)}
	}
	for i, s := range ss {
		c, w, serr := mergeSLO(slo, s.SLO)
		if serr != nil {
			return i, fmt.Errorf("requests: %w", serr)
		}
		for q := range c {
			sloCount[q] += c[q]
			sloWithin[q] += w[q]
		}
		if s.Count != s.Latency.Count {
			return i, fmt.Errorf("requests: %w: %d requests, latency of %d", ErrInconsistent, s.Count, s.Latency.Count)
		}
		var err error
		if count, err = addCount(count, s.Count); err != nil {
			return i, fmt.Errorf("requests: %w", err)
		}
		all[i] = s.Latency
		var seen [schema.NumQoS]bool
		for _, c := range s.ByQoS {
			q, err := schema.ParseQoS(c.QoS)
			if err != nil {
				return i, fmt.Errorf("requests: %w", err)
			}
			target := QoSTarget(q)
			if target <= 0 {
				return i, fmt.Errorf("requests: qos %q: %w: a class without a target", c.QoS, ErrInconsistent)
			}
			if seen[q] {
				return i, fmt.Errorf("requests: qos %s: %w: given twice", c.QoS, ErrInconsistent)
			}
			seen[q] = true
			if want := float64(target.Milliseconds()); c.TargetP95MS != want {
				return i, fmt.Errorf("requests: qos %s: %w: target %g ms, this build's %g ms",
					c.QoS, ErrTargetMismatch, c.TargetP95MS, want)
			}
			if c.Count != c.Latency.Count {
				return i, fmt.Errorf("requests: qos %s: %w: %d requests, latency of %d", c.QoS, ErrInconsistent, c.Count, c.Latency.Count)
			}
			w, err := withinOf(c)
			if err != nil {
				return i, fmt.Errorf("requests: qos %s: %w", c.QoS, err)
			}
			if counts[q], err = addCount(counts[q], c.Count); err != nil {
				return i, fmt.Errorf("requests: qos %s: %w", c.QoS, err)
			}
			within[q] += w // w <= c.Count, so this fits too
			lats[q] = append(lats[q], c.Latency)
			from[q] = append(from[q], i)
		}
	}
	h, i, err := decodeAll(all)
	if err != nil {
		return i, fmt.Errorf("requests: latency: %w", err)
	}
	if err := r.all.fits(h); err != nil {
		return -1, fmt.Errorf("requests: %w", err)
	}
	var hs [schema.NumQoS]*hist.Histogram
	for q := range lats {
		if len(lats[q]) == 0 {
			continue
		}
		if hs[q], i, err = decodeAll(lats[q]); err != nil {
			if i >= 0 {
				i = from[q][i]
			}
			return i, fmt.Errorf("requests: qos %s: latency: %w", schema.QoS(q), err)
		}
		if err := r.qos[q].lat.fits(hs[q]); err != nil {
			return -1, fmt.Errorf("requests: qos %s: %w", schema.QoS(q), err)
		}
	}
	// Nothing below fails: every histogram has been decoded and every
	// total checked.
	if err := r.all.merge(h); err != nil {
		return -1, err
	}
	r.count = count
	r.slo = slo
	if r.slo != nil {
		for q := range sloCount {
			r.slo.count[q] += sloCount[q]
			r.slo.within[q] += sloWithin[q]
		}
	}
	for q := range hs {
		a := &r.qos[q]
		a.count, a.within = counts[q], within[q]
		if err := a.lat.merge(hs[q]); err != nil {
			return -1, err
		}
	}
	return -1, nil
}

// withinOf returns a document's count of a class's requests within
// target, from WithinTarget or, for documents without it, from Compliance
// (see Requests.Merge).
func withinOf(c schema.QoSStats) (int64, error) {
	if c.WithinTarget == 0 && c.Compliance > 0 {
		// An older document: Compliance is within/count, correctly rounded.
		if c.Compliance > 1 {
			return 0, fmt.Errorf("%w: compliance %g above 1", ErrInconsistent, c.Compliance)
		}
		return int64(math.Round(c.Compliance * float64(c.Count))), nil
	}
	if c.WithinTarget < 0 || c.WithinTarget > c.Count {
		return 0, fmt.Errorf("%w: %d of %d requests within target", ErrInconsistent, c.WithinTarget, c.Count)
	}
	if share, _ := Compliance(c.WithinTarget, c.Count); math.Abs(share-c.Compliance) > 1e-9 {
		return 0, fmt.Errorf("%w: compliance %g, but %d of %d requests within target", ErrInconsistent, c.Compliance, c.WithinTarget, c.Count)
	}
	return c.WithinTarget, nil
}

// Finalize renders the statistics: the overall count and latency, and
// each class with requests (interactive, responsive, batch in that order)
// with its target, requests within it, compliance and verdict. r stays
// usable.
func (r *Requests) Finalize() schema.RequestStats {
	s := schema.RequestStats{Count: r.count, Latency: r.all.Finalize()}
	for q := range schema.QoS(schema.NumQoS) {
		a := &r.qos[q]
		if a.count == 0 {
			continue
		}
		share, met := Compliance(a.within, a.count)
		s.ByQoS = append(s.ByQoS, schema.QoSStats{
			QoS: q.String(), Count: a.count, TargetP95MS: float64(QoSTarget(q).Milliseconds()),
			WithinTarget: a.within, Compliance: share, Met: met, Latency: a.lat.Finalize(),
		})
	}
	if r.slo != nil {
		s.SLO = r.slo.finalize()
	}
	return s
}
