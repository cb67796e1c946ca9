package results

import (
	"errors"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// The tests of this file close gaps that mutation testing found in the
// merge's refusals and BehindSchedule: each fails on a small change to
// the code under it (named in its comment) that the rest of the
// package's tests let through.

// reqDoc is the request statistics of 20 interactive requests of 10 ms
// (all within their target), counted against slo when it is set.
func reqDoc(t *testing.T, slo string) schema.RequestStats {
	t.Helper()
	r := NewRequests()
	if slo != "" {
		s, err := ParseSLO(slo)
		if err != nil {
			t.Fatal(err)
		}
		r.SetSLO(s)
	}
	for range 20 {
		r.Add(schema.QoSInteractive, 10*time.Millisecond)
	}
	return r.Finalize()
}

// TestMergeRefusesOtherSLOTargets: documents measured against another
// --slo-ms target for every request, or for one class, count another
// question: neither merges.
func TestMergeRefusesOtherSLOTargets(t *testing.T) {
	for _, c := range []struct{ name, a, b string }{
		{"the target of every request", "100,interactive=20,responsive=100,batch=100", "50,interactive=20,responsive=100,batch=100"},
		{"a class's target", "100,interactive=20", "100,interactive=30"},
	} {
		r := NewRequests()
		if err := r.MergeAll([]schema.RequestStats{reqDoc(t, c.a), reqDoc(t, c.b)}); !errors.Is(err, ErrTargetMismatch) {
			t.Errorf("%s: merged %q with %q: %v, want ErrTargetMismatch", c.name, c.a, c.b, err)
		}
	}
}

// TestMergeRefusesInconsistentRequests: a document whose figures
// contradict each other does not merge: a class's SLO count below its
// requests within target (the overall figures raised with it), a class's count other than its histogram's, a
// compliance other than within over count by more than rounding.
func TestMergeRefusesInconsistentRequests(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*schema.RequestStats)
	}{
		{"slo class within > count", func(s *schema.RequestStats) { s.SLO.ByQoS[0].Within++; s.SLO.Within++ }},
		{"class count other than its latency's", func(s *schema.RequestStats) { s.ByQoS[0].Count--; s.ByQoS[0].WithinTarget-- }},
		{"compliance off by 0.1 %", func(s *schema.RequestStats) { s.ByQoS[0].Compliance -= 0.001 }},
	} {
		s := reqDoc(t, "100")
		if len(s.ByQoS) != 1 || s.SLO == nil || len(s.SLO.ByQoS) == 0 {
			t.Fatalf("test setup: %+v", s)
		}
		c.edit(&s)
		if err := NewRequests().Merge(s); !errors.Is(err, ErrInconsistent) {
			t.Errorf("%s: %v, want ErrInconsistent", c.name, err)
		}
	}
}

// TestBehindScheduleOnlyWhenFailed: a schedule criterion that passed is
// not BEHIND SCHEDULE.
func TestBehindScheduleOnlyWhenFailed(t *testing.T) {
	h := Judge([]schema.Criterion{{Name: ScheduleCriterion + " < 1000ms", Target: 1000, Actual: 3, Unit: "ms", Passed: true}}, nil, "")
	if c, behind := BehindSchedule(h); behind {
		t.Errorf("BehindSchedule of a passed criterion: %+v", c)
	}
	h = Judge([]schema.Criterion{{Name: ScheduleCriterion + " < 1000ms", Target: 1000, Actual: 3000, Unit: "ms", Reason: "lag"}}, nil, "")
	if _, behind := BehindSchedule(h); !behind {
		t.Error("BehindSchedule of a failed criterion: false")
	}
}
