package results

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// The words of a verdict on whether figures are a measurement at all: an
// MLPerf Option's (kvreport --aggregate mlperf), a search probe's
// (ProbeVerdict). They are not storage_health's statuses, which judge a
// measurement's figures: PASS and FAIL mean one thing everywhere.
const (
	VerdictMeasured        = "MEASURED"
	VerdictNotAMeasurement = "NOT A MEASUREMENT"
)

// NotAMeasurement says why a kvreplay result is not a valid measurement,
// "" when it is one: its run was cut short (complete false), or
// operations failed, whether or not it says it completed. The one rule
// for every place a tool answers for a run: a search's probe, a report
// of a document on stdin, the MLPerf aggregation's ranks. kvreplay stops
// at the first failed operation, its result incomplete, exit 1. Such a
// run's storage_health is FAIL (Judge), but unlike a complete run that
// fails a criterion, it is not a measurement of a system that fails:
// what failed is the run.
func NotAMeasurement(r *schema.Result) string {
	var why []string
	if !r.Complete {
		why = append(why, "an incomplete run ("+cmp.Or(r.IncompleteReason, "incomplete")+")")
	}
	if r.Errors.Count > 0 && !r.Complete {
		// The reason the run stopped names the first failure.
		why = append(why, fmt.Sprintf("%d operation(s) failed", r.Errors.Count))
	} else if f := FailedOperations(r); f != "" {
		why = append(why, f)
	}
	return strings.Join(why, "; ")
}

// FailedOperations says how many of a result's operations failed, and
// the first's error; "" when none did.
func FailedOperations(r *schema.Result) string {
	if r.Errors.Count == 0 {
		return ""
	}
	s := fmt.Sprintf("%d operation(s) failed", r.Errors.Count)
	if len(r.Errors.First) > 0 {
		s += ", the first: " + r.Errors.First[0]
	}
	return s
}
