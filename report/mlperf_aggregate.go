package report

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// maxMLPerfRanks bounds a run's ranks: each missing one is named.
const maxMLPerfRanks = 1 << 16

// maxMLPerfTrials bounds a trial's number, and the trials a run's
// summary may say it had: each missing one is named.
const maxMLPerfTrials = schema.MaxTrial

// maxMLPerfSlots bounds the rank results a run may have (its ranks times
// its Options' trials): each missing one is named in missing_files.
const maxMLPerfSlots = 1 << 20

// mlperfTimeLayout is how mlpstorage names a run's date and time
// (run_datetime, and the summary's file name).
const mlperfTimeLayout = "20060102_150405"

// mlperfRule states, once, how AggregateMLPerf combines.
const mlperfRule = "MLPerf Storage Rules.md 6.3.4, as mlpstorage computes it: within each trial the ranks' storage read " +
	"and write bandwidths and storage throughputs are summed; the trials' sums are averaged (fmean); the device read " +
	"and write p95 are the largest of every rank's and trial's p95 (a worst-client bound, not a pooled percentile); a " +
	"missing rank contributes nothing and is listed in missing_files, and a trial the run ran that left no directory " +
	"(one missing between others, or after them up to its kvcache_run_summary's trials_per_option) is a trial of missing " +
	"ranks, its sums 0, as mlpstorage's loop over the trials it ran makes it; a rank whose working set never reached storage " +
	"is listed in cpu_tier_ranks: a kv-cache.py rank's figures are added as they are, a kvreplay rank's storage bandwidths " +
	"and device p95s as 0 (its Tier-2 was memory, or idle) and its storage throughput as it is"

// AggregateMLPerf combines the per-rank, per-trial documents of a run as
// MLPerf Storage's Rules.md 6.3.4 says, exactly as mlpstorage's
// _aggregate_option_results does: for each Option and each of its trials,
// the ranks 0..TotalRanks-1 present add their storage read and write
// bandwidths, avg and storage throughputs (a missing rank is listed in
// missing_files and adds nothing), and their device read and write p95s
// give the trial's largest; over the trials, the sums are averaged
// (fmean) and the largest p95 kept. A rank whose working set never
// reached storage adds its zeros and is listed in cpu_tier_ranks (its
// path). now dates a run whose documents carry no time. The documents of
// a run must be of one kind (kvreplay's GB/s and kv-cache.py's GiB/s do
// not add: ByKind splits a run). Beside the rule's figures, KVBench holds
// the exact pooled view of kvreplay documents and how the views differ.
// AggregateMLPerf checks ctx before each Option, trial and rank it
// combines and each trial it merges, and returns ctx's error, wrapped,
// once it is done: a run of thousands of ranks stops at a signal.
func AggregateMLPerf(ctx context.Context, run *MLPerfRun, now time.Time) (*MLPerfRunSummary, error) {
	sum, kind, err := newRunSummary(run, now)
	if err != nil {
		return nil, err
	}
	trials := 0
	for _, ts := range run.TrialDirs {
		trials += len(ts)
	}
	if slots := run.TotalRanks * trials; slots > maxMLPerfSlots {
		return nil, fmt.Errorf("report: %w: %d ranks x %d trials: %d rank results, at most %d (each missing one is named in missing_files): "+
			"a document's rank or ranks (kvreplay --rank, --ranks), or its rank_<N> and trial_<T> directories, say so",
			ErrIncompatible, run.TotalRanks, trials, slots, maxMLPerfSlots)
	}
	kb := newMLPerfKVBench(kind)
	at := rankIndex(run)
	ran := runTrials(run)
	for _, option := range slices.Sorted(maps.Keys(run.TrialDirs)) {
		if err := stoppedBy(ctx); err != nil {
			return nil, err
		}
		trials := ran
		o, pooled, err := aggregateOption(ctx, run, at, option, trials)
		if err != nil {
			return nil, err
		}
		if err := optionScale(pooled); err != nil {
			return nil, err
		}
		sum.Options[option] = o
		sum.TrialsPerOption = max(sum.TrialsPerOption, len(trials))
		sum.PartialFailure = sum.PartialFailure || o.PartialFailure
		if err := pool(ctx, pooled, trials); err != nil {
			return nil, err
		}
		pooled.Differences = differences(o, pooled, run.TotalRanks)
		kb.Options[option] = pooled
		kb.Warnings = append(kb.Warnings, optionWarnings(option, o, pooled)...)
		if allCPUTier(o, pooled) {
			kb.CPUTierOptions = append(kb.CPUTierOptions, option)
		}
		kb.IncompleteRanks = append(kb.IncompleteRanks, incompleteRanks(pooled.Ranks)...)
		kb.FailedRanks = append(kb.FailedRanks, failedRanks(pooled.Ranks)...)
	}
	kb.Warnings = append(kb.Warnings, countUnreadable(run, sum)...)
	kb.ClosedDepartures = closedDepartures(sum, kb)
	for _, d := range kb.ClosedDepartures {
		kb.Warnings = append(kb.Warnings, "NOT CLOSED: "+d)
	}
	kb.MissingTrials = missingTrials(run, sum)
	for _, m := range kb.MissingTrials {
		kb.Warnings = append(kb.Warnings, m.String())
	}
	for k, o := range sum.Options {
		o.KVBench = optionVerdict(k, o, kb)
	}
	if len(run.Ranks) > 0 || len(run.Unreadable) > 0 || sum.PartialFailure || len(kb.MissingTrials) > 0 {
		sum.KVBench = kb
	}
	return sum, nil
}

// optionVerdict is kvbench's verdict on Option k's figures (o's), from
// what makes a run fail (kvreport's exit status 1) that is of this
// Option: rank results missing, ranks cut short or with failed
// operations, trials missing, or no rank that reached storage.
func optionVerdict(k string, o *MLPerfOption, kb *MLPerfKVBench) *MLPerfVerdict {
	v := &MLPerfVerdict{Verdict: VerdictMeasured}
	if o.PartialFailure {
		v.Why = append(v.Why, fmt.Sprintf("partial_failure: %d rank result(s) missing: %s", len(o.MissingFiles),
			strings.Join(o.MissingFiles, ", ")))
	}
	var why []string
	for _, f := range kb.FailedRanks {
		if f.Option == k {
			v.FailedRanks = append(v.FailedRanks, rankPlace(f.Trial, f.Rank))
			why = append(why, fmt.Sprintf("%s: %d operation(s) failed (%s)", rankPlace(f.Trial, f.Rank), f.FailedOperations, f.Path))
		}
	}
	if len(why) > 0 {
		v.Why = append(v.Why, fmt.Sprintf("%d rank run(s) with failed operations in these figures: %s",
			len(why), strings.Join(why, "; ")))
	}
	why = nil
	for _, i := range kb.IncompleteRanks {
		if i.Option == k {
			v.IncompleteRanks = append(v.IncompleteRanks, rankPlace(i.Trial, i.Rank))
			why = append(why, fmt.Sprintf("%s cut short (%s) (%s)", rankPlace(i.Trial, i.Rank), i.Reason, i.Path))
		}
	}
	if len(why) > 0 {
		v.Why = append(v.Why, fmt.Sprintf("%d rank run(s) cut short, in these figures as if whole: %s", len(why), strings.Join(why, "; ")))
	}
	for _, m := range kb.MissingTrials {
		if m.Option == k {
			w := fmt.Sprintf("trial %d not measured: %s", m.Trial, m.Reason)
			if m.Path != "" {
				w += " (" + m.Path + ")"
			}
			v.Why = append(v.Why, w)
		}
	}
	if slices.Contains(kb.CPUTierOptions, k) {
		v.Why = append(v.Why, "every rank served its working set from the CPU tier: no storage was measured (Rules.md 6.3.4.4)")
	}
	if len(v.Why) > 0 {
		v.Verdict = VerdictNotAMeasurement
	}
	return v
}

// rankPlace names a rank of a trial of an Option.
func rankPlace(trial, rank int) string {
	return fmt.Sprintf("trial %d rank %d", trial, rank)
}

// newRunSummary is a run's summary before its Options: the run's date
// and time (run_datetime: the one its run directory is named by, as
// mlpstorage's and bench/mlperf-option.sh's are, which name the summary
// file after it too; else its earliest document's; else now), its hosts
// and ranks per host; and
// the one kind of documents the run holds ("" for none). A run of more
// than maxMLPerfRanks ranks, or of two kinds, is refused.
func newRunSummary(run *MLPerfRun, now time.Time) (*MLPerfRunSummary, string, error) {
	kinds := map[string]bool{}
	hosts := map[string]bool{}
	var first time.Time
	var dated string // the earliest run directory's date
	for _, rk := range run.Ranks {
		if rk.runDatetime != "" && (dated == "" || rk.runDatetime < dated) {
			dated = rk.runDatetime
		}
		kinds[rk.Kind] = true
		if rk.Host != "" {
			hosts[rk.Host] = true
		}
		if !rk.when.IsZero() && (first.IsZero() || rk.when.Before(first)) {
			first = rk.when
		}
	}
	if run.TotalRanks > maxMLPerfRanks {
		return nil, "", fmt.Errorf("report: %w: %d ranks (a document's rank or ranks): at most %d", ErrIncompatible, run.TotalRanks, maxMLPerfRanks)
	}
	if len(kinds) > 1 {
		return nil, "", fmt.Errorf("report: %w: the run mixes kvreplay results and kv-cache.py documents, whose bandwidths are in GB/s and GiB/s: aggregate each on its own", ErrIncompatible)
	}
	if first.IsZero() {
		first = now
	}
	sum := &MLPerfRunSummary{SchemaVersion: MLPerfSchemaVersion, RunDatetime: cmp.Or(dated, first.UTC().Format(mlperfTimeLayout)),
		TotalRanks: run.TotalRanks, HostCount: max(1, len(hosts)), Options: map[string]*MLPerfOption{}}
	sum.Npernode = max(1, sum.TotalRanks/sum.HostCount)
	var kind string
	for k := range kinds {
		kind = k
	}
	return sum, kind, nil
}

// noAvgThroughput says why a kvreplay run's
// aggregated_avg_throughput_tokens_per_sec is 0.
const noAvgThroughput = "aggregated_avg_throughput_tokens_per_sec is the rule's 0 for a missing key, not a measurement: " +
	"kvreplay documents have no avg_throughput_tokens_per_sec (kv-cache.py's tokens generated over its run's wall time, " +
	"generation included); aggregated_storage_throughput_tokens_per_sec is their tokens over storage I/O time"

// referenceDeviceLatency is what kv-cache.py's device latency is, as
// Rules.md 6.3.4.3 and 6.4.2 define it and have a result state it.
const referenceDeviceLatency = "device latency, as kv-cache.py times it (Rules.md 6.3.4.3, 6.4.2): the storage-tier I/O span, a " +
	"read's np.load span on a page-cache-dropped file (the one host copy of np.load included), a write's fsync span after " +
	"np.save's buffered write; of new objects' writes and of hits' reads (no demotion); storage-tier latency, not hardware " +
	"queue latency"

// kvreplayDeviceLatency is what kvreplay's device latency is (Rules.md
// 6.3.4.3 has a result state it), and how it differs from kv-cache.py's:
// the rule's figures of kvreplay documents are of these spans.
const kvreplayDeviceLatency = "device latency, as kvreplay times it (Rules.md 6.3.4.3 has it stated): a Tier-2 read's is the " +
	"span of the object's read I/Os (O_DIRECT where the file system has it, without opening and closing the object), where " +
	"kv-cache.py's is np.load's span on a page-cache-dropped file (its .npy parse and one host copy included); a Tier-2 " +
	"write's is the object's write I/Os and, under --fsync, their fdatasync, where kv-cache.py's is the fsync span alone, " +
	"after np.save's buffered write; both of new objects' writes and of hits' reads (no demotion), storage-tier latencies, " +
	"not hardware queue latencies; a document without device latency gives its Tier-2 cells' latency from submission instead"

// newMLPerfKVBench is kvbench's block for a run of documents of kind,
// before its Options: the source and its bandwidth unit, the rule (for
// kvreplay's, with why its avg throughput is 0), and what its device
// latency is.
func newMLPerfKVBench(kind string) *MLPerfKVBench {
	kb := &MLPerfKVBench{Source: KindKVReplay, BandwidthUnit: "GB/s (10^9 bytes/s), kvbench's unit", Rule: mlperfRule + "; " + noAvgThroughput,
		DeviceLatency: kvreplayDeviceLatency, Options: map[string]*MLPerfPooled{}}
	if kind == KindReference {
		kb.Source, kb.BandwidthUnit, kb.Rule = KindReference, "kv-cache.py's \"GB/s\": GiB/s (2^30 bytes/s)", mlperfRule
		kb.DeviceLatency = referenceDeviceLatency
	}
	return kb
}

// rankPlaceKey is where a rank's document is placed: its Option, trial
// and rank.
type rankPlaceKey struct {
	option      string
	trial, rank int
}

// rankIndex is the index in run.Ranks of each place's first document:
// looking each slot of a run up in it keeps the rule linear in the
// ranks, where a search of run.Ranks per slot made it quadratic.
func rankIndex(run *MLPerfRun) map[rankPlaceKey]int {
	at := make(map[rankPlaceKey]int, len(run.Ranks))
	for i, rk := range run.Ranks {
		k := rankPlaceKey{rk.Option, rk.Trial, rk.Rank}
		if _, ok := at[k]; !ok {
			at[k] = i
		}
	}
	return at
}

// stoppedBy is ctx's error, wrapped, once it is done; nil before.
func stoppedBy(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report: mlperf: %w", err)
	}
	return nil
}

// aggregateOption applies the rule to one Option over its trials (in
// order), each of ranks 0..TotalRanks-1 (their documents' indexes in at):
// the Option's entry of the summary, and the ranks the rule combined, to
// be pooled; ctx's error once it is done.
func aggregateOption(ctx context.Context, run *MLPerfRun, at map[rankPlaceKey]int, option string, trials []int) (*MLPerfOption, *MLPerfPooled, error) {
	o := &MLPerfOption{Option: option, RankCount: run.TotalRanks, TrialCount: len(trials), MissingFiles: []string{}, CPUTierRanks: []string{}}
	if n, err := strconv.Atoi(option); err == nil {
		o.Option = n
	}
	pooled := &MLPerfPooled{}
	var rule []ruleTrial
	for _, t := range trials {
		ranks, missing, err := trialRanks(ctx, run, at, option, t)
		if err != nil {
			return nil, nil, err
		}
		o.MissingFiles = append(o.MissingFiles, missing...)
		for _, rk := range ranks {
			if rk.CPUTier {
				o.CPUTierRanks = append(o.CPUTierRanks, rk.Path)
			}
		}
		pooled.Ranks = append(pooled.Ranks, ranks...)
		rule = append(rule, ruleTrialOf(ranks))
	}
	o.setRule(rule)
	pooled.rule = rule
	o.PartialFailure = len(o.MissingFiles) > 0
	return o, pooled, nil
}

// trialRanks are ranks 0..TotalRanks-1 of one trial of an Option: the
// documents found (their indexes in at), in rank order, and how
// missing_files names the others (missingName); ctx's error once it is
// done.
func trialRanks(ctx context.Context, run *MLPerfRun, at map[rankPlaceKey]int, option string, trial int) (found []MLPerfRank, missing []string, err error) {
	for r := range run.TotalRanks {
		if err := stoppedBy(ctx); err != nil {
			return nil, nil, err
		}
		i, ok := at[rankPlaceKey{option, trial, r}]
		if !ok {
			missing = append(missing, missingName(run, option, trial, r))
			continue
		}
		found = append(found, run.Ranks[i])
	}
	return found, missing, nil
}

// ruleTrial is one trial of an Option as the rule sees it: its ranks'
// rates summed, and the largest of their device p95s.
type ruleTrial struct {
	read, write, avgTP, storTP float64
	readP95, writeP95          float64
	// found counts the ranks of the trial that left a result: none for a
	// trial the run ran that left none (its sums 0 in the rule's means).
	found int
}

// ruleTrialOf applies the rule to the ranks found of one trial, its sums
// as mlpstorage's sum() adds them (pysum).
func ruleTrialOf(ranks []MLPerfRank) ruleTrial {
	var read, write, avgTP, storTP, readP95, writeP95 []float64
	for _, rk := range ranks {
		read, write = append(read, rk.ReadBandwidthGBps), append(write, rk.WriteBandwidthGBps)
		avgTP, storTP = append(avgTP, rk.AvgThroughputTokensPerSec), append(storTP, rk.StorageThroughputTokensPerSec)
		readP95, writeP95 = append(readP95, rk.DeviceReadP95MS), append(writeP95, rk.DeviceWriteP95MS)
	}
	return ruleTrial{read: pysum(read), write: pysum(write), avgTP: pysum(avgTP), storTP: pysum(storTP),
		readP95: maxOr0(readP95), writeP95: maxOr0(writeP95), found: len(ranks)}
}

// countEmpty counts the trials that left no rank result.
func countEmpty(trials []ruleTrial) int {
	n := 0
	for _, t := range trials {
		if t.found == 0 {
			n++
		}
	}
	return n
}

// pysum is Python 3.12's sum() of floats, which mlpstorage (Python 3.12)
// sums a trial's ranks with: Neumaier's compensated summation (A.
// Neumaier, Rundungsfehleranalyse einiger Verfahren zur Summation
// endlicher Summen, ZAMM 54, 1974), the compensation added at the end
// when it is finite. It differs from a plain loop in the last bits.
func pysum(xs []float64) float64 {
	var s, c float64
	for _, x := range xs {
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			c += (s - t) + x
		} else {
			c += (x - t) + s
		}
		s = t
	}
	if c != 0 && !math.IsInf(c, 0) && !math.IsNaN(c) {
		s += c
	}
	return s
}

// setRule sets o's figures from its trials': the sums averaged (fmean),
// the largest device p95s kept; the p95s stay null without a trial.
func (o *MLPerfOption) setRule(trials []ruleTrial) {
	var read, write, avgTP, storTP, readP95, writeP95 []float64
	for _, t := range trials {
		read, write = append(read, t.read), append(write, t.write)
		avgTP, storTP = append(avgTP, t.avgTP), append(storTP, t.storTP)
		readP95, writeP95 = append(readP95, t.readP95), append(writeP95, t.writeP95)
	}
	o.AggregatedReadBandwidthGBps, o.AggregatedWriteBandwidthGBps = fmean(read), fmean(write)
	o.AggregatedAvgThroughputTokensPerSec, o.AggregatedStorageThroughputTokensPerSec = fmean(avgTP), fmean(storTP)
	if len(trials) > 0 {
		rp, wp := slices.Max(readP95), slices.Max(writeP95)
		o.AggregatedDeviceReadP95MS, o.AggregatedDeviceWriteP95MS = &rp, &wp
	}
}

// fmean is Python's statistics.fmean: the correctly rounded sum of xs
// (fsum) over their number; 0 for none.
func fmean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return fsum(xs) / float64(len(xs))
}

// fsum is Python's math.fsum for finite xs: their sum, rounded once
// (Shewchuk's exact partials: J. R. Shewchuk, Adaptive Precision
// Floating-Point Arithmetic and Fast Robust Geometric Predicates, 1997;
// the last step rounds half to even across partials). Any infinity or
// NaN gives the plain sum, as large as Python's answer or its error.
func fsum(xs []float64) float64 {
	var partials []float64
	for _, x := range xs {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			var s float64
			for _, y := range xs {
				s += y
			}
			return s
		}
		i := 0
		for _, y := range partials {
			if math.Abs(x) < math.Abs(y) {
				x, y = y, x
			}
			hi := x + y
			lo := y - (hi - x)
			if lo != 0 {
				partials[i] = lo
				i++
			}
			x = hi
		}
		partials = partials[:i]
		if x != 0 {
			partials = append(partials, x)
		}
	}
	n := len(partials)
	if n == 0 {
		return 0
	}
	// Add the partials from the largest down, until one is inexact.
	hi, lo := partials[n-1], 0.0
	n--
	for n > 0 {
		x, y := hi, partials[n-1]
		n--
		hi = x + y
		lo = y - (hi - x)
		if lo != 0 {
			break
		}
	}
	// Round half to even: a lost half that the next partial pushes past
	// the halfway point rounds up, not down.
	if n > 0 && (lo < 0 && partials[n-1] < 0 || lo > 0 && partials[n-1] > 0) {
		y := lo * 2
		x := hi + y
		if y == x-hi {
			hi = x
		}
	}
	return hi
}

// maxOr0 is the largest of xs; 0 for none (mlpstorage's trial value).
func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// optionWarnings are what a reader must know of one Option before
// trusting its figures: every rank in the CPU tier, ranks missing, and
// each rank's own (rankWarnings).
func optionWarnings(option string, o *MLPerfOption, p *MLPerfPooled) []string {
	name := optionName(option)
	var w []string
	if allCPUTier(o, p) {
		w = append(w, fmt.Sprintf("%s: every rank served its working set from the CPU tier: no storage "+
			"was measured, and the rules fail such an Option (6.3.4.4)", name))
	}
	if o.PartialFailure {
		w = append(w, fmt.Sprintf("%s: partial failure: %d rank result(s) missing (%s)", name,
			len(o.MissingFiles), strings.Join(o.MissingFiles, ", ")))
	}
	for _, rk := range p.Ranks {
		w = append(w, rankWarnings(name, rk)...)
	}
	for _, im := range p.imbalanced {
		// The report's warning of the same merge, and what it does to
		// the rule's sums.
		w = append(w, fmt.Sprintf("%s: %s: the rule sums each rank's rates over its own run, as if the ranks had loaded "+
			"the storage together", name, im))
	}
	w = append(w, rankCountWarning(name, p.Ranks)...)
	if v := trialSpread(p.rule); v != "" {
		w = append(w, name+": "+v)
	}
	return append(w, docWarnings(name, p)...)
}

// trialSpread is kvreport's VARIES OVER TRIALS warning (spreadWarning,
// the same bound, highCV, said to be kvbench's) of an Option's trials as
// the rule combined them: each figure whose coefficient of variation over the trials is
// above highCV, MLPerf's headline first (the read bandwidth and storage
// throughput the rule averages, the device p95s of which it keeps the
// largest), by their names in the summary; "" when none varies or there
// are fewer than 2 trials. A trial that left no rank result is no
// measurement to vary (its 0s are the rule's; missing_trials names it).
func trialSpread(all []ruleTrial) string {
	trials := slices.DeleteFunc(slices.Clone(all), func(t ruleTrial) bool { return t.found == 0 })
	if len(trials) < 2 {
		return ""
	}
	figures := []struct {
		name     string
		headline bool
		of       func(ruleTrial) float64
	}{
		{"aggregated_read_bandwidth_gbps", true, func(t ruleTrial) float64 { return t.read }},
		{"aggregated_device_read_p95_ms", true, func(t ruleTrial) float64 { return t.readP95 }},
		{"aggregated_device_write_p95_ms", true, func(t ruleTrial) float64 { return t.writeP95 }},
		{"aggregated_storage_throughput_tokens_per_sec", true, func(t ruleTrial) float64 { return t.storTP }},
		{"aggregated_write_bandwidth_gbps", false, func(t ruleTrial) float64 { return t.write }},
		{"aggregated_avg_throughput_tokens_per_sec", false, func(t ruleTrial) float64 { return t.avgTP }},
	}
	var head, more []string
	for _, f := range figures {
		vs := make([]float64, len(trials))
		for i, t := range trials {
			vs[i] = f.of(t)
		}
		st := ComputeStats(vs)
		if !(st.CV > highCV) {
			continue
		}
		what := fmt.Sprintf("%s %.2f", f.name, st.CV)
		if f.headline {
			head = append(head, what)
		} else {
			more = append(more, what)
		}
	}
	if len(head)+len(more) == 0 {
		return ""
	}
	// Said beside the rule's figures, the warning could read as the
	// rule's: the harness averages the trials whatever their spread.
	return spreadWarning(len(trials), head, more) + fmt.Sprintf("; the %.0f%% is kvbench's bound: MLPerf Storage's rules (6.3.4) "+
		"and mlpstorage set none, and accept any spread", 100*highCV)
}

// allCPUTier reports whether every rank found of an Option served its
// working set from the CPU tier (Rules.md 6.3.4.4).
func allCPUTier(o *MLPerfOption, p *MLPerfPooled) bool {
	return len(p.Ranks) > 0 && len(o.CPUTierRanks) == len(p.Ranks)
}

// rankCountWarning warns of an Option whose trials ran different numbers
// of ranks, as their kvreplay documents say (kvreplay --ranks): the rule
// sums each trial's ranks, so its means mix runs of different sizes (the
// smaller trials' ranks are in missing_files as well, a partial failure).
func rankCountWarning(name string, ranks []MLPerfRank) []string {
	declared := map[int]int{} // trial -> its documents' ranks
	for _, rk := range ranks {
		if rk.result != nil && rk.result.Ranks > 0 {
			declared[rk.Trial] = max(declared[rk.Trial], rk.result.Ranks)
		}
	}
	trials := slices.Sorted(maps.Keys(declared))
	if len(trials) < 2 || !slices.ContainsFunc(trials, func(t int) bool { return declared[t] != declared[trials[0]] }) {
		return nil
	}
	var each []string
	for _, t := range trials {
		each = append(each, fmt.Sprintf("trial %d of %d", t, declared[t]))
	}
	return []string{fmt.Sprintf("%s: its trials ran different numbers of ranks, as their documents say (kvreplay --ranks): %s: "+
		"the rule sums each trial's ranks, and its means mix runs of different sizes", name, strings.Join(each, ", "))}
}

// optionScale sets p's size scale, the one of its kvreplay documents,
// and refuses documents of two (ErrScales): the rule would add and
// average bytes of two scales.
func optionScale(p *MLPerfPooled) error {
	var docs []*schema.Result
	var names []string
	for _, rk := range p.Ranks {
		if rk.result != nil {
			docs, names = append(docs, rk.result), append(names, rk.Path)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	err := sameScale(docs, func(i int) string { return names[i] }, "the rule would add and average bytes of two scales: "+
		"replay every rank and trial of an Option at one --size-scale")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	p.SizeScale = docs[0].SizeScale
	return nil
}

// docWarnings are what the kvreplay documents of an Option's ranks say of
// themselves (a scaled run, buffered I/O, a tier that fell back), each
// once, naming the ranks that gave it ("every rank of every trial" when
// all did), and each rank's failed operations: the rule sums their
// figures without a word. A scaled run is said even when its documents
// do not say it.
func docWarnings(name string, p *MLPerfPooled) []string {
	var order []string
	who := map[string][]string{}
	docs := 0
	for _, rk := range p.Ranks {
		r := rk.result
		if r == nil {
			continue
		}
		docs++
		place := fmt.Sprintf("trial %d rank %d", rk.Trial, rk.Rank)
		for i, w := range r.Warnings {
			if slices.Contains(r.Warnings[:i], w) {
				continue // a document's repeat names its rank once
			}
			if who[w] == nil {
				order = append(order, w)
			}
			who[w] = append(who[w], place)
		}
	}
	var out []string
	scaled := false
	for _, w := range order {
		scaled = scaled || strings.Contains(w, "--size-scale")
		if len(who[w]) == docs && docs > 1 {
			out = append(out, fmt.Sprintf("%s, every rank of every trial: %s", name, w))
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: %s", name, strings.Join(who[w], ", "), w))
	}
	if p.SizeScale != 1 && p.SizeScale != 0 && !scaled {
		out = append(out, fmt.Sprintf("%s: SCALED RUN (--size-scale %g): not a full-size measurement", name, p.SizeScale))
	}
	for _, rk := range p.Ranks {
		if r := rk.result; r != nil && r.Errors.Count > 0 {
			out = append(out, fmt.Sprintf("%s trial %d rank %d: %d operations failed: not a measurement (kvreplay stops at the first "+
				"and exits 1), and the rule sums the figures of those that completed (%s)",
				name, rk.Trial, rk.Rank, r.Errors.Count, rk.Path))
		}
	}
	return out
}

// failedRanks are the ranks whose operations failed, in order.
func failedRanks(ranks []MLPerfRank) []MLPerfFailed {
	var out []MLPerfFailed
	for _, rk := range ranks {
		if r := rk.result; r != nil && r.Errors.Count > 0 {
			f := MLPerfFailed{Option: rk.Option, Trial: rk.Trial, Rank: rk.Rank, Path: rk.Path, FailedOperations: r.Errors.Count}
			if len(r.Errors.First) > 0 {
				f.First = r.Errors.First[0]
			}
			out = append(out, f)
		}
	}
	return out
}

// incompleteRanks are the ranks whose run was cut short, in order.
func incompleteRanks(ranks []MLPerfRank) []MLPerfIncomplete {
	var out []MLPerfIncomplete
	for _, rk := range ranks {
		if r := rk.result; r != nil && !r.Complete {
			out = append(out, MLPerfIncomplete{Option: rk.Option, Trial: rk.Trial, Rank: rk.Rank, Path: rk.Path,
				Reason: incompleteReason(r)})
		}
	}
	return out
}

// incompleteReason is why a run was cut short, as its document says.
func incompleteReason(r *schema.Result) string {
	return cmp.Or(r.IncompleteReason, "stopped early")
}

// rankWarnings are what a reader must know of one rank of the Option
// name: an incomplete run, whose figures are in the sums all the same,
// and a device p95 above the request p95.
func rankWarnings(name string, rk MLPerfRank) []string {
	var w []string
	if r := rk.result; r != nil && !r.Complete {
		w = append(w, fmt.Sprintf("%s trial %d rank %d: an incomplete run (%s): its figures are in the sums, "+
			"as mlpstorage takes every result file it finds (%s)", name, rk.Trial, rk.Rank, incompleteReason(r), rk.Path))
	}
	if rk.RequestP95MS > 0 && (rk.DeviceReadP95MS > rk.RequestP95MS || rk.DeviceWriteP95MS > rk.RequestP95MS) {
		w = append(w, fmt.Sprintf("%s trial %d rank %d: a device p95 (read %s ms, write %s ms) above the "+
			"request p95 (%s ms): its requests are not all storage operations (%s)", name, rk.Trial, rk.Rank,
			num(rk.DeviceReadP95MS), num(rk.DeviceWriteP95MS), num(rk.RequestP95MS), rk.Path))
	}
	if len(rk.noDevice) > 0 {
		w = append(w, fmt.Sprintf("%s trial %d rank %d: no %s, though it moved bytes to or from storage: the rule counts "+
			"the missing p95 as 0 (Rules.md 6.3.4.4's default for a CPU-tier rank), so the Option's worst-rank device p95 "+
			"leaves this rank out (%s)", name, rk.Trial, rk.Rank, strings.Join(rk.noDevice, " or "), rk.Path))
	}
	return w
}

// countUnreadable lists each result file that could not be read in its
// Option's missing_files, a partial failure, and returns a warning of
// each.
func countUnreadable(run *MLPerfRun, sum *MLPerfRunSummary) []string {
	var w []string
	for _, u := range run.Unreadable {
		w = append(w, fmt.Sprintf("%s: unreadable, counted missing: %v", u.Path, u.Err))
		if o := sum.Options[u.Option]; o != nil && !slices.Contains(o.MissingFiles, u.Path) {
			o.MissingFiles = append(o.MissingFiles, u.Path)
			o.PartialFailure, sum.PartialFailure = true, true
		}
	}
	return w
}

// missingName is how missing_files names a missing rank: its directory
// (mlpstorage's str(rank_dir)) when the trial's directory is known, else
// its place.
func missingName(run *MLPerfRun, option string, trial, rank int) string {
	for _, u := range run.Unreadable {
		if u.Option == option && u.Trial == trial && u.Rank == rank {
			return u.Path
		}
	}
	if dir := trialPath(run, option, trial); dir != "" {
		return filepath.Join(dir, fmt.Sprintf("rank_%d", rank))
	}
	return fmt.Sprintf("%s trial %d rank %d", optionName(option), trial, rank)
}

// trialPath is the directory of a trial of an Option: the one found, else
// where it would be, beside the Option's other trials or in its option_<O>
// directory (as mlpstorage names a trial it ran: <run>/option_<O>/trial_<T>);
// "" when neither is known.
func trialPath(run *MLPerfRun, option string, trial int) string {
	dirs := run.TrialDirs[option]
	if dir := dirs[trial]; dir != "" {
		return dir
	}
	parent := run.optionDirs[option]
	for _, t := range slices.Sorted(maps.Keys(dirs)) {
		if d := dirs[t]; d != "" {
			parent = filepath.Dir(d)
			break
		}
	}
	if parent == "" {
		return ""
	}
	return filepath.Join(parent, fmt.Sprintf("trial_%d", trial))
}

// trialsFound are the numbers of the trials any Option of run has a
// trial_<T> directory of, in order.
func trialsFound(run *MLPerfRun) []int {
	all := map[int]bool{}
	for _, ts := range run.TrialDirs {
		for t := range ts {
			all[t] = true
		}
	}
	return slices.Sorted(maps.Keys(all))
}

// runTrials are the trials the run ran, in order: every number from the
// lowest found (or 1, for a run numbered from 1; mlpstorage and
// mlperf-option.sh number from 0) to the highest found, or to the last
// its own kvcache_run_summary's trials_per_option says it ran. Each
// Option's rule runs over all of them, as mlpstorage's loop over
// range(trials) does: a trial that left no directory (a failed one
// removed, or one whose results never reached a results directory that
// is not shared) is a trial of missing ranks, not one fewer trial to
// average. A run whose summary says it ran N trials and whose trials
// found all lie below N is numbered from 0, as mlpstorage numbers them:
// with trials 1 and 2 found of 3, trial 0 is the one missing, not a
// trial 3 (only a run with a trial N or above is numbered from 1).
func runTrials(run *MLPerfRun) []int {
	nums := trialsFound(run)
	if len(nums) == 0 {
		return nil
	}
	lo, hi := min(nums[0], 1), nums[len(nums)-1]
	if run.expectTrials > 0 {
		if hi < run.expectTrials {
			lo = 0
		}
		// The run's own summary says how many it ran: the last ones
		// too, which no gap shows.
		hi = max(hi, lo+run.expectTrials-1)
	}
	out := make([]int, 0, hi-lo+1)
	for t := lo; t <= hi; t++ {
		out = append(out, t)
	}
	return out
}

// pool fills p's exact view from the kvreplay documents of its ranks that
// reached storage (a CPU-tier rank has no storage figures to pool): each
// trial's ranks merged (MergeRanks; none when a trial's ranks did not run
// together, checkOverlap), rates averaged over the trials, and
// every Tier-2 operation and request of every rank and trial pooled into
// one latency distribution each.
//
// It checks ctx before each trial (and MergeRanksContext within it).
func pool(ctx context.Context, p *MLPerfPooled, trials []int) error {
	if why := notPooled(p.Ranks); why != "" {
		p.NotPooled = why
		return nil
	}
	var read, write, tok []float64
	var cells []schema.Cell
	var devs [][]schema.DeviceLatency
	var reqs []schema.Latency
	for _, t := range trials {
		if err := stoppedBy(ctx); err != nil {
			return err
		}
		ds, ranks := storageRanks(p.Ranks, t)
		if len(ds) == 0 {
			continue
		}
		// A trial's ranks run together (one launch): merged over a window
		// that spans runs apart, their rates would be of the time between.
		if err := checkOverlap(ds, func(i int) string { return "rank " + strconv.Itoa(ranks[i]) }); err != nil {
			p.NotPooled = fmt.Sprintf("trial %d's ranks do not merge: %v", t, err)
			return nil
		}
		m, err := MergeRanksContext(ctx, ds)
		if stopped(err) {
			return err
		}
		if err != nil {
			p.NotPooled = fmt.Sprintf("trial %d's ranks do not merge: %v", t, err)
			return nil
		}
		tr, err := mergedTrial(t, ranks, m)
		if err != nil {
			return err
		}
		p.Trials = append(p.Trials, tr)
		if w := imbalanceWarning(t, m.RankImbalance); w != "" {
			p.imbalanced = append(p.imbalanced, w)
		}
		read, write, tok = append(read, tr.ReadBandwidthGBps), append(write, tr.WriteBandwidthGBps), append(tok, tr.StorageThroughputTokensPerSec)
		cells = append(cells, m.Cells...)
		devs = append(devs, m.Device)
		reqs = append(reqs, m.Requests.Latency)
	}
	var dev results.Device
	if err := dev.MergeAll(devs...); err != nil {
		return fmt.Errorf("report: mlperf: %w", err)
	}
	f, err := figuresOf(cells, dev.Finalize(), reqs)
	if err != nil {
		return err
	}
	f.ReadBandwidthGBps, f.WriteBandwidthGBps, f.StorageThroughputTokensPerSec = fmean(read), fmean(write), fmean(tok)
	p.Pooled = &f
	return nil
}

// notPooled says why ranks have no exact pooled view (kv-cache.py
// documents, or no rank that reached storage); "" when they have one.
func notPooled(ranks []MLPerfRank) string {
	stored := 0
	for _, rk := range ranks {
		if rk.result == nil {
			return "kv-cache.py documents carry percentiles, not histograms: no exact pooled view exists"
		}
		if !rk.CPUTier {
			stored++
		}
	}
	if stored == 0 {
		return "no rank reached storage"
	}
	return ""
}

// storageRanks are the documents of one trial's ranks that reached
// storage, and their ranks.
func storageRanks(all []MLPerfRank, trial int) (docs []*schema.Result, ranks []int) {
	for _, rk := range all {
		if rk.Trial == trial && !rk.CPUTier {
			docs, ranks = append(docs, rk.result), append(ranks, rk.Rank)
		}
	}
	return docs, ranks
}

// mergedTrial is the figures of one trial's ranks merged into m: its
// bandwidths and throughput over the ranks' common window, its latencies
// pooled, and how far apart the ranks started.
func mergedTrial(trial int, ranks []int, m *schema.Result) (MLPerfTrial, error) {
	f, err := figuresOf(m.Cells, m.Device, []schema.Latency{m.Requests.Latency})
	if err != nil {
		return MLPerfTrial{}, err
	}
	f.ReadBandwidthGBps, f.WriteBandwidthGBps = m.Summary.TierStorageReadBandwidthGBps, m.Summary.TierStorageWriteBandwidthGBps
	f.StorageThroughputTokensPerSec = m.Summary.StorageThroughputTokensPerSec
	tr := MLPerfTrial{Trial: trial, Ranks: ranks, MLPerfFigures: f, WallS: m.WallS}
	if m.RankImbalance != nil {
		tr.StartSpreadS = m.RankImbalance.StartSpreadS
	}
	return tr, nil
}

// figuresOf pools the Tier-2 device latency (tier2Latency) and the
// request latencies reqs, exactly.
func figuresOf(cells []schema.Cell, device []schema.DeviceLatency, reqs []schema.Latency) (MLPerfFigures, error) {
	var f MLPerfFigures
	rl, wl, err := tier2Latency(cells, device)
	if err != nil {
		return f, fmt.Errorf("report: mlperf: %w", err)
	}
	q := results.NewLatency()
	if err := q.MergeAll(reqs); err != nil {
		return f, fmt.Errorf("report: mlperf: request latency: %w", err)
	}
	f.DeviceReadP95MS, f.DeviceWriteP95MS, f.RequestP95MS = rl.P95US/1000, wl.P95US/1000, q.Finalize().P95US/1000
	f.DeviceReads, f.DeviceWrites = rl.Count, wl.Count
	return f, nil
}

// tier2Latency is the Tier-2 read and write latency of a result's cells
// and device figures: the device's, else the cells' latency from
// submission, as the summary takes it (of the phases the reference
// samples: no demotion).
func tier2Latency(cells []schema.Cell, device []schema.DeviceLatency) (read, write schema.Latency, err error) {
	read, err = results.TierOpLatency(cells, schema.TierNVMe, schema.OpRead, false)
	if err != nil {
		return read, write, err
	}
	write, err = results.TierOpLatency(cells, schema.TierNVMe, schema.OpWrite, false)
	if err != nil {
		return read, write, err
	}
	if d, ok, err := results.DeviceOf(device, cells, schema.TierNVMe, schema.OpRead); err != nil {
		return read, write, err
	} else if ok {
		read = d
	}
	if d, ok, err := results.DeviceOf(device, cells, schema.TierNVMe, schema.OpWrite); err != nil {
		return read, write, err
	} else if ok {
		write = d
	}
	return read, write, nil
}

// differences says, with the figures, how the rule's view of an Option
// differs from the pooled one, and why.
func differences(o *MLPerfOption, p *MLPerfPooled, ranks int) []string {
	if p.Pooled == nil {
		return nil
	}
	f := p.Pooled
	var out []string
	rel := func(a, b float64) string {
		if b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%+.1f %%", (a/b-1)*100)
	}
	var spread float64
	for _, t := range p.Trials {
		spread = max(spread, t.StartSpreadS)
	}
	why := fmt.Sprintf("they differ as far as the ranks did not run together (start spread up to %s s)", num(spread))
	if n := countEmpty(p.rule); n > 0 {
		why = fmt.Sprintf("%d of the rule's %d trials left no rank result and add 0 to its mean, which the pooled view, of the "+
			"trials found, leaves out; and %s", n, len(p.rule), why)
	}
	out = append(out, fmt.Sprintf("read bandwidth: the rule adds each rank's bytes over its own run (%s); pooled, every "+
		"rank's bytes over the ranks' common window (%s, the rule's %s): %s", num(o.AggregatedReadBandwidthGBps), num(f.ReadBandwidthGBps),
		rel(o.AggregatedReadBandwidthGBps, f.ReadBandwidthGBps), why))
	if o.AggregatedDeviceReadP95MS != nil {
		out = append(out, fmt.Sprintf("device read p95: the rule takes the worst rank's p95 over %d ranks and %d trials (%s ms); "+
			"pooled, the p95 of all %d Tier-2 reads (%s ms, the rule's %s): the rule's is a worst-client bound",
			ranks, o.TrialCount, num(*o.AggregatedDeviceReadP95MS), f.DeviceReads, num(f.DeviceReadP95MS),
			rel(*o.AggregatedDeviceReadP95MS, f.DeviceReadP95MS)))
		out = append(out, fmt.Sprintf("device write p95: the rule's worst rank %s ms; pooled, the p95 of all %d Tier-2 writes %s ms",
			num(*o.AggregatedDeviceWriteP95MS), f.DeviceWrites, num(f.DeviceWriteP95MS)))
	}
	tokens := fmt.Sprintf("storage throughput: the rule adds each rank's tokens over its own storage time "+
		"(%s tok/s); pooled, all tokens over all ranks' storage time (%s tok/s), a per-client rate: the rule's sum grows "+
		"with the ranks (%d), the pooled rate does not", num(o.AggregatedStorageThroughputTokensPerSec), num(f.StorageThroughputTokensPerSec), ranks)
	// A rank that did not measure it (an open-loop replay) adds a 0 that
	// is no measurement: say so, with its own reason.
	unmeasured, why := 0, ""
	for _, rk := range p.Ranks {
		if rk.result == nil {
			continue
		}
		if w := rk.result.Summary.NotMeasured[results.NotMeasuredRefTokens]; w != "" {
			unmeasured++
			why = cmp.Or(why, w)
		}
	}
	if unmeasured > 0 {
		tokens += fmt.Sprintf("; NOT MEASURED by %d of %d rank documents, which count as 0 in both: %s", unmeasured, len(p.Ranks), why)
	}
	out = append(out, tokens)
	if math.IsNaN(f.RequestP95MS) || f.RequestP95MS == 0 {
		return out
	}
	out = append(out, fmt.Sprintf("request p95 (the whole request's storage latency, pooled): %s ms, beside the device p95s",
		num(f.RequestP95MS)))
	return out
}

// missingTrials are the trials of each Option that are not a measurement:
// a trial_<T> directory with no rank result in it, and a trial number
// missing, one the Option lacks among the run's trials (every Option of a
// run runs the same trials: mlpstorage's and mlperf-option.sh's --trials),
// between them, below the lowest (trials are numbered from 0, as
// mlperf-option.sh does, or from 1), or above the highest up to the
// trials the run's own summary says it ran (runTrials). The rule takes
// such a trial as mlpstorage does, a trial of missing ranks (their
// directories in missing_files, its sums 0 in the mean): the figures are
// mlpstorage's, and not a measurement. A trial directory with no result, when no trial says
// how many ranks the run had (total_ranks 0), is a partial failure, its
// directory in missing_files: with ranks known, missing_files already
// names each of its ranks.
func missingTrials(run *MLPerfRun, sum *MLPerfRunSummary) []MLPerfMissingTrial {
	nums := trialsFound(run)
	if len(nums) == 0 {
		return nil
	}
	// Every Option of the run, an option_<O> directory without a trial
	// too (an Option that left nothing).
	options := map[string]bool{}
	for o := range run.TrialDirs {
		options[o] = true
	}
	for o := range run.optionDirs {
		options[o] = true
	}
	var out []MLPerfMissingTrial
	ran := runTrials(run)
	for _, option := range slices.Sorted(maps.Keys(options)) {
		dirs := run.TrialDirs[option]
		for _, t := range ran {
			dir, ok := dirs[t]
			if !ok {
				m := MLPerfMissingTrial{Option: option, Trial: t, Path: trialPath(run, option, t),
					Reason: fmt.Sprintf("no trial_%d directory or document: the run's trials are %s", t, numberList(nums))}
				switch {
				case t > nums[len(nums)-1]:
					m.Reason += fmt.Sprintf(", and its kvcache_run_summary says it ran %d per Option", run.expectTrials)
				case t < nums[0] && run.expectTrials > 0:
					m.Reason += fmt.Sprintf(", and its kvcache_run_summary says it ran %d per Option, numbered from 0 as mlpstorage "+
						"numbers them", run.expectTrials)
				}
				out = append(out, m)
				continue
			}
			if trialHasResult(run, option, t) {
				continue
			}
			out = append(out, MLPerfMissingTrial{Option: option, Trial: t, Path: dir,
				Reason: "no rank result in its directory: not a measurement"})
			if o := sum.Options[option]; o != nil && run.TotalRanks == 0 {
				o.MissingFiles = append(o.MissingFiles, cmp.Or(dir, fmt.Sprintf("%s trial %d", optionName(option), t)))
				o.PartialFailure, sum.PartialFailure = true, true
			}
		}
	}
	return out
}

// trialHasResult reports whether a trial of an Option has a rank's
// result file, read or not.
func trialHasResult(run *MLPerfRun, option string, trial int) bool {
	return slices.ContainsFunc(run.Ranks, func(rk MLPerfRank) bool { return rk.Option == option && rk.Trial == trial }) ||
		slices.ContainsFunc(run.Unreadable, func(u MLPerfUnreadable) bool { return u.Option == option && u.Trial == trial })
}

// closedTrials is the number of trials Rules.md 6.3.2.1 fixes for a
// CLOSED run of each Option.
const closedTrials = 3

// closedDepartures lists how a run departs from a CLOSED submission
// (Rules.md 6.3.1.1, 6.3.2.1, 6.3.2.2), among what its documents say: an
// Option of Table KVCache-1 missing or another Option, trials other than
// 3, and, per kvreplay rank, a trace whose sidecar records other
// parameters than its Option's, a seed other than 42+rank (mlpstorage's
// wrapper seeds rank R with 42+R), autoscaling, kvtrace's note that
// options beside --mlperf-option made the workload OPEN (Rules.md 6.6.1),
// a --size-scale below 1, or writes not made durable (no --fsync).
// kv-cache.py's documents record no parameters: only the Options and
// trials are checked for them.
func closedDepartures(sum *MLPerfRunSummary, kb *MLPerfKVBench) []string {
	table := map[int]schema.MLPerfOption{}
	for _, o := range schema.MLPerfOptions() {
		table[o.Number] = o
	}
	keys := slices.Sorted(maps.Keys(sum.Options))
	has := map[int]bool{}
	var missing, other []string
	for _, k := range keys {
		n, err := strconv.Atoi(k)
		if _, ok := table[n]; err != nil || !ok {
			other = append(other, optionName(k))
			continue
		}
		has[n] = true
	}
	for _, o := range schema.MLPerfOptions() {
		if !has[o.Number] {
			missing = append(missing, strconv.Itoa(o.Number))
		}
	}
	var out []string
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("the run lacks Option(s) %s: a CLOSED submission runs Options 1, 2 and 3 (Rules.md 6.3.1.1)",
			strings.Join(missing, ", ")))
	}
	if len(other) > 0 {
		out = append(out, fmt.Sprintf("%s: not an Option of Table KVCache-1 (Rules.md 6.3.1.1)", strings.Join(other, ", ")))
	}
	for _, k := range keys {
		if o := sum.Options[k]; o.TrialCount != closedTrials {
			out = append(out, fmt.Sprintf("%s: %d trial(s): a CLOSED run has %d (Rules.md 6.3.2.1); a trial missing after the last "+
				"one found cannot be told from a run of fewer", optionName(k), o.TrialCount, closedTrials))
		}
		p := kb.Options[k]
		if p == nil {
			continue
		}
		n, _ := strconv.Atoi(k)
		want, ok := table[n]
		seen := map[string]bool{}
		for _, rk := range p.Ranks {
			for _, d := range rankDepartures(rk, want, ok) {
				if !seen[d] {
					seen[d] = true
					out = append(out, fmt.Sprintf("%s: %s", optionName(k), d))
				}
			}
		}
	}
	return out
}

// rankDepartures are how one kvreplay rank's replay and trace depart from
// its Option's CLOSED parameters (want, when ok), and kvtrace's verdict in
// the trace's sidecar that options beside --mlperf-option made it OPEN
// (schema.MLPerfOpenWorkload), each naming the rank's document only
// through what differs (so that the ranks that share one are said once).
func rankDepartures(rk MLPerfRank, want schema.MLPerfOption, ok bool) []string {
	r := rk.result
	if r == nil {
		return nil
	}
	var out []string
	if r.SizeScale != 0 && r.SizeScale != 1 {
		out = append(out, fmt.Sprintf("replayed at --size-scale %g: a CLOSED run replays the objects at their size", r.SizeScale))
	}
	if !r.Replay.Fsync && !rk.CPUTier {
		out = append(out, "replayed without --fsync: the rules' device write latency is the write's fsync span "+
			"(Rules.md 6.3.4.3, 6.4.2), which kvreplay measures under --fsync only")
	}
	for _, t := range r.Traces {
		var meta struct {
			Seed   *int64   `json:"seed"`
			Notes  []string `json:"notes"`
			Config *struct {
				Model               string  `json:"model"`
				NumUsers            int     `json:"num_users"`
				Duration            int64   `json:"duration"` // nanoseconds
				GPUMemGB            float64 `json:"gpu_mem_gb"`
				CPUMemGB            float64 `json:"cpu_mem_gb"`
				MaxConcurrentAllocs int     `json:"max_concurrent_allocs"`
				GenerationMode      string  `json:"generation_mode"`
				EnableAutoscaling   bool    `json:"enable_autoscaling"`
			} `json:"config"`
		}
		if len(t.Meta) == 0 || json.Unmarshal(t.Meta, &meta) != nil || meta.Config == nil {
			out = append(out, "a rank's trace has no sidecar recording its parameters: they cannot be checked against Table KVCache-1")
			continue
		}
		// kvtrace's own verdict on options given beside --mlperf-option
		// (RAG, a request trace, a custom --config: what the Option's
		// parameters below do not show).
		for _, n := range meta.Notes {
			if strings.HasSuffix(n, schema.MLPerfOpenWorkload) {
				out = append(out, "its traces' sidecars say: "+n)
			}
		}
		c := meta.Config
		if ok {
			var diff []string
			add := func(name string, got, want any) {
				if fmt.Sprint(got) != fmt.Sprint(want) {
					diff = append(diff, fmt.Sprintf("%s %v (not %v)", name, got, want))
				}
			}
			add("model", c.Model, want.Model)
			add("num-users", c.NumUsers, want.Users)
			add("duration", strconv.FormatFloat(time.Duration(c.Duration).Seconds(), 'g', -1, 64)+" s", strconv.Itoa(want.DurationS)+" s")
			add("gpu-mem-gb", c.GPUMemGB, want.GPUMemGB)
			add("cpu-mem-gb", c.CPUMemGB, want.CPUMemGB)
			add("max-concurrent-allocs", c.MaxConcurrentAllocs, want.MaxConcurrentAllocs)
			add("generation-mode", c.GenerationMode, want.GenerationMode)
			if len(diff) > 0 {
				out = append(out, fmt.Sprintf("traces made with %s: Table KVCache-1 fixes them (Rules.md 6.3.1.1)", strings.Join(diff, ", ")))
			}
		}
		if c.EnableAutoscaling {
			out = append(out, "traces made with --enable-autoscaling, which a CLOSED run must not set (Rules.md 6.3.2.2)")
		}
		if meta.Seed != nil && *meta.Seed != int64(schema.MLPerfSeed+rk.Rank) {
			out = append(out, fmt.Sprintf("rank %d's trace made with --seed %d: a CLOSED run seeds rank R with %d+R (Rules.md 6.3.2.1, mlpstorage's wrapper)",
				rk.Rank, *meta.Seed, schema.MLPerfSeed))
		}
	}
	return out
}
