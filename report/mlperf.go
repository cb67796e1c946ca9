package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// MLPerfSchemaVersion is the schema_version of mlpstorage's
// kvcache_run_summary document that MLPerfRunSummary writes.
const MLPerfSchemaVersion = "1.0"

// maxMLPerfRanks bounds a run's ranks: each missing one is named.
const maxMLPerfRanks = 1 << 16

// mlperfTimeLayout is how mlpstorage names a run's date and time
// (run_datetime, and the summary's file name).
const mlperfTimeLayout = "20060102_150405"

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
}

// MLPerfKVBench is kvbench's view beside the rule's: per Option, the
// figures of each rank the rule combined, the exact pooled figures, and
// the differences in words.
type MLPerfKVBench struct {
	// Source is the kind of documents combined: "kvreplay" or
	// "kv-cache.py".
	Source        string `json:"source"`
	BandwidthUnit string `json:"bandwidth_unit"`
	// Rule states how the rule combines, once.
	Rule    string                   `json:"rule"`
	Options map[string]*MLPerfPooled `json:"options"`
	// Warnings are what a reader must know before trusting the figures
	// (a rank missing, every rank CPU-tier, a device p95 above the
	// request p95).
	Warnings []string `json:"warnings,omitempty"`
	// Beside are the run summaries shown beside this one: mlpstorage's
	// kvcache_run_summary documents given, and the aggregation of
	// kv-cache.py documents given with kvreplay's (by name).
	Beside map[string]*MLPerfRunSummary `json:"beside,omitempty"`
}

// MLPerfPooled is one Option seen both ways: Ranks are the per-rank
// figures the rule combined; the rest is kvbench's exact view of the same
// documents: each trial's ranks merged exactly (report.MergeRanks), rates
// averaged over trials, and latency percentiles of every operation of
// every rank and trial pooled into one distribution. Pooled figures are
// absent (NotPooled says why) for documents without histograms
// (kv-cache.py's).
type MLPerfPooled struct {
	Ranks  []MLPerfRank   `json:"ranks"`
	Trials []MLPerfTrial  `json:"trials,omitempty"`
	Pooled *MLPerfFigures `json:"pooled,omitempty"`
	// NotPooled says why there is no pooled view.
	NotPooled   string   `json:"not_pooled,omitempty"`
	Differences []string `json:"differences,omitempty"`
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
	ranks  int // the run's ranks, as the document says (kvreplay --ranks)
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
		sub := &MLPerfRun{TrialDirs: map[string]map[int]string{}, Summaries: map[string]*MLPerfRunSummary{}}
		if i == 0 {
			sub.Unreadable, sub.rankDirs, sub.TotalRanks = run.Unreadable, run.rankDirs, run.rankDirs
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

var (
	optionDir = regexp.MustCompile(`^option_?(\d{1,6})$`)
	trialDir  = regexp.MustCompile(`^trial_?(\d{1,6})$`)
	rankDir   = regexp.MustCompile(`^rank_?(\d{1,6})$`)
)

// placeOf reads the option_<O>, trial_<T> and rank_<N> directories of a
// path, the layout mlpstorage and kvbench's Option runner write
// (.../option_<O>/trial_<T>/rank_<N>/result.json); -1 for what is absent.
func placeOf(path string) (option string, trial, rank int) {
	trial, rank = -1, -1
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(path)), "/") {
		part = strings.TrimSuffix(part, ".json") // trial_0/rank_1.json too
		if m := optionDir.FindStringSubmatch(part); m != nil {
			option = m[1]
		} else if m := trialDir.FindStringSubmatch(part); m != nil {
			trial, _ = strconv.Atoi(m[1])
		} else if m := rankDir.FindStringSubmatch(part); m != nil {
			rank, _ = strconv.Atoi(m[1])
		}
	}
	return option, trial, rank
}

// labelOption is the Option a label names ("option_1", "option-2",
// "opt3"), else the label itself.
func labelOption(label string) string {
	l := strings.ToLower(label)
	for _, p := range []string{"option", "opt"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			rest = strings.TrimLeft(rest, "_- ")
			if _, err := strconv.Atoi(rest); err == nil && rest != "" {
				return rest
			}
		}
	}
	return label
}

// LoadMLPerf reads the per-rank documents of a run for AggregateMLPerf.
// Each path is a directory (walked for .../trial_<T>/rank_<N>/*.json, under
// option_<O> directories or not; in each rank directory the first JSON
// file by name that kvreport reads is the rank's result, as mlpstorage
// takes one), a file, a glob, or "-" for documents on stdin. A document's
// Option, trial and rank come from its path's option_<O>, trial_<T> and
// rank_<N> directories, else from the document (kvreplay --trial and
// --rank; the Option from a label that names one, such as option_1, else
// the label). A kvcache_run_summary document is kept to be compared
// beside. In a walked directory a result file that cannot be read is
// recorded as missing (mlpstorage's rule); a file named on the command
// line that cannot be read is an error.
func LoadMLPerf(paths []string, stdin io.Reader) (*MLPerfRun, error) {
	run := &MLPerfRun{TrialDirs: map[string]map[int]string{}, Summaries: map[string]*MLPerfRunSummary{}}
	addTrial := func(option string, trial int, dir string) { addTrialDir(run, option, trial, dir) }
	add := func(name string, raw []byte, walked bool) error {
		if s, ok, err := decodeRunSummary(raw); ok {
			if err != nil {
				return fmt.Errorf("report: %s: %w", name, err)
			}
			run.Summaries[name] = s
			return nil
		}
		docs, err := decodeStream(name, strings.NewReader(string(raw)))
		if err != nil {
			if walked {
				o, t, r := placeOf(name)
				run.Unreadable = append(run.Unreadable, MLPerfUnreadable{Option: o, Trial: t, Rank: r, Path: name, Err: err})
				return nil
			}
			return err
		}
		for _, d := range docs {
			rk, err := rankFigures(d)
			if err != nil {
				return err
			}
			o, t, r := placeOf(name)
			if o == "" && labelOption(d.Label) != d.Label {
				o = labelOption(d.Label)
			}
			if o == "" && d.Result != nil {
				o = traceOption(d.Result)
			}
			if o == "" {
				o = d.Label
			}
			if o == "" {
				o = "unknown"
			}
			if t < 0 {
				t = d.Trial
			}
			if r < 0 {
				r = d.Rank
			}
			rk.Option, rk.Trial, rk.Rank = o, t, r
			if rk.when.IsZero() && name != "-" {
				if st, err := os.Stat(name); err == nil {
					rk.when = st.ModTime()
				}
			}
			run.Ranks = append(run.Ranks, rk)
			addTrial(o, t, "")
			if d.Result != nil && d.Kind == KindKVReplay {
				run.TotalRanks = max(run.TotalRanks, d.Result.Ranks)
			}
			run.TotalRanks = max(run.TotalRanks, r+1)
		}
		return nil
	}
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				return nil, errors.New("report: -: no standard input")
			}
			raw, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("report: -: %w", err)
			}
			if err := add("-", raw, false); err != nil {
				return nil, err
			}
			continue
		}
		names, err := Expand(p)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			st, err := os.Stat(name)
			if err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			if !st.IsDir() {
				raw, err := os.ReadFile(name)
				if err != nil {
					return nil, fmt.Errorf("report: %w", err)
				}
				if err := add(name, raw, false); err != nil {
					return nil, err
				}
				continue
			}
			found := 0
			err = filepath.WalkDir(name, func(path string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !e.IsDir() {
					if filepath.Dir(path) == filepath.Clean(name) && strings.HasSuffix(path, ".json") {
						// A run summary at the top of a results directory.
						raw, err := os.ReadFile(path)
						if err != nil {
							return err
						}
						if s, ok, err := decodeRunSummary(raw); ok && err == nil {
							run.Summaries[path] = s
						}
					}
					return nil
				}
				base := filepath.Base(path)
				if trialDir.MatchString(base) {
					o, t, _ := placeOf(path)
					addTrial(o, t, path)
					return nil
				}
				if !rankDir.MatchString(base) {
					return nil
				}
				o, t, r := placeOf(path)
				if t >= 0 {
					addTrial(o, t, filepath.Dir(path))
				}
				run.TotalRanks = max(run.TotalRanks, r+1)
				run.rankDirs = max(run.rankDirs, r+1)
				files, _ := filepath.Glob(filepath.Join(path, "*.json"))
				slices.Sort(files)
				for _, f := range files {
					raw, err := os.ReadFile(f)
					if err != nil {
						run.Unreadable = append(run.Unreadable, MLPerfUnreadable{Option: o, Trial: t, Rank: r, Path: f, Err: err})
						break
					}
					if _, ok, _ := decodeRunSummary(raw); ok {
						continue
					}
					n := len(run.Ranks) + len(run.Unreadable)
					if err := add(f, raw, true); err != nil {
						return err
					}
					if len(run.Ranks)+len(run.Unreadable) > n {
						found++
						break // the rank's one result
					}
				}
				return filepath.SkipDir
			})
			if err != nil {
				return nil, fmt.Errorf("report: %s: %w", name, err)
			}
			if found == 0 && len(run.TrialDirs) == 0 && len(run.Summaries) == 0 {
				return nil, fmt.Errorf("report: %s: no .../trial_<T>/rank_<N>/*.json result and no kvcache_run_summary in it", name)
			}
		}
	}
	if len(run.Ranks) == 0 && len(run.Summaries) == 0 && len(run.Unreadable) == 0 && len(run.TrialDirs) == 0 {
		return nil, errors.New("report: no per-rank result document and no kvcache_run_summary given")
	}
	return run, nil
}

// decodeRunSummary decodes an mlpstorage kvcache_run_summary document; ok
// is false for any other document.
func decodeRunSummary(raw []byte) (s *MLPerfRunSummary, ok bool, err error) {
	var probe struct {
		SchemaVersion *string         `json:"schema_version"`
		Options       json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.SchemaVersion == nil || probe.Options == nil {
		return nil, false, nil
	}
	s = &MLPerfRunSummary{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, true, fmt.Errorf("a kvcache_run_summary document: %w", err)
	}
	if major, _, _ := strings.Cut(s.SchemaVersion, "."); major != "1" {
		return nil, true, fmt.Errorf("a kvcache_run_summary of schema_version %q: this kvreport reads 1.x", s.SchemaVersion)
	}
	return s, true, nil
}

// rankFigures takes from a document what the rule reads: for a
// kv-cache.py document, mlpstorage's keys (summary.cache_stats.
// tier_storage_{read,write}_bandwidth_gbps, storage_{read,write}_device_
// p95_ms and storage_entries; summary.avg_throughput_tokens_per_sec and
// storage_throughput_tokens_per_sec), a missing key as 0.0 as mlpstorage
// reads it; for a kvreplay document, its summary's figures of the same
// names (decimal GB/s), the device p95s recomputed from its Tier-2 cells
// when it predates them. kvreplay documents have no
// avg_throughput_tokens_per_sec (0, as a missing key).
func rankFigures(d *Doc) (MLPerfRank, error) {
	rk := MLPerfRank{Path: d.Path, Kind: d.Kind, ranks: 1}
	switch d.Kind {
	case KindReference:
		s, _ := d.Reference["summary"].(map[string]any)
		cs, _ := s["cache_stats"].(map[string]any)
		f := func(m map[string]any, k string) float64 {
			v, _ := m[k].(float64)
			return v
		}
		rk.ReadBandwidthGBps, rk.WriteBandwidthGBps = f(cs, "tier_storage_read_bandwidth_gbps"), f(cs, "tier_storage_write_bandwidth_gbps")
		rk.AvgThroughputTokensPerSec, rk.StorageThroughputTokensPerSec = f(s, "avg_throughput_tokens_per_sec"), f(s, "storage_throughput_tokens_per_sec")
		rk.DeviceReadP95MS, rk.DeviceWriteP95MS = f(cs, "storage_read_device_p95_ms"), f(cs, "storage_write_device_p95_ms")
		if l, ok := s["storage_io_latency_ms"].(map[string]any); ok {
			rk.RequestP95MS = f(l, "p95")
		}
		if v, ok := cs["storage_entries"].(float64); ok && v == 0 {
			rk.CPUTier = true
		}
	case KindKVReplay:
		r := d.Result
		s := r.Summary
		rk.result, rk.when, rk.Host, rk.ranks = r, r.Started, r.Host.Hostname, r.Ranks
		rk.ReadBandwidthGBps, rk.WriteBandwidthGBps = s.TierStorageReadBandwidthGBps, s.TierStorageWriteBandwidthGBps
		rk.StorageThroughputTokensPerSec = s.StorageThroughputTokensPerSec
		rk.DeviceReadP95MS, rk.DeviceWriteP95MS = s.StorageReadDeviceP95MS, s.StorageWriteDeviceP95MS
		rk.RequestP95MS = s.StorageIOLatencyMS.P95
		var storageOps int64
		inMemory := true
		for _, t := range r.Tiers {
			if t.Tier == schema.TierNVMe.String() {
				storageOps += t.ReadOps + t.WriteOps
				for _, b := range strings.Split(t.Backend, ",") {
					inMemory = inMemory && memoryBackend(b)
				}
			}
		}
		// A rank whose Tier-2 never ran, or ran in memory (kvreplay
		// --tier-map Tier-2=ram, or --fit's), kept its working set in RAM:
		// it reached no storage, and its storage figures are zeros.
		rk.CPUTier = storageOps == 0 || inMemory
		if rk.CPUTier {
			rk.ReadBandwidthGBps, rk.WriteBandwidthGBps, rk.DeviceReadP95MS, rk.DeviceWriteP95MS = 0, 0, 0, 0
			break
		}
		if rk.DeviceReadP95MS == 0 || rk.DeviceWriteP95MS == 0 {
			// A document written before the device figures: the same
			// distributions, from its cells.
			rl, err := results.TierOpLatency(r.Cells, schema.TierNVMe, schema.OpRead, false)
			if err != nil {
				return rk, fmt.Errorf("report: %s: %w", d.Path, err)
			}
			wl, err := results.TierOpLatency(r.Cells, schema.TierNVMe, schema.OpWrite, false)
			if err != nil {
				return rk, fmt.Errorf("report: %s: %w", d.Path, err)
			}
			if x, ok := results.DeviceOf(r.Device, schema.TierNVMe, schema.OpRead); ok {
				rl = x
			}
			if x, ok := results.DeviceOf(r.Device, schema.TierNVMe, schema.OpWrite); ok {
				wl = x
			}
			if rk.DeviceReadP95MS == 0 {
				rk.DeviceReadP95MS = rl.P95US / 1000
			}
			if rk.DeviceWriteP95MS == 0 {
				rk.DeviceWriteP95MS = wl.P95US / 1000
			}
		}
	default:
		return rk, fmt.Errorf("report: %s: a %s document is a simulation, not a measurement: the MLPerf aggregation takes kvreplay results and kv-cache.py --output documents", d.Path, d.Kind)
	}
	return rk, nil
}

// memoryBackend reports whether a kvreplay backend is memory, not
// storage: a Tier-2 on it keeps the working set in memory.
func memoryBackend(name string) bool {
	switch name {
	case "ram", "gpu", "null":
		return true
	}
	return false
}

// fmean is Python's statistics.fmean: the mean of xs; 0 for none.
func fmean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// maxOr0 is the largest of xs; 0 for none (mlpstorage's trial value).
func maxOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return slices.Max(xs)
}

// mlperfRule states, once, how AggregateMLPerf combines.
const mlperfRule = "MLPerf Storage Rules.md 6.3.4, as mlpstorage computes it: within each trial the ranks' storage read " +
	"and write bandwidths and storage throughputs are summed; the trials' sums are averaged (fmean); the device read " +
	"and write p95 are the largest of every rank's and trial's p95 (a worst-client bound, not a pooled percentile); a " +
	"missing rank contributes nothing and is listed in missing_files; a rank whose working set never reached storage " +
	"contributes 0 and is listed in cpu_tier_ranks"

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
// one Option must be of one kind (kvreplay's GB/s and kv-cache.py's GiB/s
// do not add). Beside the rule's figures, KVBench holds the exact pooled
// view of kvreplay documents and how the views differ.
func AggregateMLPerf(run *MLPerfRun, now time.Time) (*MLPerfRunSummary, error) {
	sum := &MLPerfRunSummary{SchemaVersion: MLPerfSchemaVersion, TotalRanks: run.TotalRanks, Options: map[string]*MLPerfOption{}}
	kinds := map[string]bool{}
	hosts := map[string]bool{}
	var first time.Time
	for _, rk := range run.Ranks {
		kinds[rk.Kind] = true
		if rk.Host != "" {
			hosts[rk.Host] = true
		}
		if !rk.when.IsZero() && (first.IsZero() || rk.when.Before(first)) {
			first = rk.when
		}
	}
	if run.TotalRanks > maxMLPerfRanks {
		return nil, fmt.Errorf("report: %w: %d ranks (a document's rank or ranks): at most %d", ErrIncompatible, run.TotalRanks, maxMLPerfRanks)
	}
	if len(kinds) > 1 {
		return nil, fmt.Errorf("report: %w: the run mixes kvreplay results and kv-cache.py documents, whose bandwidths are in GB/s and GiB/s: aggregate each on its own", ErrIncompatible)
	}
	if first.IsZero() {
		first = now
	}
	sum.RunDatetime = first.UTC().Format(mlperfTimeLayout)
	sum.HostCount = max(1, len(hosts))
	sum.Npernode = max(1, sum.TotalRanks/sum.HostCount)
	kb := &MLPerfKVBench{Source: KindKVReplay, BandwidthUnit: "GB/s (10^9 bytes/s), kvbench's unit", Rule: mlperfRule,
		Options: map[string]*MLPerfPooled{}}
	if kinds[KindReference] {
		kb.Source, kb.BandwidthUnit = KindReference, "kv-cache.py's \"GB/s\": GiB/s (2^30 bytes/s)"
	}
	for _, option := range slices.Sorted(maps.Keys(run.TrialDirs)) {
		trials := run.TrialDirs[option]
		ids := make([]int, 0, len(trials))
		for t := range trials {
			ids = append(ids, t)
		}
		slices.Sort(ids)
		o := &MLPerfOption{Option: option, RankCount: run.TotalRanks, TrialCount: len(ids), MissingFiles: []string{}, CPUTierRanks: []string{}}
		if n, err := strconv.Atoi(option); err == nil {
			o.Option = n
		}
		pooled := &MLPerfPooled{}
		var readBW, writeBW, avgTP, storTP, readP95, writeP95 []float64
		for _, t := range ids {
			var tr, tw, ta, ts, tpr, tpw []float64
			for r := range run.TotalRanks {
				i := slices.IndexFunc(run.Ranks, func(rk MLPerfRank) bool { return rk.Option == option && rk.Trial == t && rk.Rank == r })
				if i < 0 {
					o.MissingFiles = append(o.MissingFiles, missingName(run, option, t, r))
					continue
				}
				rk := run.Ranks[i]
				pooled.Ranks = append(pooled.Ranks, rk)
				if rk.CPUTier {
					o.CPUTierRanks = append(o.CPUTierRanks, rk.Path)
				}
				tr, tw = append(tr, rk.ReadBandwidthGBps), append(tw, rk.WriteBandwidthGBps)
				ta, ts = append(ta, rk.AvgThroughputTokensPerSec), append(ts, rk.StorageThroughputTokensPerSec)
				tpr, tpw = append(tpr, rk.DeviceReadP95MS), append(tpw, rk.DeviceWriteP95MS)
			}
			readBW, writeBW = append(readBW, sumOf(tr)), append(writeBW, sumOf(tw))
			avgTP, storTP = append(avgTP, sumOf(ta)), append(storTP, sumOf(ts))
			readP95, writeP95 = append(readP95, maxOr0(tpr)), append(writeP95, maxOr0(tpw))
		}
		o.AggregatedReadBandwidthGBps, o.AggregatedWriteBandwidthGBps = fmean(readBW), fmean(writeBW)
		o.AggregatedAvgThroughputTokensPerSec, o.AggregatedStorageThroughputTokensPerSec = fmean(avgTP), fmean(storTP)
		if len(ids) > 0 {
			rp, wp := slices.Max(readP95), slices.Max(writeP95)
			o.AggregatedDeviceReadP95MS, o.AggregatedDeviceWriteP95MS = &rp, &wp
		}
		o.PartialFailure = len(o.MissingFiles) > 0
		sum.Options[option] = o
		sum.TrialsPerOption = max(sum.TrialsPerOption, len(ids))
		sum.PartialFailure = sum.PartialFailure || o.PartialFailure
		if err := pool(pooled, ids); err != nil {
			return nil, err
		}
		pooled.Differences = differences(o, pooled, run.TotalRanks)
		kb.Options[option] = pooled
		name := optionName(option)
		if len(pooled.Ranks) > 0 && len(o.CPUTierRanks) == len(pooled.Ranks) {
			kb.Warnings = append(kb.Warnings, fmt.Sprintf("%s: every rank served its working set from the CPU tier: no storage "+
				"was measured, and the rules fail such an Option (6.3.4.4)", name))
		}
		if o.PartialFailure {
			kb.Warnings = append(kb.Warnings, fmt.Sprintf("%s: partial failure: %d rank result(s) missing (%s)", name,
				len(o.MissingFiles), strings.Join(o.MissingFiles, ", ")))
		}
		for _, rk := range pooled.Ranks {
			if r := rk.result; r != nil && !r.Complete {
				why := r.IncompleteReason
				if why == "" {
					why = "stopped early"
				}
				kb.Warnings = append(kb.Warnings, fmt.Sprintf("%s trial %d rank %d: an incomplete run (%s): its figures are in the sums, "+
					"as mlpstorage takes every result file it finds (%s)", name, rk.Trial, rk.Rank, why, rk.Path))
			}
			if rk.RequestP95MS > 0 && (rk.DeviceReadP95MS > rk.RequestP95MS || rk.DeviceWriteP95MS > rk.RequestP95MS) {
				kb.Warnings = append(kb.Warnings, fmt.Sprintf("%s trial %d rank %d: a device p95 (read %s ms, write %s ms) above the "+
					"request p95 (%s ms): its requests are not all storage operations (%s)", name, rk.Trial, rk.Rank,
					num(rk.DeviceReadP95MS), num(rk.DeviceWriteP95MS), num(rk.RequestP95MS), rk.Path))
			}
		}
	}
	for _, u := range run.Unreadable {
		kb.Warnings = append(kb.Warnings, fmt.Sprintf("%s: unreadable, counted missing: %v", u.Path, u.Err))
		if o := sum.Options[u.Option]; o != nil && !slices.Contains(o.MissingFiles, u.Path) {
			o.MissingFiles = append(o.MissingFiles, u.Path)
			o.PartialFailure, sum.PartialFailure = true, true
		}
	}
	if len(run.Ranks) > 0 || len(run.Unreadable) > 0 || sum.PartialFailure {
		sum.KVBench = kb
	}
	return sum, nil
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
	if dir := run.TrialDirs[option][trial]; dir != "" {
		return filepath.Join(dir, fmt.Sprintf("rank_%d", rank))
	}
	return fmt.Sprintf("%s trial %d rank %d", optionName(option), trial, rank)
}

// optionName names an Option for people: "option 1", or its name.
func optionName(option string) string {
	if _, err := strconv.Atoi(option); err == nil {
		return "option " + option
	}
	return "option " + strconv.Quote(option)
}

func sumOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// pool fills p's exact view from the kvreplay documents of its ranks that
// reached storage (a CPU-tier rank has no storage figures to pool): each
// trial's ranks merged (MergeRanks), rates averaged over the trials, and
// every Tier-2 operation and request of every rank and trial pooled into
// one latency distribution each.
func pool(p *MLPerfPooled, trials []int) error {
	var docs []*schema.Result
	for _, rk := range p.Ranks {
		if rk.result == nil {
			p.NotPooled = "kv-cache.py documents carry percentiles, not histograms: no exact pooled view exists"
			return nil
		}
		if !rk.CPUTier {
			docs = append(docs, rk.result)
		}
	}
	if len(docs) == 0 {
		p.NotPooled = "no rank reached storage"
		return nil
	}
	var read, write, tok []float64
	var cells []schema.Cell
	var devs [][]schema.DeviceLatency
	var reqs []schema.Latency
	for _, t := range trials {
		var ds []*schema.Result
		var ranks []int
		for _, rk := range p.Ranks {
			if rk.Trial == t && !rk.CPUTier {
				ds, ranks = append(ds, rk.result), append(ranks, rk.Rank)
			}
		}
		if len(ds) == 0 {
			continue
		}
		m, err := MergeRanks(ds)
		if err != nil {
			p.NotPooled = fmt.Sprintf("trial %d's ranks do not merge: %v", t, err)
			return nil
		}
		f, err := figuresOf(m.Cells, m.Device, []schema.Latency{m.Requests.Latency})
		if err != nil {
			return err
		}
		f.ReadBandwidthGBps, f.WriteBandwidthGBps = m.Summary.TierStorageReadBandwidthGBps, m.Summary.TierStorageWriteBandwidthGBps
		f.StorageThroughputTokensPerSec = m.Summary.StorageThroughputTokensPerSec
		tr := MLPerfTrial{Trial: t, Ranks: ranks, MLPerfFigures: f, WallS: m.WallS}
		if m.RankImbalance != nil {
			tr.StartSpreadS = m.RankImbalance.StartSpreadS
		}
		p.Trials = append(p.Trials, tr)
		read, write, tok = append(read, f.ReadBandwidthGBps), append(write, f.WriteBandwidthGBps), append(tok, f.StorageThroughputTokensPerSec)
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

// figuresOf pools the Tier-2 device latency (device's, else the cells'
// latency from submission, as the summary takes it) and the request
// latencies reqs, exactly.
func figuresOf(cells []schema.Cell, device []schema.DeviceLatency, reqs []schema.Latency) (MLPerfFigures, error) {
	var f MLPerfFigures
	rl, err := results.TierOpLatency(cells, schema.TierNVMe, schema.OpRead, false)
	if err != nil {
		return f, fmt.Errorf("report: mlperf: %w", err)
	}
	wl, err := results.TierOpLatency(cells, schema.TierNVMe, schema.OpWrite, false)
	if err != nil {
		return f, fmt.Errorf("report: mlperf: %w", err)
	}
	if d, ok := results.DeviceOf(device, schema.TierNVMe, schema.OpRead); ok {
		rl = d
	}
	if d, ok := results.DeviceOf(device, schema.TierNVMe, schema.OpWrite); ok {
		wl = d
	}
	q := results.NewLatency()
	if err := q.MergeAll(reqs); err != nil {
		return f, fmt.Errorf("report: mlperf: request latency: %w", err)
	}
	f.DeviceReadP95MS, f.DeviceWriteP95MS, f.RequestP95MS = rl.P95US/1000, wl.P95US/1000, q.Finalize().P95US/1000
	f.DeviceReads, f.DeviceWrites = rl.Count, wl.Count
	return f, nil
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
	out = append(out, fmt.Sprintf("read bandwidth: the rule adds each rank's bytes over its own run (%s); pooled, every "+
		"rank's bytes over the ranks' common window (%s, the rule's %s): they differ as far as the ranks did not run "+
		"together (start spread up to %s s)", num(o.AggregatedReadBandwidthGBps), num(f.ReadBandwidthGBps),
		rel(o.AggregatedReadBandwidthGBps, f.ReadBandwidthGBps), num(spread)))
	if o.AggregatedDeviceReadP95MS != nil {
		out = append(out, fmt.Sprintf("device read p95: the rule takes the worst rank's p95 over %d ranks and %d trials (%s ms); "+
			"pooled, the p95 of all %d Tier-2 reads (%s ms, the rule's %s): the rule's is a worst-client bound",
			ranks, o.TrialCount, num(*o.AggregatedDeviceReadP95MS), f.DeviceReads, num(f.DeviceReadP95MS),
			rel(*o.AggregatedDeviceReadP95MS, f.DeviceReadP95MS)))
		out = append(out, fmt.Sprintf("device write p95: the rule's worst rank %s ms; pooled, the p95 of all %d Tier-2 writes %s ms",
			num(*o.AggregatedDeviceWriteP95MS), f.DeviceWrites, num(f.DeviceWriteP95MS)))
	}
	out = append(out, fmt.Sprintf("storage throughput: the rule adds each rank's tokens over its own storage time "+
		"(%s tok/s); pooled, all tokens over all ranks' storage time (%s tok/s), a per-client rate: the rule's sum grows "+
		"with the ranks (%d), the pooled rate does not", num(o.AggregatedStorageThroughputTokensPerSec), num(f.StorageThroughputTokensPerSec), ranks))
	if math.IsNaN(f.RequestP95MS) || f.RequestP95MS == 0 {
		return out
	}
	out = append(out, fmt.Sprintf("request p95 (the whole request's storage latency, pooled): %s ms, beside the device p95s",
		num(f.RequestP95MS)))
	return out
}

// RenderMLPerf renders a run summary: "json" writes the document itself
// (mlpstorage's kvcache_run_summary, with kvbench's block), "text" and
// "md" the figures of each Option under the rule and pooled side by side,
// the per-rank figures, the differences, and any run summaries given
// beside (compared by Option).
func RenderMLPerf(w io.Writer, s *MLPerfRunSummary, beside map[string]*MLPerfRunSummary, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "text", "md":
	default:
		return fmt.Errorf("report: --format %s: --aggregate mlperf writes json, text or md", format)
	}
	md := format == "md"
	head := &table{title: "MLPerf Storage KV cache run summary (mlpstorage kvcache_run_summary, schema_version " + s.SchemaVersion + ")"}
	head.notes = append(head.notes, fmt.Sprintf("run_datetime %s, total_ranks %d, host_count %d, npernode %d, trials_per_option %d, partial_failure %t",
		s.RunDatetime, s.TotalRanks, s.HostCount, s.Npernode, s.TrialsPerOption, s.PartialFailure))
	if s.KVBench == nil {
		head.notes = append(head.notes, "an mlpstorage run summary of kv-cache.py's documents: bandwidths in its \"GB/s\", GiB/s (2^30 bytes/s)")
	}
	if kb := s.KVBench; kb != nil {
		head.notes = append(head.notes, "aggregated from "+kb.Source+" documents; bandwidths in "+kb.BandwidthUnit, kb.Rule)
		for _, w := range kb.Warnings {
			head.notes = append(head.notes, "WARNING: "+w)
		}
	}
	if err := head.write(w, md); err != nil {
		return err
	}
	keys := make([]string, 0, len(s.Options))
	for k := range s.Options {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
	bnames := make([]string, 0, len(beside))
	for k := range beside {
		bnames = append(bnames, k)
	}
	slices.Sort(bnames)
	opt := func(v *float64) string {
		if v == nil {
			return "null"
		}
		return num(*v)
	}
	for _, k := range keys {
		o := s.Options[k]
		var p *MLPerfPooled
		if s.KVBench != nil {
			p = s.KVBench.Options[k]
		}
		t := &table{title: fmt.Sprintf("%s: %d trial(s) x %d rank(s)", optionName(k), o.TrialCount, o.RankCount),
			header: []string{"figure", "MLPerf rule (6.3.4)"}}
		pooled := p != nil && p.Pooled != nil
		if pooled {
			t.header = append(t.header, "kvbench pooled")
		}
		for _, b := range bnames {
			h := baseName(b)
			if x := beside[b]; x.KVBench == nil || x.KVBench.Source == KindReference {
				// mlpstorage's summaries add kv-cache.py's figures.
				h += " (GiB/s)"
			}
			t.header = append(t.header, h)
		}
		type rowDef struct {
			name  string
			rule  string
			pool  func(*MLPerfFigures) string
			other func(*MLPerfOption) string
		}
		rows := []rowDef{
			{"aggregated_read_bandwidth_gbps", num(o.AggregatedReadBandwidthGBps), func(f *MLPerfFigures) string { return num(f.ReadBandwidthGBps) },
				func(x *MLPerfOption) string { return num(x.AggregatedReadBandwidthGBps) }},
			{"aggregated_write_bandwidth_gbps", num(o.AggregatedWriteBandwidthGBps), func(f *MLPerfFigures) string { return num(f.WriteBandwidthGBps) },
				func(x *MLPerfOption) string { return num(x.AggregatedWriteBandwidthGBps) }},
			{"aggregated_storage_throughput_tokens_per_sec", num(o.AggregatedStorageThroughputTokensPerSec),
				func(f *MLPerfFigures) string { return num(f.StorageThroughputTokensPerSec) },
				func(x *MLPerfOption) string { return num(x.AggregatedStorageThroughputTokensPerSec) }},
			{"aggregated_device_read_p95_ms", opt(o.AggregatedDeviceReadP95MS), func(f *MLPerfFigures) string { return num(f.DeviceReadP95MS) },
				func(x *MLPerfOption) string { return opt(x.AggregatedDeviceReadP95MS) }},
			{"aggregated_device_write_p95_ms", opt(o.AggregatedDeviceWriteP95MS), func(f *MLPerfFigures) string { return num(f.DeviceWriteP95MS) },
				func(x *MLPerfOption) string { return opt(x.AggregatedDeviceWriteP95MS) }},
			{"request p95 ms (kvbench)", "-", func(f *MLPerfFigures) string { return num(f.RequestP95MS) }, func(*MLPerfOption) string { return "-" }},
			{"aggregated_avg_throughput_tokens_per_sec", num(o.AggregatedAvgThroughputTokensPerSec), func(*MLPerfFigures) string { return "-" },
				func(x *MLPerfOption) string { return num(x.AggregatedAvgThroughputTokensPerSec) }},
		}
		for _, r := range rows {
			row := []string{r.name, r.rule}
			if pooled {
				row = append(row, r.pool(p.Pooled))
			}
			for _, b := range bnames {
				if x := optionBeside(s, beside[b], k); x != nil {
					row = append(row, r.other(x))
				} else {
					row = append(row, "-")
				}
			}
			t.rows = append(t.rows, row)
		}
		t.notes = append(t.notes, fmt.Sprintf("partial_failure %t, missing_files [%s], cpu_tier_ranks [%s]", o.PartialFailure,
			strings.Join(o.MissingFiles, ", "), strings.Join(o.CPUTierRanks, ", ")))
		if p != nil {
			if p.NotPooled != "" {
				t.notes = append(t.notes, "no pooled view: "+p.NotPooled)
			}
			t.notes = append(t.notes, p.Differences...)
		}
		if err := t.write(w, md); err != nil {
			return err
		}
		if p == nil || len(p.Ranks) == 0 {
			continue
		}
		root := commonDir(p.Ranks)
		title := optionName(k) + ": per rank (what the rule combined)"
		if root != "" {
			title += ", documents in " + root
		}
		rt := &table{title: title,
			header: []string{"trial", "rank", "read GB/s", "write GB/s", "storage tok/s", "device read p95 ms", "device write p95 ms", "request p95 ms", "cpu tier", "document"}}
		for _, rk := range p.Ranks {
			path := rk.Path
			if rel, err := filepath.Rel(root, path); root != "" && err == nil {
				path = rel
			}
			rt.rows = append(rt.rows, []string{strconv.Itoa(rk.Trial), strconv.Itoa(rk.Rank), num(rk.ReadBandwidthGBps), num(rk.WriteBandwidthGBps),
				num(rk.StorageThroughputTokensPerSec), num(rk.DeviceReadP95MS), num(rk.DeviceWriteP95MS), num(rk.RequestP95MS),
				strconv.FormatBool(rk.CPUTier), path})
		}
		for _, tr := range p.Trials {
			rt.notes = append(rt.notes, fmt.Sprintf("trial %d pooled (ranks %v merged exactly): read %s GB/s, write %s GB/s, device read p95 %s ms, device write p95 %s ms, request p95 %s ms",
				tr.Trial, tr.Ranks, num(tr.ReadBandwidthGBps), num(tr.WriteBandwidthGBps), num(tr.DeviceReadP95MS), num(tr.DeviceWriteP95MS), num(tr.RequestP95MS)))
		}
		if err := rt.write(w, md); err != nil {
			return err
		}
	}
	return nil
}

// MLPerfSummaryName is the file name mlpstorage gives a run summary.
func MLPerfSummaryName(s *MLPerfRunSummary) string {
	return "kvcache_run_summary_" + s.RunDatetime + ".json"
}

// commonDir is the directory that holds every rank's document, the run's
// (the documents' paths are shown relative to it); "" when they share
// none.
func commonDir(ranks []MLPerfRank) string {
	var root string
	for i, rk := range ranks {
		d := filepath.Dir(rk.Path)
		if i == 0 {
			root = d
			continue
		}
		for root != "." && root != "/" && !strings.HasPrefix(d+string(filepath.Separator), root+string(filepath.Separator)) {
			root = filepath.Dir(root)
		}
	}
	// The run's directory, above its option_<O> directories.
	for base := filepath.Base(root); optionDir.MatchString(base) || trialDir.MatchString(base) || rankDir.MatchString(base); base = filepath.Base(root) {
		root = filepath.Dir(root)
	}
	if root == "." || root == "/" {
		return ""
	}
	return root
}

// optionBeside is the Option of other shown beside Option k of s: the
// same Option, or, when each summary has one Option only (a kv-cache.py
// document given without an option_<O> directory), that one.
func optionBeside(s, other *MLPerfRunSummary, k string) *MLPerfOption {
	if x := other.Options[k]; x != nil {
		return x
	}
	if len(s.Options) == 1 && len(other.Options) == 1 {
		for _, x := range other.Options {
			return x
		}
	}
	return nil
}

// IsRunSummary reports whether r holds an mlpstorage kvcache_run_summary
// document (its first megabyte, decoded).
func IsRunSummary(r io.Reader) bool {
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return false
	}
	_, ok, _ := decodeRunSummary(raw)
	return ok
}

// traceOption is the MLPerf Option a kvreplay result's trace was made
// for, from the trace's sidecar: kvtrace's --mlperf-option N on its
// command line, else the one Option whose model, GPU and CPU tiers and
// --max-concurrent-allocs its configuration has (users and duration may
// be scaled); "" when neither says.
func traceOption(r *schema.Result) string {
	found := ""
	for _, t := range r.Traces {
		var meta struct {
			CommandLine []string `json:"command_line"`
			Config      struct {
				Model               string  `json:"model"`
				GPUMemGB            float64 `json:"gpu_mem_gb"`
				CPUMemGB            float64 `json:"cpu_mem_gb"`
				MaxConcurrentAllocs int     `json:"max_concurrent_allocs"`
			} `json:"config"`
		}
		if len(t.Meta) == 0 || json.Unmarshal(t.Meta, &meta) != nil {
			return ""
		}
		o := ""
		for i, a := range meta.CommandLine {
			if v, ok := strings.CutPrefix(a, "--mlperf-option="); ok {
				o = v
			} else if a == "--mlperf-option" && i+1 < len(meta.CommandLine) {
				o = meta.CommandLine[i+1]
			}
		}
		if o == "" {
			c := meta.Config
			for _, x := range schema.MLPerfOptions() {
				if c.Model == x.Model && c.GPUMemGB == x.GPUMemGB && c.CPUMemGB == x.CPUMemGB && c.MaxConcurrentAllocs == x.MaxConcurrentAllocs {
					o = strconv.Itoa(x.Number)
				}
			}
		}
		if o == "" || found != "" && o != found {
			return ""
		}
		found = o
	}
	return found
}
