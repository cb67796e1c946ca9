// Package search answers the questions behind a replay: how many of a
// trace's users a system serves within their latency targets (Users), and
// the most offered load (bytes over the elapsed time) it delivers before
// more load stops helping (Capacity). Each is a sequence of probes, replays run by the caller
// through a Prober; the package decides which probe comes next and what
// the probes say, and knows nothing of backends.
package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Kinds of search.
const (
	KindUsers    = schema.SearchUsers
	KindCapacity = schema.SearchCapacity
)

// Probe is one replay of a search; Document is a search's result.
type (
	Probe    = schema.SearchProbe
	Document = schema.SearchResult
)

// Summarize reads a probe of a search of kind off its result, and judges
// it by the kind's criteria. Its offered load is the reads and writes of
// the storage tiers (their names, "Tier-2": those on the backend Tier-2
// maps to, Tier-2 alone in the default map, every tier where --tier-map
// puts them all on NVMe) over the elapsed time (the result's
// *_offered_bytes_per_s), or of every tier when storage is empty. A
// search gives every probe the same storage tiers (setup.Search), so that
// its probes' loads are one measure: a probe whose window reached no row
// there offered it nothing, and is not measured on the RAM tier instead
// while the next is on the disk (a capacity search took that fall for
// saturation). StorageOf is the rule for traces whose tiers are unknown.
// A users probe that replayed users of a QoS class and judged none of its
// requests fails (unjudged); a probe that ran out of trace before its
// window closed is not a measurement (outran).
func Summarize(kind string, res *schema.Result, storage []string) Probe {
	p := Probe{WallS: res.WallS, Requests: results.Completed(res), RequestsPerSecond: res.Summary.RequestsPerSecond,
		TokensPerSecond: res.Summary.StorageThroughputTokensPerSec, Health: string(res.Summary.StorageHealth.OverallStatus),
		TierPaths: res.Host.TierPaths}
	for _, t := range res.Tiers {
		if len(storage) == 0 || slices.Contains(storage, t.Tier) {
			p.OfferedBps += t.ReadOfferedBps + t.WriteOfferedBps
		}
	}
	for _, q := range res.Requests.ByQoS {
		if p.P95MSByQoS == nil {
			p.P95MSByQoS = map[string]float64{}
		}
		p.P95MSByQoS[q.QoS] = q.Latency.P95US / 1000
	}
	if cl := res.ClosedLoop; cl != nil && kind == KindUsers {
		p.UsersByQoS = map[string]int{}
		for _, u := range cl.PerUser {
			p.UsersByQoS[u.QoS]++
		}
	}
	p.NotMeasured = cmp.Or(results.NotAMeasurement(res), outran(res))
	p.Pass, p.Reason = judge(kind, res, p.NotMeasured)
	if p.Pass && kind == KindUsers {
		if why := unjudged(res, p.UsersByQoS); why != "" {
			p.Pass, p.Reason = false, why
		}
	}
	return p
}

// outran says how a probe's run ended before its --duration window
// closed, "" when the window ended it (or it had none): an open loop's
// trace ran out (a capacity probe at a --speed that replays the whole
// trace in less than the window; each doubling after it packs the same
// bytes into less time, a burst caches absorb, and its offered load rose
// without end: 2.92 GB/s at --speed 128 from a 10 s trace replayed in
// 0.08 s, on a disk that sustains 0.2), or a closed loop's users made
// every request the trace has of theirs (a users probe passed on one
// user's one request, 35 ms of a 20 s window). Every probe of a search
// holds its load for the window, so such a probe is not a measurement:
// the search stops there, its answer a lower bound. A plain replay whose
// trace ends before --duration is a whole replay, and not judged so. A
// run that ended in its window's last outranSlack held its load for the
// window, but for a tail that lag alone may cover: a 59.3 s trace at
// --speed 2 ends 0.35 s before a 30 s window closes, or after it when
// the run lags, and the probe does not flip between the two.
func outran(res *schema.Result) string {
	window := res.Replay.DurationS
	if window <= 0 || res.WallS >= (1-outranSlack)*window {
		return ""
	}
	const fix = "so it did not hold its load for the window: give a shorter --duration, or a longer trace"
	if cl := res.ClosedLoop; cl != nil {
		if cl.RequestsLeft != 0 {
			return "" // requests left (or unknown): the window or a stop ended it
		}
		return fmt.Sprintf("its users' requests ran out after %.3g s of the probe's %g s window (its %s made every request the trace has of theirs), %s",
			res.WallS, window, usersN(int(cl.Users)), fix)
	}
	var total int64
	for _, t := range res.Traces {
		if t.ReadInPart {
			return ""
		}
		total += t.Rows
	}
	if total == 0 || res.Replay.RowsDone+res.Replay.SetupRows < total {
		return ""
	}
	return fmt.Sprintf("the trace ran out after %.3g s of the probe's %g s window (every row replayed at --speed %g), %s",
		res.WallS, window, res.Replay.Speed, fix)
}

// outranSlack is the share of a probe's window at its end in which its
// run may end, its trace or its users' requests run out, and still be a
// measurement of the window (outran).
const outranSlack = 0.05

// unjudged says which QoS classes with an SLA a users probe replayed
// users of but judged no request of (none completed in the window: their
// first requests came after it, or it cut them), "" when there are none:
// a probe passes when every class it replays met its SLA, and such a
// class's SLA was not measured.
func unjudged(res *schema.Result, users map[string]int) string {
	judged := map[string]bool{}
	for _, q := range res.Requests.ByQoS {
		if q.Count > 0 {
			judged[q.QoS] = true
		}
	}
	var why []string
	for q := range schema.QoS(schema.NumQoS) {
		class := q.String()
		if n := users[class]; n > 0 && results.QoSTarget(q) > 0 && !judged[class] {
			why = append(why, fmt.Sprintf("%s: %s replayed, no request of the class completed in the window, so its SLA was not measured", class, usersN(n)))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + " (a longer --duration measures it)"
}

// StorageOf is the storage tiers of Summarize for a probe of traces whose
// tiers were not read before the search: the tiers on Tier-2's backend
// where the run moved Tier-2 bytes, else none (every tier). The result
// names each tier's backend as the backend names itself ("extent" for
// the nvme tier's --layout extent), the same for every tier on it.
func StorageOf(res *schema.Result) []string {
	for _, t := range res.Tiers {
		if t.Tier == schema.TierNVMe.String() && t.ReadBytes+t.WriteBytes > 0 {
			var tiers []string
			for _, u := range res.Tiers {
				if u.Backend == t.Backend {
					tiers = append(tiers, u.Tier)
				}
			}
			return tiers
		}
	}
	return nil
}

// judge decides whether a probe of a search of kind passes and says why,
// from the same facts: the failed criteria with their figures, or what
// passed. A users probe passes when every QoS class with requests met its
// SLA (results' rule: 95 % of its requests within its p95
// target) and storage_health is PASS; a capacity probe when
// storage_health is PASS: the load was served within the latency profile
// (and, where storage_health judges it, the trace's pace). A probe that
// is not a measurement fails.
func judge(kind string, res *schema.Result, notMeasured string) (bool, string) {
	if notMeasured != "" {
		return false, "not a measurement: " + notMeasured
	}
	var failed, passed []string
	slaFailed := map[string]bool{}
	if kind == KindUsers {
		judged := 0
		for _, q := range res.Requests.ByQoS {
			if q.Count == 0 || q.TargetP95MS <= 0 {
				continue
			}
			judged++
			if q.Met {
				passed = append(passed, fmt.Sprintf("%s %.1f %% within %g ms", q.QoS, 100*q.Compliance, q.TargetP95MS))
				continue
			}
			slaFailed[q.QoS] = true
			failed = append(failed, results.SLAFailure(q))
		}
		if judged == 0 {
			failed = append(failed, "no request of a QoS class completed in the window, so no SLA was met")
		}
	}
	h := res.Summary.StorageHealth
	status := string(h.OverallStatus)
	if h.OverallStatus != schema.HealthPass {
		said := false
		var why []string
		for _, c := range h.Criteria {
			if c.Passed {
				continue
			}
			said = true
			if class, _, _ := strings.Cut(c.Name, " "); slaFailed[class] {
				continue // a class's SLA, where storage_health judges it too, is said once
			}
			why = append(why, cmp.Or(c.Reason, fmt.Sprintf("%s failed at %.1f %s", c.Name, c.Actual, c.Unit)))
		}
		if !said {
			why = h.Reasons // no criterion failed: NO_DATA, or not judged
		}
		switch {
		case len(why) > 0:
			failed = append(failed, "storage_health "+cmp.Or(status, "not judged")+": "+strings.Join(why, "; "))
		case !said:
			failed = append(failed, "storage_health "+cmp.Or(status, "not judged"))
		}
	}
	if len(failed) > 0 {
		return false, strings.Join(failed, "; ")
	}
	ok := fmt.Sprintf("storage_health PASS (%d of %d criteria)", h.PassedCount, h.TotalCount)
	if kind == KindUsers {
		return true, "every QoS class met its SLA (" + strings.Join(passed, ", ") + ") and " + ok
	}
	return true, ok + ": the load was served within the latency profile"
}

// ErrNotMeasured stops a search at a probe that is not a measurement
// (Probe.NotMeasured).
var ErrNotMeasured = errors.New("a probe is not a measurement")

// Prober runs one probe: a replay of n users (a users search) or at a
// --speed (a capacity search). An error stops the search.
type Prober func(n int, speed float64) (Probe, error)

// UserSelection describes the users a users probe of n replays
// (replay.SelectUsers), for the document.
const UserSelection = "a probe of n users replays a sample of the trace's users stratified by QoS class " +
	"(every class from n = the number of classes on, then in proportion to its share; within a class, " +
	"in the order of their IDs, not of their first appearance, which favours the users of the shortest think times), as kvreplay --closed-loop --users n does"

// UsersOptions bound a users search.
type UsersOptions struct {
	// Total is the trace's number of users; the answer is at most Total.
	Total int
	// MaxProbes caps the probes (at least 3).
	MaxProbes int
	// Repeats is how many times in all the answer is probed (1: once).
	Repeats int
	// Classes is the trace's users by QoS class (replay.UsersByQoS of the
	// prescan's), nil when unknown: an answer whose probes replayed none
	// of a class's users says so.
	Classes map[string]int
}

// stop ends a search at a probe that failed to run (err) or that is not
// a measurement (the last of d.Probes, when err is nil): the search is
// not done, and what the probes before it found is a lower bound. It
// returns the search's error.
func stop(d *Document, what string, err error) error {
	d.Done, d.AnswerIsLowerBound = false, true
	if err == nil {
		p := d.Probes[len(d.Probes)-1]
		err = fmt.Errorf("search: probe %d (%s): %w: %s", len(d.Probes), what, ErrNotMeasured, p.NotMeasured)
		d.LowerBoundReason = fmt.Sprintf("probe %d (%s) is not a measurement (%s): the search stopped there, "+
			"so the answer is what the probes before it measured", len(d.Probes), what, p.NotMeasured)
	} else {
		d.LowerBoundReason = fmt.Sprintf("probe %d (%s) stopped without a result (%v): the search stopped there, "+
			"so the answer is what the probes before it measured", len(d.Probes)+1, what, err)
	}
	return err
}

// Users finds the largest number of users, 0 to Total, whose probe
// passes: it brackets the boundary from Total/4 (doubling up or halving
// down), bisects until the gap is 1 user or 5 % of the answer, then
// probes the answer again, Repeats times in all, and steps down below an
// answer that fails a repeat. It stops at MaxProbes; the document says
// how far it got. A probe that fails to run or is not a measurement
// stops the search at once: the document, returned with the error
// (ErrNotMeasured for the latter), holds the answer of the probes before
// it as a lower bound. The answer passed every probe of it, and every
// failing probe is at answer+Resolution or above; counts whose probes
// disagreed are named in the reason (noise at the boundary).
func Users(opt UsersOptions, probe Prober) (*Document, error) {
	u := &usersSearch{opt: opt, probe: probe, max: max(opt.MaxProbes, 3), passes: map[int]int{}, trials: map[int]int{},
		d: &Document{Kind: KindUsers, TotalUsers: opt.Total, UserSelection: UserSelection}, hi: opt.Total + 1}
	if opt.Total < 1 {
		u.d.Done, u.d.Reason = true, "the trace has no users"
		return u.d, nil
	}
	if u.bracket() {
		u.narrow()
	}
	u.answer()
	return u.d, u.err
}

// usersSearch is the state of a users search: lo users passed (0
// trivially), hi failed (Total+1 by convention), and what each count did.
type usersSearch struct {
	opt            UsersOptions
	probe          Prober
	max            int // probes at most
	d              *Document
	lo, hi         int
	passes, trials map[int]int // by users: probes passed, probes run
	err            error       // what stopped the search
}

// try probes n users: whether they passed, and false once the search has
// stopped (u.err).
func (u *usersSearch) try(n int) (pass, ok bool) {
	p, err := u.probe(n, 0)
	if err != nil {
		u.err = stop(u.d, usersN(n), err)
		return false, false
	}
	p.Users = n
	u.d.Probes = append(u.d.Probes, p)
	if p.NotMeasured != "" {
		u.err = stop(u.d, usersN(n), nil)
		return false, false
	}
	u.trials[n]++
	if p.Pass {
		u.passes[n]++
	}
	return p.Pass, true
}

// bracket finds a count that passes and one that fails around the
// boundary, from Total/4, doubling up or halving down; false when the
// search stopped.
func (u *usersSearch) bracket() bool {
	total := u.opt.Total
	n := max(1, (total+3)/4)
	for len(u.d.Probes) < u.max {
		pass, ok := u.try(n)
		switch {
		case !ok:
			return false
		case pass:
			u.lo = n
			if n == total || u.hi <= total {
				return true
			}
			n = min(total, 2*n)
		default:
			u.hi = n
			if u.lo > 0 || n == 1 {
				return true
			}
			n = max(1, n/2)
		}
	}
	return true
}

// narrow bisects until the gap is 1 user or 5 % of the answer, then
// probes the answer again, Repeats times in all, stepping down below an
// answer that fails a repeat.
func (u *usersSearch) narrow() {
	for {
		gap := u.hi - u.lo
		narrow := gap <= 1 || float64(gap) <= 0.05*float64(u.lo)
		if narrow && (u.lo == 0 || u.trials[u.lo] >= max(1, u.opt.Repeats)) {
			// Done whether or not the probes ran out with the probe that
			// narrowed it.
			u.d.Done = true
			return
		}
		if len(u.d.Probes) >= u.max {
			return
		}
		if !narrow {
			mid := (u.lo + u.hi) / 2
			pass, ok := u.try(mid)
			if !ok {
				return
			}
			if pass {
				u.lo = mid
			} else {
				u.hi = mid
			}
			continue
		}
		pass, ok := u.try(u.lo)
		if !ok {
			return
		}
		if !pass {
			// Not reproducible: the boundary is below. Step down to the
			// largest count that passed every time it ran.
			u.hi, u.lo = u.lo, 0
			for k, p := range u.passes {
				if k < u.hi && p == u.trials[k] && k > u.lo {
					u.lo = k
				}
			}
		}
	}
}

// answer writes the answer, its confidence and resolution, and why.
func (u *usersSearch) answer() {
	d, lo, hi := u.d, u.lo, u.hi
	d.Users = lo
	if lo > 0 {
		d.Confidence = float64(u.passes[lo]) / float64(u.trials[lo])
	}
	if hi <= u.opt.Total {
		d.Resolution = hi - lo // hi is a count that failed a probe
	}
	switch {
	case u.err != nil:
		d.Reason = u.stopped()
	case lo == u.opt.Total:
		d.Reason = fmt.Sprintf("all %d users passed: the system serves at least the trace's users (make a trace with more)", lo)
	case lo == 0 && hi == 1:
		d.Reason = "no number of users passed: even 1 user misses its latency target or storage_health"
	case lo == 0:
		// 1 user was not probed: what failed is hi, the smallest count
		// with a failing probe (every failing probe is at hi or above).
		d.Reason = fmt.Sprintf("no number of users passed every probe of it: %s failed, fewer were not probed", usersN(hi))
	default:
		d.Reason = fmt.Sprintf("%s passed, %d failed", usersN(lo), hi)
	}
	switch {
	case u.err != nil:
		d.Reason += "; " + d.LowerBoundReason
	case !d.Done:
		d.Reason += fmt.Sprintf(" (stopped at %d probes before the boundary was narrow and confirmed)", len(d.Probes))
	}
	if out := u.leftOut(); out != "" {
		d.Reason += "; " + out
	}
	if noisy := u.disagreed(); noisy != "" {
		d.Reason += "; " + noisy
	}
}

// stopped is the answer of a search that a probe stopped: the count that
// passed, a lower bound, and the smallest that failed, where one did
// (every count that failed is at it or above).
func (u *usersSearch) stopped() string {
	lo, hi := u.lo, u.hi
	switch {
	case lo == 0 && hi <= u.opt.Total:
		return fmt.Sprintf("no number of users passed before the search stopped (a lower bound of 0; %s failed)", usersN(hi))
	case lo == 0:
		return "no number of users passed before the search stopped (a lower bound of 0)"
	case hi <= u.opt.Total:
		return fmt.Sprintf("at least %s: %d passed before the search stopped, %d failed", usersN(lo), lo, hi)
	}
	return fmt.Sprintf("at least %s: %d passed before the search stopped", usersN(lo), lo)
}

// leftOut says which of the trace's QoS classes with an SLA the probes of
// the answer replayed no user of ("" when none, or when the classes are
// unknown): a sample of fewer users than the classes leaves some out
// (replay.SelectUsers), and the answer then says nothing of their SLAs,
// which a reader of "1 user passed" takes it to have met.
func (u *usersSearch) leftOut() string {
	if u.lo == 0 || len(u.opt.Classes) == 0 {
		return ""
	}
	var in map[string]int
	for _, p := range u.d.Probes {
		if p.Users == u.lo && p.UsersByQoS != nil {
			in = p.UsersByQoS
		}
	}
	if in == nil {
		return ""
	}
	var out []string
	for q := range schema.QoS(schema.NumQoS) {
		if c := q.String(); u.opt.Classes[c] > 0 && in[c] == 0 && results.QoSTarget(q) > 0 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return ""
	}
	which := "a class the trace has"
	if len(out) > 1 {
		which = "classes the trace has"
	}
	return fmt.Sprintf("the probes of %s replayed no %s user, %s: a sample of fewer users than its classes leaves some out (user_selection), "+
		"so the answer measured none of their SLAs", usersN(u.lo), strings.Join(out, " or "), which)
}

// disagreed says which counts of users passed some probes and failed
// others (results.ProbesDisagreed, the wording kvreport's answer shares),
// "" when none did: the answer is then no more certain than the
// boundary's noise (a longer --duration measures more requests a probe).
func (u *usersSearch) disagreed() string {
	s := results.ProbesDisagreed(u.d.Probes)
	if s == "" {
		return ""
	}
	return s + ": the boundary moves from run to run (a longer --duration measures more requests a probe)"
}

// usersN is "1 user" or "n users".
func usersN(n int) string {
	if n == 1 {
		return "1 user"
	}
	return fmt.Sprintf("%d users", n)
}

// CapacityOptions bound a capacity search.
type CapacityOptions struct {
	// Start is the first --speed (0: DefaultCapacityStart); each probe
	// doubles it.
	Start float64
	// MaxProbes caps the probes (at least 3).
	MaxProbes int
}

// DefaultCapacityStart is a capacity search's first --speed when none is
// given: a quarter of the trace's pace, so that the search starts below
// saturation on a system that serves the trace, and sees the rise.
const DefaultCapacityStart = 0.25

// plateauGain is the least gain over the peak that a doubling of the
// load must bring to count as improving (results.PlateauGain).
const plateauGain = results.PlateauGain

// Capacity raises the open-loop load, doubling --speed from Start, until
// the offered load delivered (Probe.OfferedBps, bytes over the elapsed
// time) stops improving: two probes in a row less than
// plateauGain above the peak, or, when the first doubling already brings
// less, at once: the system was saturated from the first probe. It
// reports the peak and the speed that reached it. Probes that delivered
// nothing while none before them did (their windows reached no row of the
// tiers measured) are no plateau: the doubling goes on. A probe that fails to
// run or is not a measurement stops the search at once: the document,
// returned with the error (ErrNotMeasured for the latter), holds the peak
// of the probes before it as a lower bound, never the stopped probe's
// figures. When the peak's probe failed storage_health, the reason says
// so and gives the most offered load a probe that passed delivered; when
// a probe delivered less than one at a lower --speed, beyond a plateau's
// noise (results.OfferedLoadFell), it says that the peak is one probe's.
func Capacity(opt CapacityOptions, probe Prober) (*Document, error) {
	d := &Document{Kind: KindCapacity}
	speed := opt.Start
	if speed <= 0 || math.IsNaN(speed) || math.IsInf(speed, 0) {
		speed = DefaultCapacityStart
	}
	stalls := 0
	var gain float64 // the last doubling's gain over the peak before it
	var stopErr error
	for len(d.Probes) < max(opt.MaxProbes, 3) {
		what := fmt.Sprintf("--speed %g", speed)
		p, err := probe(0, speed)
		if err != nil {
			stopErr = stop(d, what, err)
			break
		}
		p.Speed = speed
		d.Probes = append(d.Probes, p)
		if p.NotMeasured != "" {
			stopErr = stop(d, what, nil)
			break
		}
		idle := false
		switch {
		case d.PeakOfferedBps > 0:
			gain = p.OfferedBps/d.PeakOfferedBps - 1
		case p.OfferedBps > 0:
			gain = math.Inf(1)
		default:
			// Nothing moved, then or now: the load has not reached what
			// is measured (the windows held no Tier-2 row), which is no
			// plateau.
			gain, idle = 0, true
		}
		if len(d.Probes) > 1 && !idle {
			if gain > plateauGain {
				stalls = 0
			} else {
				stalls++
			}
		}
		if p.OfferedBps > d.PeakOfferedBps || len(d.Probes) == 1 {
			d.PeakOfferedBps, d.PeakSpeed = p.OfferedBps, speed
		}
		if len(d.Probes) == 2 && stalls == 1 {
			d.SaturatedFromFirstProbe, d.Plateau, d.Done = true, true, true
			break
		}
		if stalls >= 2 {
			d.Plateau, d.Done = true, true
			break
		}
		speed *= 2
	}
	peak := fmt.Sprintf("peak offered load %s at --speed %g", results.FormatRate(d.PeakOfferedBps), d.PeakSpeed)
	switch {
	case stopErr != nil && len(d.Probes) == 0, stopErr != nil && d.Probes[0].NotMeasured != "":
		d.PeakOfferedBps, d.PeakSpeed = 0, 0
		d.Reason = "nothing measured before the search stopped; " + d.LowerBoundReason
	case stopErr != nil:
		d.Reason = "at least " + peak + "; " + d.LowerBoundReason
	case d.PeakOfferedBps == 0:
		d.Reason = fmt.Sprintf("no probe delivered an offered load up to --speed %g: their windows moved no byte of the tiers measured "+
			"(give a longer --duration or a higher --speed)", slices.Max(speeds(d.Probes)))
	case d.SaturatedFromFirstProbe:
		first, second := d.Probes[0], d.Probes[1]
		d.Reason = fmt.Sprintf("saturated from the first probe: doubling --speed from %g to %g changed the offered load delivered by %+.1f %% "+
			"(%s to %s, under the %.0f %% that counts as improving): the system was at its plateau from the lowest load probed, "+
			"--speed %g (give a lower --speed to see the rise); %s",
			first.Speed, second.Speed, 100*gain, results.FormatRate(first.OfferedBps), results.FormatRate(second.OfferedBps), 100*plateauGain, first.Speed, peak)
	case d.Plateau:
		d.Reason = fmt.Sprintf("%s: the offered load delivered stopped improving (under %.0f %% over two doublings of the load) at --speed %g",
			peak, 100*plateauGain, slices.Max(speeds(d.Probes)))
	default:
		d.Reason = fmt.Sprintf("%s, still improving after %d probes: the peak is at least this", peak, len(d.Probes))
	}
	if d.PeakOfferedBps > 0 {
		d.Reason += withinProfile(d.Probes, d.PeakSpeed)
	}
	if fell := results.OfferedLoadFell(d.Probes); fell != "" {
		d.Reason += "; " + fell + ": the peak is one probe's figure, not a load the system held as the load rose " +
			"(noise, or a system that slows when overloaded: a longer --duration, or the search run again, shows which)"
	}
	return d, stopErr
}

// withinProfile says, when the probe at the peak (its --speed peak)
// failed storage_health (a load served behind the trace's pace, or with
// its latencies beyond the profile), so, and the most offered load a
// probe that passed delivered: the peak is the most the system moves,
// not what it serves within its latency targets. "" when the peak's
// probe passed.
func withinProfile(ps []Probe, peak float64) string {
	best := -1
	for i, p := range ps {
		if p.Speed == peak && p.Pass {
			return ""
		}
		if p.Pass && p.NotMeasured == "" && (best < 0 || p.OfferedBps > ps[best].OfferedBps) {
			best = i
		}
	}
	if best < 0 {
		return "; storage_health failed at the peak, and in every probe"
	}
	return fmt.Sprintf("; storage_health failed at the peak: the most offered load served within it was %s at --speed %g",
		results.FormatRate(ps[best].OfferedBps), ps[best].Speed)
}

func speeds(ps []Probe) []float64 {
	s := make([]float64, len(ps))
	for i, p := range ps {
		s[i] = p.Speed
	}
	return s
}
