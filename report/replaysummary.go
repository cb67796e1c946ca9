package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// WriteReplaySummary prints a kvreplay result for people, as kvreplay does
// on a terminal: tiers, bandwidth, latency percentiles, requests, health
// and warnings. Its text (reasons, warnings, an error a server sent) is
// printed printable: a newline or a terminal's escape sequence in it is
// escaped, not written.
func WriteReplaySummary(w io.Writer, r *schema.Result) {
	status := "complete"
	switch {
	case !r.Complete:
		status = "INCOMPLETE: " + parsemsg.Printable(r.IncompleteReason)
	case stoppedByWindow(r):
		// Complete, as a run bounded by --duration is, but not the whole
		// trace: never "complete" after a fraction of its rows.
		status = "stopped at the --duration window of " + strconv.FormatFloat(r.Replay.DurationS, 'g', -1, 64) + " s"
	}
	fmt.Fprintf(w, "kvreplay: %s in %.2f s (%s)\n", rowsDone(r), r.WallS, status)
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", parsemsg.Printable(warn))
	}
	// Bandwidths are GB/s and data GB, decimal, as in every kvbench
	// output; a tier's bandwidth is its device rate, offered load apart.
	fmt.Fprintln(w, "bandwidth: the device rate, bytes over the time the tier was busy moving them; offered: bytes over the run's "+
		"elapsed time (the summary's tier_*_bandwidth_gbps); GB = 10^9 bytes")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tier\tbackend\top\tphase\tops\tGB\tGB/s\toffered GB/s\tp50 ms\tp99 ms\tp99 sched ms\tmax ms\t")
	for _, c := range r.Cells {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", c.Tier, c.Backend, c.Op, c.Phase, c.Ops,
			gb(c.LogicalBytes), c.DeviceBps/results.GB, c.OfferedBps/results.GB, c.Latency.P50US/1000, c.Latency.P99US/1000,
			c.FromSchedule.P99US/1000, c.Latency.MaxUS/1000)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tier\tread GB/s\twrite GB/s\tread offered GB/s\twrite offered GB/s\tread GB\twritten GB\tbusy s\t")
	for _, t := range r.Tiers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f\t%s\t%s\t%.3f\t\n", t.Tier, deviceRate(t.ReadBytes, t.ReadDeviceBps),
			deviceRate(t.WriteBytes, t.WriteDeviceBps), t.ReadOfferedBps/results.GB, t.WriteOfferedBps/results.GB,
			gb(t.ReadBytes), gb(t.WriteBytes), t.BusyS)
	}
	tw.Flush()
	if r.Requests.Count > 0 {
		l := r.Requests.Latency
		fmt.Fprintf(w, "requests %d: storage latency p50 %.3f ms, p95 %.3f ms, p99 %.3f ms\n", r.Requests.Count, l.P50US/1000, l.P95US/1000, l.P99US/1000)
		// Each class's verdict and share as every kvreport format gives
		// them (slaRow).
		for _, q := range r.Requests.ByQoS {
			s := newSLARow(r, q, false)
			fmt.Fprintf(w, "  %-11s %6d requests, p95 %.3f ms vs %.0f ms target: %s within, SLA %s\n",
				q.QoS, q.Count, s.P95MS, s.TargetMS, s.within(), s.verdict())
		}
		if len(r.Requests.ByQoS) > 0 {
			if s := newSLARow(r, r.Requests.ByQoS[0], false); s.Incomplete {
				fmt.Fprintf(w, "  SLA not judged: %s\n", parsemsg.Printable(s.Why))
			} else if !s.Measured {
				fmt.Fprintf(w, "  SLA not measured: %s\n", parsemsg.Printable(s.Why))
			}
		}
	}
	if n := r.Replay.RequestsCut; n > 0 {
		fmt.Fprintf(w, "requests cut by the --duration window: %d (rows left when it closed, or due and not started: not measured as requests", n)
		if late := r.Replay.RequestsCutLate; late > 0 {
			fmt.Fprintf(w, ", but %d already past their class's target, counted as missing it", late)
		}
		fmt.Fprintln(w, ")")
	}
	// Two token rates, each under its own name: kvbench's and the
	// reference's.
	if t := r.Summary.StorageKVTokensPerSec; t != nil {
		fmt.Fprintf(w, "kv_tokens_moved_per_s (kvbench's: Tier-2 bytes read and written / bytes per token, per second of the run): %.0f\n", *t)
	} else if why := r.Summary.NotMeasured[results.NotMeasuredKVTokens]; why != "" {
		fmt.Fprintf(w, "kv_tokens_moved_per_s (kvbench's): not measured: %s\n", why)
	}
	if why := r.Summary.NotMeasured[results.NotMeasuredRefTokens]; why == "" {
		fmt.Fprintf(w, "storage_throughput_tokens_per_sec (the reference's: tokens generated / total storage I/O time): %.1f\n",
			r.Summary.StorageThroughputTokensPerSec)
	} else {
		fmt.Fprintf(w, "storage_throughput_tokens_per_sec (the reference's): not measured: %s\n", why)
	}
	writeLag(w, r)
	h := r.Summary.StorageHealth
	fmt.Fprintf(w, "storage_health: %s (%d of %d criteria passed)%s\n", h.OverallStatus, h.PassedCount, h.TotalCount, healthNote(r))
	for _, c := range h.Criteria {
		mark := "pass"
		if !c.Passed {
			mark = "FAIL: " + parsemsg.Printable(c.Reason)
		}
		fmt.Fprintf(w, "  %s: %.3f %s (%s)\n", c.Name, c.Actual, c.Unit, mark)
	}
	if h.OverallStatus != results.HealthPass {
		fmt.Fprintf(w, "  verdict: %s\n", parsemsg.Printable(results.Verdict(h)))
	}
	if r.Errors.Count > 0 {
		fmt.Fprintf(w, "errors: %d, first: %s\n", r.Errors.Count, parsemsg.Printable(r.Errors.First[0]))
	}
	var failed []string
	for _, t := range r.Tiers {
		if t.FailedOps > 0 {
			failed = append(failed, fmt.Sprintf("%s %d", t.Tier, t.FailedOps))
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed operations by tier (in no figure above but busy s): %s\n", strings.Join(failed, ", "))
	}
}

// writeLag prints r's lag: every row's behind its scheduled time and, in
// a closed loop, apart, the rows released at their trace times, whose
// P95 storage_health judges (a user's rows keep no schedule: their lag is
// behind their request's release).
func writeLag(w io.Writer, r *schema.Result) {
	l := r.Lag
	what := "lag behind schedule"
	if r.ClosedLoop != nil {
		what = "lag of every row behind its scheduled time (a user's rows: behind their request's release, which keeps no schedule)"
	}
	fmt.Fprintf(w, "%s: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n", what, l.P50US/1000, l.P99US/1000, l.MaxUS/1000)
	if cl := r.ClosedLoop; cl != nil && cl.ScheduledLag != nil {
		l := cl.ScheduledLag
		fmt.Fprintf(w, "  of the %s rows released at their trace times (and missed), the schedule storage_health judges: p50 %.3f ms, p95 %.3f ms, max %.3f ms\n",
			cli.FormatCount(l.Count), l.P50US/1000, l.P95US/1000, l.MaxUS/1000)
	}
}

// failedOps is the operations of r that failed (its tiers' FailedOps: in
// no count, byte or rate of the result), as the renderings show them
// beside its errors.
func failedOps(r *schema.Result) int64 {
	var n int64
	for _, t := range r.Tiers {
		n += t.FailedOps
	}
	return n
}

// rowsDone says how many rows ran, of how many: "193 of 2,890 rows", or,
// for a trace read in part from a pipe, of an unknown total; and how many
// of them ran as setup, before the clock (ReplayStats.SetupRows).
func rowsDone(r *schema.Result) string {
	s := measuredRows(r)
	n := r.Replay.SetupRows
	if n == 0 {
		return s
	}
	s, comma := strings.CutSuffix(s, ",")
	s += fmt.Sprintf(" measured, after %s setup rows (those before the sidecar's measured_from_s, run untimed before the clock, in no figure)", cli.FormatCount(n))
	if comma {
		s += ","
	}
	return s
}

// measuredRows says how many rows the measured run ran, of how many the
// traces have less the setup's.
func measuredRows(r *schema.Result) string {
	var total int64
	for _, t := range r.Traces {
		if t.ReadInPart {
			return fmt.Sprintf("%s rows of a trace read in part (its total is unknown)", cli.FormatCount(r.Replay.RowsDone))
		}
		total += t.Rows
	}
	if len(r.Traces) == 0 {
		return cli.FormatCount(r.Replay.RowsDone) + " rows"
	}
	if shardRank(r) {
		return fmt.Sprintf("%s rows, rank %d's shard (--shard %s) of the trace's %s rows over %d ranks,",
			cli.FormatCount(r.Replay.RowsDone), r.Rank, r.Replay.Shard, cli.FormatCount(total), r.Ranks)
	}
	total -= r.Replay.SetupRows // the measured run's rows
	return fmt.Sprintf("%s of %s rows", cli.FormatCount(r.Replay.RowsDone), cli.FormatCount(total))
}

// shardRank reports whether r is one rank's part of a trace split among
// ranks (--shard), not a merge of them: its traces' rows are the whole
// trace's, most of them other ranks'.
func shardRank(r *schema.Result) bool {
	return r.Ranks > 1 && r.Replay.Shard != "" && len(r.MergedRanks) == 0
}

// stoppedByWindow reports whether the --duration window ended the run
// before the trace did: rows left, or a trace on a pipe read in part.
func stoppedByWindow(r *schema.Result) bool {
	if r.Replay.DurationS <= 0 {
		return false
	}
	var total int64
	for _, t := range r.Traces {
		if t.ReadInPart {
			return true
		}
		total += t.Rows
	}
	if r.Replay.RequestsCut > 0 {
		return true // it closed on requests with rows left
	}
	if cl := r.ClosedLoop; cl != nil && cl.RequestsLeft != 0 {
		return true // a sample of the users does not run every row
	}
	if shardRank(r) {
		return r.WallS >= r.Replay.DurationS // the window, not the shard, ended it
	}
	return len(r.Traces) > 0 && r.Replay.RowsDone+r.Replay.SetupRows < total && (r.ClosedLoop == nil || r.ClosedLoop.UserLimit == 0)
}

// healthNote says why storage_health is neither PASS nor FAIL, or what a
// PASS or FAIL judged where the SLA was not measured (healthScope).
func healthNote(r *schema.Result) string {
	switch r.Summary.StorageHealth.OverallStatus {
	case results.HealthIncomplete:
		return ": the run stopped early, so it did not judge the whole trace"
	case results.HealthNoData:
		return ": nothing to measure (no Tier-1 or Tier-2 operation ran)"
	}
	if scope := healthScope(r); scope != "" {
		return ": " + scope
	}
	return ""
}

// gb renders bytes in GB (10^9 bytes) with four significant digits.
func gb(n int64) string {
	v := float64(n) / results.GB
	switch {
	case v == 0:
		return "0"
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// deviceRate renders a device rate in GB/s: "-" when the tier moved bytes
// without one (unknown), 0 when it moved none.
func deviceRate(bytes int64, bps float64) string {
	if bytes > 0 && bps <= 0 {
		return "-"
	}
	return strconv.FormatFloat(bps/results.GB, 'f', 3, 64)
}
