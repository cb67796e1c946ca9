package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kvbench/kvbench/schema"
)

// SLO is a service level for requests (kvreplay --slo-ms): a latency
// target for every request, and per QoS class (indexed by schema.QoS),
// which, where set, replaces it for the class's requests.
type SLO struct {
	All   time.Duration
	ByQoS [schema.NumQoS]time.Duration
}

// Set reports whether any target is set.
func (s SLO) Set() bool {
	for _, d := range s.ByQoS {
		if d > 0 {
			return true
		}
	}
	return s.All > 0
}

// Target returns the target of a class's requests (0: none).
func (s SLO) Target(q schema.QoS) time.Duration {
	if int(q) < len(s.ByQoS) && s.ByQoS[q] > 0 {
		return s.ByQoS[q]
	}
	return s.All
}

// ParseSLO parses --slo-ms: milliseconds for every request and/or
// CLASS=MS pairs, comma-separated ("500", "interactive=50,batch=2000",
// "500,interactive=50").
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	err := ParseSLOItems(s, func(class string, named bool, d time.Duration) error {
		if !named {
			slo.All = d
			return nil
		}
		q, err := schema.ParseQoS(class)
		if err != nil || q == schema.QoSNone {
			return fmt.Errorf("class %q: want interactive, responsive or batch", class)
		}
		slo.ByQoS[q] = d
		return nil
	})
	if err != nil {
		return SLO{}, err
	}
	return slo, nil
}

// ParseSLOItems reads the items of --slo-ms s, "MS" or "CLASS=MS",
// comma-separated, and hands each target to set, named false for the
// target of every request; set names the classes it knows (kvtrace's come
// from its QoS profiles). It stops at the first item that is not one. Its
// errors, and set's, are one line that starts with the flag and its value.
// A target is rounded to the nanosecond, so that a decimal reads exactly;
// one that rounds to 0 is refused rather than taken for no target. Two
// targets of one class, or of every request, are refused: "1,5" is more
// likely 1.5 ms with a decimal comma than 5 ms.
func ParseSLOItems(s string, set func(class string, named bool, d time.Duration) error) error {
	given := map[string]string{} // the item that gave each class's target ("" for every request's, "=CLASS" for a class's)
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		name, ms, named := strings.Cut(part, "=")
		if !named {
			ms = name
		}
		v, err := strconv.ParseFloat(ms, 64)
		d := time.Duration(math.Round(v * float64(time.Millisecond)))
		if err != nil || !(v > 0) || v > 1e9 || d <= 0 {
			return fmt.Errorf("--slo-ms %s: %q: want milliseconds above 0 (at least 0.000001, at most 1e9), or CLASS=MS (e.g. 500,interactive=50)", flagValue(s), part)
		}
		key := ""
		if named {
			key = "=" + strings.ToLower(strings.TrimSpace(name))
		}
		if prev, twice := given[key]; twice {
			return fmt.Errorf("--slo-ms %s: %s", flagValue(s), twoTargets(key, prev, part))
		}
		given[key] = part
		if err := set(name, named, d); err != nil {
			return fmt.Errorf("--slo-ms %s: %w", flagValue(s), err)
		}
	}
	return nil
}

// twoTargets says why --slo-ms refuses a second target, item, of the
// class key ("=CLASS", or "" for every request) that item prev set
// first: one of them would be dropped, and two whole numbers may be a
// decimal written with a comma.
func twoTargets(key, prev, item string) string {
	what := "every request"
	if key != "" {
		what = "class " + key[1:]
	}
	msg := fmt.Sprintf("two targets for %s (%q and %q): give one", what, prev, item)
	whole := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	if key == "" && whole(prev) && whole(item) {
		msg += fmt.Sprintf(" (a decimal is written with a point: %s.%s)", prev, item)
	}
	return msg
}

// flagValue returns s for an error message: as typed, or quoted when it
// has spaces or characters that are not printable, so that the message
// stays on one line.
func flagValue(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' }) {
		return strconv.Quote(s)
	}
	return s
}

// sloAgg counts requests against an SLO, by class (QoSNone's are the
// requests without a class).
type sloAgg struct {
	slo           SLO
	count, within [schema.NumQoS]int64
}

func (a *sloAgg) add(q schema.QoS, d time.Duration) {
	if int(q) >= schema.NumQoS {
		q = schema.QoSNone
	}
	t := a.slo.Target(q)
	if t <= 0 {
		return
	}
	a.count[q]++
	if d <= t {
		a.within[q]++
	}
}

func sloMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sloShare(within, count int64) float64 {
	if count == 0 {
		return 0
	}
	return float64(within) / float64(count)
}

// finalize renders the attainment.
func (a *sloAgg) finalize() *schema.SLOStats {
	s := &schema.SLOStats{TargetMS: sloMS(a.slo.All)}
	for q := range schema.QoS(schema.NumQoS) {
		s.Count += a.count[q]
		s.Within += a.within[q]
		if q == schema.QoSNone || a.slo.Target(q) <= 0 {
			continue
		}
		s.ByQoS = append(s.ByQoS, schema.SLOClass{QoS: q.String(), TargetMS: sloMS(a.slo.Target(q)),
			Count: a.count[q], Within: a.within[q], Attainment: sloShare(a.within[q], a.count[q])})
	}
	s.Attainment = sloShare(s.Within, s.Count)
	return s
}

// SetSLO makes r count its requests against slo (see schema.SLOStats).
// Call it before any Add or Merge.
func (r *Requests) SetSLO(slo SLO) {
	if slo.Set() {
		r.slo = &sloAgg{slo: slo}
	}
}

// sloOf returns the targets of a document's SLO attainment, rounded to
// the nanosecond as ParseSLOItems rounds them: a truncation made 1.001 ms
// 1.000999 ms, another target than the document's.
func sloOf(s *schema.SLOStats) SLO {
	ns := func(ms float64) time.Duration { return time.Duration(math.Round(ms * float64(time.Millisecond))) }
	slo := SLO{All: ns(s.TargetMS)}
	for _, c := range s.ByQoS {
		if q, err := schema.ParseQoS(c.QoS); err == nil {
			slo.ByQoS[q] = ns(c.TargetMS)
		}
	}
	return slo
}

// mergeSLO checks a document's SLO attainment against agg's targets and
// returns the counts to add, by class; agg is not changed. A document of
// another target, or one with an SLO when agg has none or the other way
// round, is ErrTargetMismatch: its attainment is of another question.
func mergeSLO(agg *sloAgg, s *schema.SLOStats) (count, within [schema.NumQoS]int64, err error) {
	switch {
	case s == nil && agg == nil:
		return count, within, nil
	case s == nil || agg == nil:
		return count, within, fmt.Errorf("slo: %w: one document has --slo-ms, another not", ErrTargetMismatch)
	}
	if s.TargetMS != sloMS(agg.slo.All) {
		return count, within, fmt.Errorf("slo: %w: target %g ms, %g ms merged so far", ErrTargetMismatch, s.TargetMS, sloMS(agg.slo.All))
	}
	var classes int64
	for _, c := range s.ByQoS {
		q, err := schema.ParseQoS(c.QoS)
		if err != nil {
			return count, within, fmt.Errorf("slo: %w", err)
		}
		if c.TargetMS != sloMS(agg.slo.Target(q)) {
			return count, within, fmt.Errorf("slo: qos %s: %w: target %g ms, %g ms merged so far", c.QoS, ErrTargetMismatch, c.TargetMS, sloMS(agg.slo.Target(q)))
		}
		if c.Within < 0 || c.Within > c.Count {
			return count, within, fmt.Errorf("slo: qos %s: %w: %d of %d within", c.QoS, ErrInconsistent, c.Within, c.Count)
		}
		count[q], within[q] = c.Count, c.Within
		classes += c.Count
	}
	// The rest are the requests without a class.
	count[schema.QoSNone] = s.Count - classes
	within[schema.QoSNone] = s.Within
	for _, c := range s.ByQoS {
		within[schema.QoSNone] -= c.Within
	}
	if count[schema.QoSNone] < 0 || within[schema.QoSNone] < 0 || within[schema.QoSNone] > count[schema.QoSNone] {
		return count, within, fmt.Errorf("slo: %w: %d of %d within overall, more by class", ErrInconsistent, s.Within, s.Count)
	}
	return count, within, nil
}
