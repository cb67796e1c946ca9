package results

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kvbench/kvbench/schema"
)

// storage_health is decided here, for kvreplay's documents, kvreport's
// merges and renderings, kvreplay's searches and kvtrace's statistics
// alike: the criteria, their limits, and the rule that turns them into a
// status.

// The reference's storage_health latency profile (reference section 5): a
// criterion passes when the P95 is strictly below its limit.
const (
	StorageWriteP95Limit = 500 * time.Millisecond // Tier-2 writes, not Evict
	StorageReadP95Limit  = 200 * time.Millisecond // Tier-2 reads, not Evict
	CPUP95Limit          = 150 * time.Millisecond // Tier-1 reads and writes, not Evict
)

// LagP95Limit bounds how far behind the trace's schedule a replay at a
// pace (--speed 1 or N) may issue its rows that have one: an open loop's
// rows, and the rows a closed loop releases at their trace times
// (schema.ClosedLoopStats.ScheduledLag). A run whose lag P95 is at or
// beyond it did not keep the trace's pace, and its latencies are those of
// a backlog, not of the workload the trace describes.
const LagP95Limit = time.Second

// The statuses of storage_health (schema's), under the names the tools
// use.
const (
	HealthPass       = schema.HealthPass
	HealthFail       = schema.HealthFail
	HealthIncomplete = schema.HealthIncomplete
	HealthNoData     = schema.HealthNoData
)

// presence says which tiers a run has cells of: a criterion judges only
// what ran.
type presence struct {
	storageWrites, storageReads, cpu bool
}

// presenceOf finds what r's cells hold of the phases the reference
// samples (refPhase: a demotion's copy is judged by no criterion, as its
// latency is in no figure under the reference's names). A cell counts
// only with a measured operation: one whose operations all failed or were
// abandoned has busy time but no latency, and a criterion on it would
// pass at 0 ms.
func presenceOf(r *schema.Result) presence {
	var p presence
	nvme, cpu := schema.TierNVMe.String(), schema.TierCPU.String()
	for i := range r.Cells {
		c := &r.Cells[i]
		switch {
		case !refPhase(c) || c.Latency.Count == 0:
		case c.Tier == nvme && c.Op == schema.OpWrite.String():
			p.storageWrites = true
		case c.Tier == nvme && c.Op == schema.OpRead.String():
			p.storageReads = true
		case c.Tier == cpu && c.Op != schema.OpDelete.String():
			p.cpu = true
		}
	}
	return p
}

// Health is storage_health of the document r with the summary figures s
// (r.Summary, or figures being computed): the reference's latency
// criteria (Tier-2 write P95 below StorageWriteP95Limit when a Tier-2
// write completed, Tier-2 read P95 below StorageReadP95Limit when a read
// did, CPU RAM P95 below CPUP95Limit when a Tier-1 operation did: a
// criterion is judged on measured operations only, and absent without
// any), and
// kvbench's: an open-loop replay at a pace keeps its lag P95 below
// LagP95Limit (ScheduleCriterion), a closed loop at a pace keeps the lag
// P95 of the rows it released at their trace times below it too
// (ScheduledCriterion: its users' rows keep no schedule, and are not
// judged; absent without such rows, and for a document written before
// closed_loop.scheduled_lag, as before it), and each QoS class whose SLA
// the run measured meets it (95 % of its requests within its target).
// The status is Judge's. kvreport calls it on the documents it reads, so
// an older document is judged by today's rule.
func Health(r *schema.Result, s *schema.Summary) schema.StorageHealth {
	return evaluate(r, s, presenceOf(r))
}

func evaluate(r *schema.Result, s *schema.Summary, p presence) schema.StorageHealth {
	var cs []schema.Criterion
	latency := func(what string, limit time.Duration, actual float64) {
		ms := float64(limit.Milliseconds())
		c := schema.Criterion{Name: fmt.Sprintf("%s P95 < %gms", what, ms), Target: ms, Actual: actual, Unit: "ms", Passed: actual < ms}
		if !c.Passed {
			c.Reason = fmt.Sprintf("%s p95 %s ms >= %g ms limit", strings.ToLower(what), fmtMS(actual), ms)
		}
		cs = append(cs, c)
	}
	if p.storageWrites {
		latency("Storage Tier Write Total", StorageWriteP95Limit, s.StorageWriteP95MS)
	}
	if p.storageReads {
		latency("Storage Tier Read Total", StorageReadP95Limit, s.StorageReadP95MS)
	}
	if p.cpu {
		latency("CPU RAM", CPUP95Limit, s.CPUP95MS)
	}
	if c, ok := schedule(r); ok {
		cs = append(cs, c)
	}
	if _, unmeasured := s.NotMeasured[NotMeasuredSLA]; !unmeasured {
		for _, q := range r.Requests.ByQoS {
			if q.Count == 0 || q.TargetP95MS <= 0 {
				continue
			}
			// The SLA's rule is a share of the requests within the
			// target (Compliance), so the criterion's figure is that
			// share: a p95 of 40 ms fails a 50 ms target when 1 of 19
			// requests took longer, and must not read as 40 > 50.
			c := schema.Criterion{Name: fmt.Sprintf("%s SLA: %g%% within %gms", q.QoS, 100*ComplianceTarget, q.TargetP95MS),
				Target: 100 * ComplianceTarget, Actual: SharePct(q.Compliance), Unit: "%", Passed: q.Met}
			if !c.Passed {
				c.Reason = SLAFailure(q)
			}
			cs = append(cs, c)
		}
	}
	var failures []string
	if r.Errors.Count > 0 {
		failures = append(failures, fmt.Sprintf("%d operation(s) failed", r.Errors.Count))
	}
	failures = append(failures, RankFailures(r)...)
	incomplete := ""
	if !r.Complete {
		incomplete = cmp.Or(r.IncompleteReason, "the run stopped early")
	}
	return Judge(cs, failures, incomplete)
}

// RankHealthWarning is the warning a merged document (kvreport merge)
// carries for a rank whose own storage_health, judged on that rank's
// document alone (Health), is h and not PASS: "STORAGE_HEALTH FAIL of
// this rank alone: reasons", which the merge prefixes with the rank
// ("rank 0: ..."). The pooled criteria of the ranks' exact merge are a
// legitimate figure, but they must not hide a rank that failed.
func RankHealthWarning(h schema.StorageHealth) string {
	return "STORAGE_HEALTH " + string(h.OverallStatus) + rankAlone + strings.Join(h.Reasons, "; ")
}

// rankAlone follows a rank's status in RankHealthWarning.
const rankAlone = " of this rank alone: "

// RankFailures are the failures of a merged document r (MergedRanks of
// two or more) that a rank's own storage_health was FAIL, one line each
// ("rank 0: STORAGE_HEALTH FAIL of this rank alone: reasons"): each fails
// the merge, so that a merged PASS means every rank passed, as a reader
// of PASS expects (MLPerf sums the ranks' figures; the pooled criteria
// alone would pass a run whose rank 0 missed its SLA beside a rank 1 that
// met it by more). They come from r's RankHealth; a merged document
// written before it says them only in its warnings (RankHealthWarning),
// which are read then.
func RankFailures(r *schema.Result) []string {
	if len(r.MergedRanks) < 2 {
		return nil
	}
	var out []string
	if r.RankHealth != nil {
		for _, s := range r.RankHealth {
			if s.Status == HealthFail {
				h := schema.StorageHealth{OverallStatus: s.Status, Reasons: s.Reasons}
				out = append(out, fmt.Sprintf("rank %d: %s", s.Rank, RankHealthWarning(h)))
			}
		}
		return out
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, "STORAGE_HEALTH "+string(HealthFail)+rankAlone) {
			out = append(out, w)
		}
	}
	return out
}

// ScheduleCriterion begins the name of storage_health's schedule
// criterion: an open loop at a pace keeps its lag P95 below LagP95Limit.
// ScheduledCriterion, which begins with it, is a closed loop's: the lag
// P95 of the rows it released at their trace times.
const (
	ScheduleCriterion  = "Schedule Lag P95"
	ScheduledCriterion = ScheduleCriterion + " (rows at trace times)"
)

// schedule is r's schedule criterion, ok when r has rows with a schedule
// at a pace: an open loop's rows (r.Lag), or the rows a closed loop
// released at their trace times (ClosedLoop.ScheduledLag; its users'
// rows, behind their request's release, are not judged). A closed loop's
// document without the block (no such rows, --speed max, or written
// before it) has none, as before.
func schedule(r *schema.Result) (schema.Criterion, bool) {
	name, lag := ScheduleCriterion, r.Lag
	what := "lag behind the trace's schedule"
	if cl := r.ClosedLoop; cl != nil {
		if cl.ScheduledLag == nil {
			return schema.Criterion{}, false
		}
		name, lag = ScheduledCriterion, *cl.ScheduledLag
		carried := ""
		if cl.UserLimit > 0 {
			carried = ", and the demotions and deletes of replayed users' objects that left-out users' requests carry"
		}
		what = "lag of the rows released at their trace times (the closed loop's rows of no user" + carried + ") behind the trace's schedule"
	}
	if r.Replay.Speed <= 0 || lag.Count == 0 {
		return schema.Criterion{}, false
	}
	ms := float64(LagP95Limit.Milliseconds())
	p95 := lag.P95US / 1000
	c := schema.Criterion{Name: fmt.Sprintf("%s < %gms", name, ms), Target: ms, Actual: p95, Unit: "ms", Passed: p95 < ms}
	if !c.Passed {
		c.Reason = fmt.Sprintf("%s: p95 %s ms >= %g ms limit (max %s ms): the system did not keep the trace's pace",
			what, fmtMS(p95), ms, fmtMS(lag.MaxUS/1000))
	}
	return c, true
}

// BehindSchedule returns h's schedule criterion when it failed: the run
// did not keep the trace's pace, which is what BEHIND SCHEDULE means
// wherever it is said.
func BehindSchedule(h schema.StorageHealth) (schema.Criterion, bool) {
	for _, c := range h.Criteria {
		if strings.HasPrefix(c.Name, ScheduleCriterion) && !c.Passed {
			return c, true
		}
	}
	return schema.Criterion{}, false
}

// Judge is the rule that turns criteria into storage_health, for every
// tool: the status is HealthFail when a criterion failed or there are
// failures (one line each); else
// HealthIncomplete when incomplete says why the run did not complete (its
// criteria judged only what ran before it stopped); else HealthNoData
// when there is no criterion (the reference's vacuous PASS); else
// HealthPass. Reasons list the failed criteria's reasons (their names
// when they give none), the failures and the incompleteness. Failures are
// what fails a run beside its criteria: operations that failed, and in a
// merged document a rank whose own storage_health failed (RankFailures).
func Judge(criteria []schema.Criterion, failures []string, incomplete string) schema.StorageHealth {
	h := schema.StorageHealth{Criteria: criteria, TotalCount: len(criteria)}
	for _, c := range criteria {
		if c.Passed {
			h.PassedCount++
			continue
		}
		h.Reasons = append(h.Reasons, cmp.Or(c.Reason, c.Name+": failed"))
	}
	h.Reasons = append(h.Reasons, failures...)
	switch {
	case len(h.Reasons) > 0:
		h.OverallStatus = HealthFail
	case incomplete != "":
		h.OverallStatus = HealthIncomplete
	case len(criteria) == 0:
		h.OverallStatus = HealthNoData
		h.Reasons = []string{"nothing the criteria judge ran"}
	default:
		h.OverallStatus = HealthPass
	}
	if incomplete != "" {
		h.Reasons = append(h.Reasons, "incomplete: "+incomplete)
	}
	return h
}

// Simulated is storage_health of a simulation's criteria (kvtrace's, judged
// as kv-cache.py's trace mode judges them): Judge's, except that a PASS is
// NO_DATA with why, since the latencies its criteria passed are virtual
// time's zeros, which no device earned; a criterion that failed (a cache
// hit rate below its floor, no Tier-2 bytes) fails on the simulated
// workload itself, and stays FAIL. kvreport reads kv-cache.py's trace-mode
// PASS the same way.
func Simulated(criteria []schema.Criterion, why string) schema.StorageHealth {
	h := Judge(criteria, nil, "")
	if h.OverallStatus == HealthPass {
		h.OverallStatus, h.Reasons = HealthNoData, []string{why}
	}
	return h
}

// Verdict is a one-line account of h: its status and, unless it passed,
// its reasons ("FAIL: interactive p95 62.9 ms > 50 ms target (...)").
func Verdict(h schema.StorageHealth) string {
	if h.OverallStatus == "" {
		return "-"
	}
	if len(h.Reasons) == 0 {
		return string(h.OverallStatus)
	}
	return string(h.OverallStatus) + ": " + strings.Join(h.Reasons, "; ")
}

// ProbeVerdict is a one-line account of a search probe's verdict, as
// kvreplay's progress and kvreport's probe tables show it: "NOT A
// MEASUREMENT: why" when it is not one, else its pass ("PASS: reason" or
// "FAIL: reason"), so that the word and the reason come from the same
// judgement (replay/search's).
func ProbeVerdict(p schema.SearchProbe) string {
	status := HealthFail
	switch {
	case p.NotMeasured != "":
		return VerdictNotAMeasurement + ": " + p.NotMeasured
	case p.Pass:
		status = HealthPass
	}
	if p.Reason == "" {
		return string(status)
	}
	return string(status) + ": " + p.Reason
}

// SLAFailure says why the QoS class q missed its SLA, with its figures:
// its p95 above the target, and the share of its requests within the
// target against the share needed ("interactive p95 62.9 ms > 50 ms
// target (80.0 % of 100 requests within it, 95 % needed)"); where its p95
// is not above the target (a few requests: 1 of 19 late is 94.7 %), the
// share alone fails, and the reason says so, not "40 ms > 50 ms". Where a
// single late request failed it (under 20 requests), it says that too.
func SLAFailure(q schema.QoSStats) string {
	p95 := q.Latency.P95US / 1000
	few := ""
	if late := q.Count - q.WithinTarget; late == 1 && float64(q.Count-1) < ComplianceTarget*float64(q.Count) {
		few = fmt.Sprintf("; of %d requests 1 late one fails the class: a longer run measures more", q.Count)
	}
	if p95 > q.TargetP95MS {
		return fmt.Sprintf("%s p95 %s ms > %g ms target (%.1f %% of %d requests within it, %g %% needed%s)",
			q.QoS, fmtMS(p95), q.TargetP95MS, SharePct(q.Compliance), q.Count, 100*ComplianceTarget, few)
	}
	return fmt.Sprintf("%s: %.1f %% of %d requests within the %g ms target, %g %% needed (p95 %s ms%s)",
		q.QoS, SharePct(q.Compliance), q.Count, q.TargetP95MS, 100*ComplianceTarget, fmtMS(p95), few)
}

// SharePct is a share in percent, rounded down to a tenth, so that a
// share below ComplianceTarget never reads as 95.0 %: every verdict's
// figure (storage_health's criteria, kvreport's SLA table) shows it so.
func SharePct(share float64) float64 { return math.Floor(1000*share) / 10 }

// fmtMS formats milliseconds for a reason: three significant digits.
func fmtMS(ms float64) string {
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f", ms)
	}
	return fmt.Sprintf("%.2f", ms)
}
