package report

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// MLPerfSchemaVersion is the schema_version of mlpstorage's
// kvcache_run_summary document that MLPerfRunSummary writes.
const MLPerfSchemaVersion = "1.0"

// MLPerfRunSummary is mlpstorage's kvcache_run_summary document: its field
// names and schema_version 1.0, with each Option's figures combined from
// the per-rank, per-trial result documents exactly as MLPerf Storage's
// Rules.md 6.3.4 says (see AggregateMLPerf). KVBench is kvbench's own
// addition, which mlpstorage's readers ignore: the exact, pooled view of
// the same documents, the per-rank figures the rule combined, and how the
// two views differ.
type MLPerfRunSummary struct {
	SchemaVersion   string                   `json:"schema_version"`
	RunDatetime     string                   `json:"run_datetime"`
	Npernode        int                      `json:"npernode"`
	HostCount       int                      `json:"host_count"`
	TotalRanks      int                      `json:"total_ranks"`
	TrialsPerOption int                      `json:"trials_per_option"`
	Options         map[string]*MLPerfOption `json:"options"`
	PartialFailure  bool                     `json:"partial_failure"`
	KVBench         *MLPerfKVBench           `json:"kvbench,omitempty"`
}

// MLPerfOption is one Option's entry of a run summary (mlpstorage's
// field names). Bandwidths are in the unit of the documents combined:
// kvreplay's GB/s (10^9 bytes), or kv-cache.py's "GB/s", which are GiB/s
// (MLPerfKVBench.BandwidthUnit says which). The device p95s are null when
// the Option had no trial, as mlpstorage's.
type MLPerfOption struct {
	// Option is the Option's number, or its name when the documents did
	// not say (no option_<N> directory, no label naming one).
	Option                                  any      `json:"option"`
	AggregatedReadBandwidthGBps             float64  `json:"aggregated_read_bandwidth_gbps"`
	AggregatedWriteBandwidthGBps            float64  `json:"aggregated_write_bandwidth_gbps"`
	AggregatedAvgThroughputTokensPerSec     float64  `json:"aggregated_avg_throughput_tokens_per_sec"`
	AggregatedStorageThroughputTokensPerSec float64  `json:"aggregated_storage_throughput_tokens_per_sec"`
	AggregatedDeviceReadP95MS               *float64 `json:"aggregated_device_read_p95_ms"`
	AggregatedDeviceWriteP95MS              *float64 `json:"aggregated_device_write_p95_ms"`
	RankCount                               int      `json:"rank_count"`
	TrialCount                              int      `json:"trial_count"`
	PartialFailure                          bool     `json:"partial_failure"`
	MissingFiles                            []string `json:"missing_files"`
	CPUTierRanks                            []string `json:"cpu_tier_ranks"`
	// KVBench is kvbench's verdict on this Option's figures, beside
	// mlpstorage's fields (whose readers ignore it, as they do the
	// summary's kvbench block); absent from mlpstorage's own summaries.
	KVBench *MLPerfVerdict `json:"kvbench,omitempty"`
}

// MLPerfVerdict is kvbench's verdict on whether one Option's figures are
// a measurement. Verdict is VerdictMeasured ("MEASURED") when they are of
// whole runs: no rank result or trial missing, no rank cut short or with
// failed operations, and some rank reached storage; else
// VerdictNotAMeasurement ("NOT A MEASUREMENT"), and kvreport exits 1.
// These are not storage_health's PASS and FAIL: the Option's figures are
// a sum that no latency criterion judged, and a word means one thing
// everywhere (results.VerdictMeasured). MEASURED says nothing of a CLOSED
// submission (kvbench's closed_departures). The rule sums a failed or
// cut-short rank's figures as if whole, and mlpstorage's partial_failure
// is of missing files only: FailedRanks and IncompleteRanks name such
// ranks of this Option ("trial T rank R"), and Why says each reason,
// naming its ranks, trials and files.
type MLPerfVerdict struct {
	Verdict         string   `json:"verdict"`
	FailedRanks     []string `json:"failed_ranks,omitempty"`
	IncompleteRanks []string `json:"incomplete_ranks,omitempty"`
	Why             []string `json:"why,omitempty"`
}

// The values of MLPerfVerdict.Verdict, results' words.
const (
	VerdictMeasured        = results.VerdictMeasured
	VerdictNotAMeasurement = results.VerdictNotAMeasurement
	// VerdictPass and VerdictFail are the names the verdict had when
	// its words were PASS and FAIL (kept for code that names them).
	VerdictPass = VerdictMeasured
	VerdictFail = VerdictNotAMeasurement
)

// MLPerfKVBench is kvbench's view beside the rule's: per Option, the
// figures of each rank the rule combined, the exact pooled figures, and
// the differences in words.
type MLPerfKVBench struct {
	// Source is the kind of documents combined: "kvreplay" or
	// "kv-cache.py".
	Source        string `json:"source"`
	BandwidthUnit string `json:"bandwidth_unit"`
	// Rule states how the rule combines, once.
	Rule string `json:"rule"`
	// DeviceLatency states what the documents' device latency is, which
	// Rules.md 6.3.4.3 has a result state (the rule's worst-client bound,
	// its other property, is in Rule): kv-cache.py's storage-tier span,
	// or what kvreplay times and how it differs from that.
	DeviceLatency string                   `json:"device_latency,omitempty"`
	Options       map[string]*MLPerfPooled `json:"options"`
	// Warnings are what a reader must know before trusting the figures
	// (a rank missing, every rank CPU-tier, a device p95 above the
	// request p95).
	Warnings []string `json:"warnings,omitempty"`
	// IncompleteRanks are the ranks whose run was cut short (a kvreplay
	// result with complete false): the rule sums their figures as it
	// finds them, and partial_failure, which mlpstorage sets for missing
	// files only, does not say so; kvreport fails such a run.
	IncompleteRanks []MLPerfIncomplete `json:"incomplete_ranks,omitempty"`
	// FailedRanks are the ranks whose operations failed (a kvreplay
	// result's errors), complete or not: not a measurement (see
	// FailedOperations); the rule sums the figures of the operations
	// that completed, and partial_failure does not say so; kvreport
	// fails such a run.
	FailedRanks []MLPerfFailed `json:"failed_ranks,omitempty"`
	// MissingTrials are the trials that are not a measurement: a
	// trial_<T> directory with no rank result, or a trial number the
	// Option lacks among the run's (missingTrials). The rule takes the
	// latter as mlpstorage does, a trial of missing ranks (runTrials);
	// partial_failure, of missing rank files only, does not say that a
	// trial directory with no result is not a measurement; kvreport fails
	// such a run.
	MissingTrials []MLPerfMissingTrial `json:"missing_trials,omitempty"`
	// CPUTierOptions are the Options whose every rank served its working
	// set from the CPU tier (all in cpu_tier_ranks): no storage was
	// measured, and Rules.md 6.3.4.4 has the validator fail such an
	// Option; the rule's figures are its zeros, and partial_failure does
	// not say so; kvreport fails such a run.
	CPUTierOptions []string `json:"cpu_tier_options,omitempty"`
	// ClosedDepartures are how the run departs from what Rules.md 6.3
	// fixes for a CLOSED submission, among what kvreport can see: the
	// three Options, 3 trials each, each kvreplay rank's trace made with
	// its Option's Table KVCache-1 parameters, seed 42+rank, no
	// autoscaling and no other option that kvtrace found to change the
	// workload (its sidecar's note), replayed at full size. None found
	// does not make a run
	// CLOSED (its file systems, delays and preconditioning are not in
	// its documents); one found makes it an OPEN run, which the figures
	// still describe.
	ClosedDepartures []string `json:"closed_departures,omitempty"`
	// Beside are the run summaries shown beside this one: mlpstorage's
	// kvcache_run_summary documents given, and the aggregation of
	// kv-cache.py documents given with kvreplay's (by name).
	Beside map[string]*MLPerfRunSummary `json:"beside,omitempty"`
}

// MLPerfIncomplete is a rank of a trial of an Option whose run was cut
// short, its result file, and why it was (its incomplete_reason).
type MLPerfIncomplete struct {
	Option string `json:"option"`
	Trial  int    `json:"trial"`
	Rank   int    `json:"rank"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// String names the rank, its file and why its run was cut short.
func (i MLPerfIncomplete) String() string {
	return fmt.Sprintf("%s trial %d rank %d was cut short (%s): %s", optionName(i.Option), i.Trial, i.Rank, i.Reason, i.Path)
}

// MLPerfFailed is a rank of a trial of an Option whose operations
// failed, its result file, how many failed and the first's error.
type MLPerfFailed struct {
	Option           string `json:"option"`
	Trial            int    `json:"trial"`
	Rank             int    `json:"rank"`
	Path             string `json:"path"`
	FailedOperations int64  `json:"failed_operations"`
	First            string `json:"first,omitempty"`
}

// String names the rank, what failed and its file.
func (f MLPerfFailed) String() string {
	s := fmt.Sprintf("%s trial %d rank %d: %d operation(s) failed", optionName(f.Option), f.Trial, f.Rank, f.FailedOperations)
	if f.First != "" {
		s += ", the first: " + f.First
	}
	return s + ": " + f.Path
}

// MLPerfMissingTrial is a trial of an Option that is not a measurement,
// its directory ("" when unknown), and why.
type MLPerfMissingTrial struct {
	Option string `json:"option"`
	Trial  int    `json:"trial"`
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

// String names the trial, why it is not a measurement, and its directory.
func (m MLPerfMissingTrial) String() string {
	s := fmt.Sprintf("%s trial %d: %s", optionName(m.Option), m.Trial, m.Reason)
	if m.Path != "" {
		s += " (" + m.Path + ")"
	}
	return s
}

// MLPerfPooled is one Option seen both ways: Ranks are the per-rank
// figures the rule combined; the rest is kvbench's exact view of the same
// documents: each trial's ranks merged exactly (report.MergeRanks), rates
// averaged over trials, and latency percentiles of every operation of
// every rank and trial pooled into one distribution. Pooled figures are
// absent (NotPooled says why) for documents without histograms
// (kv-cache.py's).
type MLPerfPooled struct {
	// SizeScale is the kvreplay documents' --size-scale (one for every
	// rank and trial of an Option): below 1, not a full-size
	// measurement. Absent for kv-cache.py's documents.
	SizeScale float64        `json:"size_scale,omitempty"`
	Ranks     []MLPerfRank   `json:"ranks"`
	Trials    []MLPerfTrial  `json:"trials,omitempty"`
	Pooled    *MLPerfFigures `json:"pooled,omitempty"`
	// NotPooled says why there is no pooled view.
	NotPooled   string   `json:"not_pooled,omitempty"`
	Differences []string `json:"differences,omitempty"`

	// imbalanced are the RANK IMBALANCE warnings of its trials' merges.
	imbalanced []string
	// rule are its trials as the rule combined them, in order: the
	// figures whose spread over trials is checked (trialSpread).
	rule []ruleTrial
}

// MLPerfFigures are the scored figures of one view (the headline of Rules
// 6.3.4.5, and the request latency beside the device latency).
type MLPerfFigures struct {
	ReadBandwidthGBps             float64 `json:"read_bandwidth_gbps"`
	WriteBandwidthGBps            float64 `json:"write_bandwidth_gbps"`
	StorageThroughputTokensPerSec float64 `json:"storage_throughput_tokens_per_sec"`
	DeviceReadP95MS               float64 `json:"device_read_p95_ms"`
	DeviceWriteP95MS              float64 `json:"device_write_p95_ms"`
	RequestP95MS                  float64 `json:"request_p95_ms"`
	DeviceReads                   int64   `json:"device_reads,omitempty"`
	DeviceWrites                  int64   `json:"device_writes,omitempty"`
}

// MLPerfTrial is one trial's ranks merged exactly.
type MLPerfTrial struct {
	Trial int   `json:"trial"`
	Ranks []int `json:"ranks"`
	MLPerfFigures
	// StartSpreadS is how far apart the ranks started: the merged
	// bandwidth is over their common window.
	StartSpreadS float64 `json:"start_spread_s"`
	WallS        float64 `json:"wall_s"`
}

// MLPerfRank is what one rank's document of one trial gives the rule
// (the keys mlpstorage reads, or kvreplay's figures of the same names).
type MLPerfRank struct {
	Path                          string  `json:"path"`
	Kind                          string  `json:"kind"`
	Option                        string  `json:"option"`
	Trial                         int     `json:"trial"`
	Rank                          int     `json:"rank"`
	Host                          string  `json:"host,omitempty"`
	ReadBandwidthGBps             float64 `json:"read_bandwidth_gbps"`
	WriteBandwidthGBps            float64 `json:"write_bandwidth_gbps"`
	AvgThroughputTokensPerSec     float64 `json:"avg_throughput_tokens_per_sec"`
	StorageThroughputTokensPerSec float64 `json:"storage_throughput_tokens_per_sec"`
	DeviceReadP95MS               float64 `json:"device_read_p95_ms"`
	DeviceWriteP95MS              float64 `json:"device_write_p95_ms"`
	RequestP95MS                  float64 `json:"request_p95_ms"`
	// CPUTier is set for a rank whose working set never reached storage
	// (kv-cache.py's storage_entries 0; kvreplay: no Tier-2 read or
	// write): it contributes zeros and is listed in cpu_tier_ranks.
	CPUTier bool `json:"cpu_tier"`

	result *schema.Result
	when   time.Time
	// runDatetime is the run's date and time its run directory names
	// (runDatetime), "" when it names none.
	runDatetime string
	ranks       int // the run's ranks, as the document says (kvreplay --ranks)
	// noDevice are the device p95 keys a kv-cache.py document lacks
	// though its rank moved bytes that way to storage: the rule counts
	// each as 0.
	noDevice []string
}

// MLPerfRun is the per-rank documents of one run, placed by Option,
// trial and rank, as LoadMLPerf finds them.
type MLPerfRun struct {
	// Ranks are the documents read.
	Ranks []MLPerfRank
	// TotalRanks is the run's number of ranks: the largest of the
	// documents' own (kvreplay --ranks), the rank_<N> directories and
	// ranks found.
	TotalRanks int
	// TrialDirs are, per Option, the trials found (a trial_<T> directory
	// with no result in it counts) and where they are ("" when a trial
	// was known only from its documents).
	TrialDirs map[string]map[int]string
	// Unreadable are result files that could not be read (listed in
	// missing_files, as mlpstorage lists a file it failed to parse).
	Unreadable []MLPerfUnreadable
	// Summaries are mlpstorage kvcache_run_summary documents given
	// beside, to be compared (their path -> document).
	Summaries map[string]*MLPerfRunSummary
	// rankDirs is one more than the largest rank_<N> directory found.
	rankDirs int
	// expectTrials is the trials per Option the run's own summary says
	// (a kvcache_run_summary at the top of its directory, mlpstorage's
	// from its configuration); 0 when none says.
	expectTrials int
	// optionDirs are the option_<O> directories found (O -> path), with
	// a trial or not.
	optionDirs map[string]string
}

// ByKind splits a run whose documents are of several kinds (kvreplay
// results beside kv-cache.py documents) into one run per kind, which
// aggregate apart (their GB and GiB do not add): the first is the
// kvreplay documents' when there are any, and keeps the trials without a
// document and the unreadable files; the others are to be shown beside
// it. A run of one kind is returned alone, as it is.
func (run *MLPerfRun) ByKind() []*MLPerfRun {
	kinds := map[string]bool{}
	for _, rk := range run.Ranks {
		kinds[rk.Kind] = true
	}
	if len(kinds) < 2 {
		return []*MLPerfRun{run}
	}
	order := []string{KindKVReplay, KindReference}
	var out []*MLPerfRun
	for i, k := range order {
		sub := newMLPerfRun()
		if i == 0 {
			sub.Unreadable, sub.rankDirs, sub.TotalRanks = run.Unreadable, run.rankDirs, run.rankDirs
			sub.expectTrials = run.expectTrials
			// An Option that left nothing (no trial: of no kind).
			for o, dir := range run.optionDirs {
				if run.TrialDirs[o] == nil {
					sub.optionDirs[o] = dir
				}
			}
			for o, ts := range run.TrialDirs {
				for t, dir := range ts {
					if !slices.ContainsFunc(run.Ranks, func(rk MLPerfRank) bool { return rk.Option == o && rk.Trial == t }) {
						addTrialDir(sub, o, t, dir)
					}
				}
			}
		}
		for _, rk := range run.Ranks {
			if rk.Kind != k {
				continue
			}
			sub.Ranks = append(sub.Ranks, rk)
			sub.TotalRanks = max(sub.TotalRanks, rk.ranks, rk.Rank+1)
			addTrialDir(sub, rk.Option, rk.Trial, run.TrialDirs[rk.Option][rk.Trial])
		}
		if len(sub.Ranks) > 0 || i == 0 && (len(sub.TrialDirs) > 0 || len(sub.Unreadable) > 0) {
			out = append(out, sub)
		}
	}
	return out
}

// newMLPerfRun is an empty run, its maps made.
func newMLPerfRun() *MLPerfRun {
	return &MLPerfRun{TrialDirs: map[string]map[int]string{}, Summaries: map[string]*MLPerfRunSummary{}, optionDirs: map[string]string{}}
}

// addTrialDir records a trial of an Option and its directory ("" when
// unknown), keeping a known directory over an unknown one.
func addTrialDir(run *MLPerfRun, option string, trial int, dir string) {
	if run.TrialDirs[option] == nil {
		run.TrialDirs[option] = map[int]string{}
	}
	if old, ok := run.TrialDirs[option][trial]; !ok || old == "" {
		run.TrialDirs[option][trial] = dir
	}
}

// MLPerfUnreadable is a result file of a rank that could not be read.
type MLPerfUnreadable struct {
	Option string
	Trial  int
	Rank   int
	Path   string
	Err    error
}

// optionName names an Option for people: "option 1", or its name.
func optionName(option string) string {
	if _, err := strconv.Atoi(option); err == nil {
		return "option " + option
	}
	return "option " + strconv.Quote(option)
}

// MLPerfSummaryName is the file name mlpstorage gives a run summary.
func MLPerfSummaryName(s *MLPerfRunSummary) string {
	return "kvcache_run_summary_" + s.RunDatetime + ".json"
}
