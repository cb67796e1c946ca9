package report

import (
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// qosValues adds r's per-QoS SLA metrics to v: each class's storage
// latency p95, the share of its requests within its target (percent) and
// whether its SLA was met (1 or 0). A run that did not measure the SLA
// (--speed max of an open loop, the reference's trace mode) has none; an
// incomplete run has no verdict (sla_met), as it has no
// storage_health_pass: its requests are those before it stopped.
func qosValues(r *schema.Result, v map[string]float64) {
	if r.Summary.NotMeasured[results.NotMeasuredSLA] != "" {
		return
	}
	for _, q := range r.Requests.ByQoS {
		if q.Count <= 0 {
			continue
		}
		v[qosMetric(q.QoS, "p95")] = q.Latency.P95US / 1000
		v[qosMetric(q.QoS, "within_target")] = 100 * q.Compliance
		if !r.Complete {
			continue
		}
		v[qosMetric(q.QoS, "sla_met")] = 0
		if q.Met {
			v[qosMetric(q.QoS, "sla_met")] = 1
		}
	}
}

// slaRow is one QoS class of one trial: its p95 against its target, the
// share of its requests within the target, and the verdict.
type slaRow struct {
	Group    string
	Trial    int
	QoS      string
	Requests int64
	P95MS    float64
	TargetMS float64
	// Share is the share of requests within target, 0 to 1 (withinPct
	// gives it in percent). P95MS and Share are NaN where the run did
	// not measure them (kvtrace's simulation).
	Share float64
	// Measured is false when the run could not measure the SLA (Why says
	// why), simulated it, or stopped early (Incomplete); Met is the
	// verdict of a measured one.
	Measured   bool
	Met        bool
	Incomplete bool
	Why        string
}

// verdict is the row's SLA verdict for people: "met", "NOT met", "not
// measured", "simulated", "incomplete" (a run stopped early, whose
// storage_health is INCOMPLETE: no verdict).
func (s slaRow) verdict() string {
	switch {
	case s.Why == simulatedNote:
		return "simulated"
	case s.Incomplete:
		return "incomplete"
	case !s.Measured:
		return "not measured"
	case s.Met:
		return "met"
	}
	return "NOT met"
}

// withinPct is the share of requests within target, in percent.
func (s slaRow) withinPct() float64 { return 100 * s.Share }

// within is the share within target for people: "97.5%", rounded down
// to a tenth as storage_health's criteria show it (results.SharePct), so
// that a share below the target never reads as the target (94.97 % of
// requests, NOT met, is "94.9%", not "95.0%"); "-" when the run did not
// measure it (a simulation).
func (s slaRow) within() string {
	if math.IsNaN(s.Share) {
		return "-"
	}
	return strconv.FormatFloat(results.SharePct(s.Share), 'f', 1, 64) + "%"
}

// optional is v for a JSON field that holds null for a figure not
// measured (NaN).
func optional(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// slaRows returns the SLA of each QoS class of each trial of r, in group
// and trial order: every run and system, whatever the metrics selected.
func slaRows(r *Report) []slaRow {
	var out []slaRow
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			if t == nil {
				continue
			}
			id := g.TrialID(i)
			for _, q := range t.Requests.ByQoS {
				s := newSLARow(t, q, g.Simulated)
				s.Group, s.Trial = g.Label, id
				out = append(out, s)
			}
		}
	}
	return out
}

// newSLARow is the SLA of QoS class q of run r (simulated when it is
// kvtrace's): measured, not measured (the run says why), or not judged
// (an incomplete run).
func newSLARow(r *schema.Result, q schema.QoSStats, simulated bool) slaRow {
	why := r.Summary.NotMeasured[results.NotMeasuredSLA]
	incomplete := false
	switch {
	case simulated:
		why = simulatedNote
	case why == "" && !r.Complete:
		incomplete = true
		why = "an incomplete run (" + cmp.Or(r.IncompleteReason, "stopped early") + "): its requests are those " +
			"before it stopped, and it is judged no more than its storage_health is"
	}
	s := slaRow{QoS: q.QoS, Requests: q.Count, P95MS: q.Latency.P95US / 1000, TargetMS: q.TargetP95MS,
		Share: q.Compliance, Measured: why == "", Met: q.Met, Incomplete: incomplete, Why: why}
	if simulated {
		// kvtrace's statistics time no storage I/O: their p95 of 0 and
		// 100 % within target are not figures of a run, and read as a
		// perfect one. Missing, as any figure a run did not measure.
		s.P95MS, s.Share = math.NaN(), math.NaN()
	}
	return s
}

// slaTable is the SLA view of the tabular formats; nil when no run has a
// QoS class.
func slaTable(r *Report) *table {
	rows := slaRows(r)
	if len(rows) == 0 {
		return nil
	}
	t := &table{title: fmt.Sprintf("SLA per QoS class per run (storage latency p95 against the class's target; met when %.0f%% of its requests are within it)",
		100*results.ComplianceTarget),
		header: []string{"group", "trial", "qos", "requests", "p95 ms", "target ms", "within target", "SLA"}}
	var notes []string
	for _, s := range rows {
		t.rows = append(t.rows, []string{s.Group, strconv.Itoa(s.Trial), s.QoS, strconv.FormatInt(s.Requests, 10),
			num(s.P95MS), num(s.TargetMS), s.within(), s.verdict()})
		if !s.Measured && s.Why != simulatedNote {
			note := fmt.Sprintf("%s trial %d: SLA not measured: %s", s.Group, s.Trial, s.Why)
			if s.Incomplete {
				note = fmt.Sprintf("%s trial %d: SLA not judged: %s", s.Group, s.Trial, s.Why)
			}
			if len(notes) == 0 || notes[len(notes)-1] != note {
				notes = append(notes, note)
			}
		}
	}
	t.notes = notes
	return t
}
