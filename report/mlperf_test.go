package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// rankSpec is a hand-made rank's document: its place, its Tier-2 bytes
// (decimal GB, over a 2 s run), the latency of its every Tier-2 read and
// write, and its closed loop's tokens over its storage time.
type rankSpec struct {
	option, trial, rank int
	readGB, writeGB     float64
	readMS, writeMS     int
	tokens              int64
	ioS                 float64
	cpuOnly             bool // only Tier-1: the working set stayed in RAM
	tier2RAM            bool // Tier-2 on the RAM backend (--tier-map Tier-2=ram)
}

var mlperfStart = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// mlperfDoc builds a kvreplay document as kvreplay does: cells of real
// histograms, tier totals, requests and the summary by results.
func mlperfDoc(tb testing.TB, s rankSpec) *schema.Result {
	tb.Helper()
	const wall = 2 * time.Second
	const ops = 20
	ms := time.Millisecond
	var cells []schema.Cell
	add := func(tier, op string, gb float64, d time.Duration, backend string) {
		c := results.NewCell()
		per := int64(gb * 1e9 / ops)
		for range ops {
			c.Add(d, d+ms, per, per)
		}
		cells = append(cells, c.Finalize(tier, op, "Decode", backend, wall))
	}
	if s.cpuOnly {
		add("Tier-1", "Read", 1, ms, "ram")
		add("Tier-1", "Write", 1, ms, "ram")
	} else {
		backend := "nvme"
		if s.tier2RAM {
			backend = "ram"
		}
		add("Tier-2", "Read", s.readGB, time.Duration(s.readMS)*ms, backend)
		add("Tier-2", "Write", s.writeGB, time.Duration(s.writeMS)*ms, backend)
	}
	reqs := results.NewRequests()
	for range 10 {
		reqs.Add(schema.QoSInteractive, time.Duration(s.readMS+s.writeMS+50)*ms)
	}
	r := &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion, Tool: "kvreplay"},
		Rank: s.rank, Ranks: 2, Trial: s.trial, Started: mlperfStart.Add(time.Duration(s.option-1)*time.Hour + time.Duration(s.trial)*time.Minute),
		WallS: wall.Seconds(), Complete: true, SizeScale: 1, Host: schema.Host{Hostname: "host" + string(rune('a'+s.rank))},
		Cells: cells, Tiers: results.TierTotals(cells, wall), Requests: reqs.Finalize(),
		Replay: schema.ReplayStats{ClosedLoop: true, Shard: "tp"},
		ClosedLoop: &schema.ClosedLoopStats{Users: 4, TokensKnown: true, TokensGenerated: s.tokens, StorageIOS: s.ioS,
			RequestsReleased: 10, RequestsCompleted: 10}}
	sum, err := results.Summarize(r, nil)
	if err != nil {
		tb.Fatal(err)
	}
	r.Summary = sum
	return r
}

// The hand-made run: Option 1 whole, Option 2 with a rank kept in RAM,
// Option 3 with a rank's result missing (its directory empty).
var mlperfSpecs = []rankSpec{
	{option: 1, trial: 0, rank: 0, readGB: 4, writeGB: 1, readMS: 10, writeMS: 20, tokens: 1000, ioS: 0.5},
	{option: 1, trial: 0, rank: 1, readGB: 2, writeGB: 0.4, readMS: 30, writeMS: 15, tokens: 600, ioS: 0.5},
	{option: 1, trial: 1, rank: 0, readGB: 6, writeGB: 1, readMS: 20, writeMS: 50, tokens: 1000, ioS: 0.25},
	{option: 1, trial: 1, rank: 1, readGB: 2, writeGB: 0.2, readMS: 12, writeMS: 10, tokens: 300, ioS: 0.5},
	{option: 2, trial: 0, rank: 0, readGB: 2, writeGB: 0.2, readMS: 5, writeMS: 8, tokens: 500, ioS: 0.5},
	{option: 2, trial: 0, rank: 1, cpuOnly: true},
	{option: 3, trial: 0, rank: 0, readGB: 2, writeGB: 0.2, readMS: 40, writeMS: 60, tokens: 100, ioS: 1},
	{option: 3, trial: 0, rank: 1, readGB: 4, writeGB: 0.2, readMS: 45, writeMS: 70, tokens: 100, ioS: 1},
	{option: 3, trial: 1, rank: 0, readGB: 2, writeGB: 0.2, readMS: 50, writeMS: 65, tokens: 100, ioS: 1},
}

// writeMLPerfRun lays the hand-made documents out as the Option runner
// and mlpstorage do, and returns the run's directory and the documents
// by option, trial and rank.
func writeMLPerfRun(tb testing.TB) (string, map[[3]int]*schema.Result) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "run")
	docs := map[[3]int]*schema.Result{}
	for _, s := range mlperfSpecs {
		d := mlperfDoc(tb, s)
		docs[[3]int{s.option, s.trial, s.rank}] = d
		rd := filepath.Join(dir, "option_"+itoa(s.option), "trial_"+itoa(s.trial), "rank_"+itoa(s.rank))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			tb.Fatal(err)
		}
		raw, err := json.MarshalIndent(d, "", " ")
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// Option 3's trial 1 rank 1 ran and left nothing.
	if err := os.MkdirAll(filepath.Join(dir, "option_3", "trial_1", "rank_1"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir, docs
}

func itoa(i int) string { return string(rune('0' + i)) }

func nearly(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestAggregateMLPerf(t *testing.T) {
	dir, docs := writeMLPerfRun(t)
	s := aggregateDir(t, dir)
	if s.SchemaVersion != "1.0" || s.TotalRanks != 2 || s.TrialsPerOption != 2 || !s.PartialFailure ||
		s.HostCount != 2 || s.Npernode != 1 || s.RunDatetime != "20260701_120000" {
		t.Errorf("run: %+v", s)
	}
	dev := func(o, tr, r int) (read, write float64) {
		d := docs[[3]int{o, tr, r}]
		return d.Summary.StorageReadDeviceP95MS, d.Summary.StorageWriteDeviceP95MS
	}
	// The worst rank's device p95s, from the documents' own figures.
	r1a, w1a := dev(1, 0, 1)
	_, w1b := dev(1, 1, 0)
	r3, _ := dev(3, 1, 0)
	_, w3 := dev(3, 0, 1)
	r2, w2 := dev(2, 0, 0)
	if r1a < 29 || r1a > 31 || w1b < 49 || w1b > 51 {
		t.Fatalf("test setup: device p95s %g %g", r1a, w1b)
	}
	_ = w1a
	tests := []struct {
		option                       string
		read, write, tokens          float64
		readP95, writeP95            float64
		trials                       int
		partial                      bool
		missing                      []string
		cpuTier                      []string
		pooledRead, pooledReadP95min float64
	}{
		// Trial sums 2+1=3 and 3+1=4 GB/s, mean 3.5; writes 0.5+0.2 and
		// 0.5+0.1, mean 0.65; tokens 2000+1200 and 4000+600, mean 3900.
		{"1", 3.5, 0.65, 3900, r1a, w1b, 2, false, nil, nil, 0, 0},
		// The rank in RAM adds zeros and is listed; the run's trial 1,
		// which Option 2 lacks, is a trial of missing ranks (sums 0), as
		// mlpstorage's loop over the trials it ran makes it: mean 0.5.
		{"2", 0.5, 0.05, 500, r2, w2, 2, true, []string{filepath.Join(dir, "option_2/trial_1/rank_0"), filepath.Join(dir, "option_2/trial_1/rank_1")},
			[]string{filepath.Join(dir, "option_2/trial_0/rank_1/kvbench_result.json")}, 0, 0},
		// Trial 0: 1+2 = 3, trial 1: rank 1 missing, 1: mean 2.
		{"3", 2, 0.15, 150, r3, w3, 2, true, []string{filepath.Join(dir, "option_3/trial_1/rank_1")}, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run("option "+tt.option, func(t *testing.T) {
			o := s.Options[tt.option]
			if o == nil {
				t.Fatalf("no option %s in %v", tt.option, s.Options)
			}
			if o.Option != any(int(tt.option[0]-'0')) {
				t.Errorf("option %v", o.Option)
			}
			if !nearly(o.AggregatedReadBandwidthGBps, tt.read) || !nearly(o.AggregatedWriteBandwidthGBps, tt.write) ||
				!nearly(o.AggregatedStorageThroughputTokensPerSec, tt.tokens) || o.AggregatedAvgThroughputTokensPerSec != 0 {
				t.Errorf("rates: read %v write %v tokens %v avg %v, want %v %v %v 0", o.AggregatedReadBandwidthGBps,
					o.AggregatedWriteBandwidthGBps, o.AggregatedStorageThroughputTokensPerSec, o.AggregatedAvgThroughputTokensPerSec,
					tt.read, tt.write, tt.tokens)
			}
			if o.AggregatedDeviceReadP95MS == nil || *o.AggregatedDeviceReadP95MS != tt.readP95 ||
				o.AggregatedDeviceWriteP95MS == nil || *o.AggregatedDeviceWriteP95MS != tt.writeP95 {
				t.Errorf("device p95s %v %v, want %v %v", o.AggregatedDeviceReadP95MS, o.AggregatedDeviceWriteP95MS, tt.readP95, tt.writeP95)
			}
			if o.TrialCount != tt.trials || o.RankCount != 2 || o.PartialFailure != tt.partial {
				t.Errorf("counts: %+v", o)
			}
			if !slices.Equal(o.MissingFiles, append([]string{}, tt.missing...)) || !slices.Equal(o.CPUTierRanks, append([]string{}, tt.cpuTier...)) {
				t.Errorf("missing %q cpu tier %q, want %q %q", o.MissingFiles, o.CPUTierRanks, tt.missing, tt.cpuTier)
			}
			p := s.KVBench.Options[tt.option]
			if p.Pooled == nil {
				t.Fatalf("no pooled view: %s", p.NotPooled)
			}
			// The pooled p95 is a percentile of every operation: never
			// above the worst rank's.
			if p.Pooled.DeviceReadP95MS > tt.readP95 || p.Pooled.DeviceWriteP95MS > tt.writeP95 || p.Pooled.DeviceReadP95MS <= 0 {
				t.Errorf("pooled device p95s %v %v above the worst rank's %v %v", p.Pooled.DeviceReadP95MS, p.Pooled.DeviceWriteP95MS, tt.readP95, tt.writeP95)
			}
			if p.Pooled.DeviceReadP95MS > p.Pooled.RequestP95MS {
				t.Errorf("pooled device read p95 %v above the request p95 %v", p.Pooled.DeviceReadP95MS, p.Pooled.RequestP95MS)
			}
		})
	}
	// Option 1 trial 1 pooled: both ranks ran the same 2 s, so the
	// merged bandwidth is their sum: 4 GB/s; the 40 reads of rank 0 (20
	// ms) and rank 1 (12 ms) give a p95 of 20 ms.
	p := s.KVBench.Options["1"]
	if len(p.Trials) != 2 || !nearly(p.Trials[1].ReadBandwidthGBps, 4) || p.Trials[1].DeviceReadP95MS < 19.9 || p.Trials[1].DeviceReadP95MS > 20.1 {
		t.Errorf("option 1 trials pooled: %+v", p.Trials)
	}
	if len(p.Differences) == 0 || len(s.KVBench.Warnings) == 0 {
		t.Errorf("no differences or warnings: %+v", s.KVBench)
	}

	var js, text bytes.Buffer
	if err := RenderMLPerf(&js, s, nil, "json"); err != nil {
		t.Fatal(err)
	}
	if err := RenderMLPerf(&text, s, nil, "text"); err != nil {
		t.Fatal(err)
	}
	golden(t, "mlperf.json", []byte(strings.ReplaceAll(js.String(), dir, "RUN")))
	golden(t, "mlperf.text", []byte(strings.ReplaceAll(text.String(), dir, "RUN")))
	var md bytes.Buffer
	if err := RenderMLPerf(&md, s, nil, "md"); err != nil {
		t.Fatal(err)
	}
	golden(t, "mlperf.md", []byte(strings.ReplaceAll(md.String(), dir, "RUN")))
	if err := RenderMLPerf(&md, s, nil, "csv"); err == nil || err.Error() != "report: --format csv: --aggregate mlperf writes json, text or md" {
		t.Errorf("--format csv: %v", err)
	}

	// The summary reads back as mlpstorage's document, field for field.
	var raw map[string]any
	if err := json.Unmarshal(js.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "run_datetime", "npernode", "host_count", "total_ranks", "trials_per_option", "options", "partial_failure"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("no %s in the summary", k)
		}
	}
	o1 := raw["options"].(map[string]any)["1"].(map[string]any)
	for _, k := range []string{"option", "aggregated_read_bandwidth_gbps", "aggregated_write_bandwidth_gbps", "aggregated_avg_throughput_tokens_per_sec",
		"aggregated_storage_throughput_tokens_per_sec", "aggregated_device_read_p95_ms", "aggregated_device_write_p95_ms", "rank_count",
		"trial_count", "partial_failure", "missing_files", "cpu_tier_ranks"} {
		if _, ok := o1[k]; !ok {
			t.Errorf("no %s in option 1", k)
		}
	}
	back, ok, err := decodeRunSummary(js.Bytes())
	if !ok || err != nil || back.Options["3"].AggregatedReadBandwidthGBps != 2 {
		t.Errorf("the summary does not read back: %v %v %+v", ok, err, back)
	}
}

// The same documents named one by one (kvreplay --trial and --rank, a
// label naming the Option) aggregate as the laid-out run does.
func TestAggregateMLPerfFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, s := range mlperfSpecs[:4] {
		d := mlperfDoc(t, s)
		d.Label = "option_1"
		if s.trial == 1 && s.rank == 1 {
			d.Complete, d.IncompleteReason = false, "interrupted"
		}
		raw, _ := json.Marshal(d)
		p := filepath.Join(dir, "r"+itoa(s.trial)+itoa(s.rank)+".json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	run, err := LoadMLPerf(context.Background(), []string{filepath.Join(dir, "*.json")}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := AggregateMLPerf(context.Background(), run, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options["1"]
	if o == nil || !nearly(o.AggregatedReadBandwidthGBps, 3.5) || !nearly(o.AggregatedStorageThroughputTokensPerSec, 3900) || o.PartialFailure {
		t.Fatalf("files: %+v", o)
	}
	if w := strings.Join(s.KVBench.Warnings, "\n"); !strings.Contains(w, "option 1 trial 1 rank 1: an incomplete run (interrupted)") {
		t.Errorf("no warning of the incomplete rank: %q", w)
	}
	// mlpstorage's partial_failure is of missing files only (above); the
	// rank cut short is listed in kvbench's block.
	want := []MLPerfIncomplete{{Option: "1", Trial: 1, Rank: 1, Path: paths[3], Reason: "interrupted"}}
	if s.PartialFailure || !slices.Equal(s.KVBench.IncompleteRanks, want) {
		t.Errorf("partial_failure %v, incomplete ranks %+v, want %+v", s.PartialFailure, s.KVBench.IncompleteRanks, want)
	}
	// Without trial 1's rank 1, the rule adds rank 0 alone there, and
	// says the rank is missing.
	run, err = LoadMLPerf(context.Background(), paths[:3], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err = AggregateMLPerf(context.Background(), run, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Options["1"]; !nearly(o.AggregatedReadBandwidthGBps, 3) || !o.PartialFailure || !slices.Equal(o.MissingFiles, []string{"option 1 trial 1 rank 1"}) {
		t.Errorf("a rank missing: %+v", o)
	}
}

// kv-cache.py's own per-rank documents aggregate by mlpstorage's keys, in
// their own units; a file that does not parse is counted missing, as
// mlpstorage counts it; kinds do not mix.
func TestAggregateMLPerfReference(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	doc := func(read, write, tokens, avg, devRead, devWrite float64, entries int) string {
		return `{"requests_completed": 10, "total_storage_io_latency": 1.5, "summary": {"total_requests": 10,
"avg_throughput_tokens_per_sec": ` + ftoa(avg) + `, "storage_throughput_tokens_per_sec": ` + ftoa(tokens) + `,
"storage_io_latency_ms": {"mean": 1, "p50": 1, "p95": 900, "p99": 950, "p999": 990, "p9999": 1000},
"cache_stats": {"storage_entries": ` + itoa(entries) + `, "tier_storage_read_bandwidth_gbps": ` + ftoa(read) + `,
"tier_storage_write_bandwidth_gbps": ` + ftoa(write) + `, "storage_read_device_p95_ms": ` + ftoa(devRead) + `,
"storage_write_device_p95_ms": ` + ftoa(devWrite) + `}}}`
	}
	files := map[string]string{
		"option_1/trial_0/rank_0/kvcache_results_20260701_120000.json": doc(1.5, 0.25, 100, 50, 12.5, 40, 7),
		"option_1/trial_0/rank_1/kvcache_results_20260701_120000.json": doc(0.5, 0.25, 300, 150, 22.5, 30, 0),
		"option_1/trial_1/rank_0/kvcache_results_20260701_121000.json": doc(2.5, 0.5, 200, 100, 7.5, 80, 3),
		"option_1/trial_1/rank_1/kvcache_results_20260701_121000.json": `{"requests_completed": 1, "summary": {`, // cut short
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := aggregateDir(t, dir)
	o := s.Options["1"]
	// Trials: read 2.0 and 2.5, write 0.5 and 0.5, tokens 400 and 200,
	// avg 200 and 100; device p95 the largest: 22.5 and 80.
	bad := filepath.Join(dir, "option_1/trial_1/rank_1/kvcache_results_20260701_121000.json")
	if !nearly(o.AggregatedReadBandwidthGBps, 2.25) || !nearly(o.AggregatedWriteBandwidthGBps, 0.5) || !nearly(o.AggregatedStorageThroughputTokensPerSec, 300) ||
		!nearly(o.AggregatedAvgThroughputTokensPerSec, 150) || *o.AggregatedDeviceReadP95MS != 22.5 || *o.AggregatedDeviceWriteP95MS != 80 ||
		!o.PartialFailure || !slices.Equal(o.MissingFiles, []string{bad}) ||
		!slices.Equal(o.CPUTierRanks, []string{filepath.Join(dir, "option_1/trial_0/rank_1/kvcache_results_20260701_120000.json")}) {
		t.Errorf("kv-cache.py documents: %+v", o)
	}
	if s.KVBench.Source != KindReference || !strings.Contains(s.KVBench.BandwidthUnit, "GiB") || s.KVBench.Options["1"].NotPooled == "" {
		t.Errorf("kvbench block: %+v", s.KVBench)
	}
	// The per-rank table gives the ranks' figures in GB/s, as every
	// table does: kv-cache.py's "GB/s", GiB/s, converted (1.5 GiB/s is
	// 1.611 GB/s), never labelled GB/s as they are.
	for _, f := range []string{"text", "md"} {
		var b strings.Builder
		if err := RenderMLPerf(&b, s, nil, f); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "read GB/s") || strings.Contains(out, "read GiB/s") || !strings.Contains(out, "| 1.611 |") && !strings.Contains(out, " 1.611 ") {
			t.Errorf("%s: the per-rank table of kv-cache.py documents is not in GB/s, converted:\n%s", f, out)
		}
	}

	// A kvreplay document beside them is refused: GB and GiB do not add.
	d := mlperfDoc(t, mlperfSpecs[0])
	raw, _ := json.Marshal(d)
	mixed := filepath.Join(dir, "option_1/trial_2/rank_0/kvbench_result.json")
	if err := os.MkdirAll(filepath.Dir(mixed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mixed, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AggregateMLPerf(context.Background(), run, time.Time{}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("mixed kinds: %v", err)
	}
}

// The reference's own result document (trace mode, so its latencies are
// zeros) is one rank of a run.
func TestAggregateMLPerfReferenceDocument(t *testing.T) {
	run, err := LoadMLPerf(context.Background(), []string{referenceJSON}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := AggregateMLPerf(context.Background(), run, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Options) != 1 || s.TotalRanks != 1 {
		t.Fatalf("%+v", s)
	}
	for _, o := range s.Options {
		// cache_stats.tier_storage_read_bandwidth_gbps of the document.
		if !nearly(o.AggregatedReadBandwidthGBps, 178.89764260717024) || !nearly(o.AggregatedWriteBandwidthGBps, 0.21191881951414585) || o.PartialFailure {
			t.Errorf("%+v", o)
		}
	}
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// kv-cache.py's per-rank result documents render beside kvreplay's: the
// fixture copied from the reference's run (trace mode: no latency) and a
// hand-edited one with device latency, whose device p95s are kvbench's
// device metrics and whose totals its latency from submission.
func TestKVCachePyBeside(t *testing.T) {
	docs, err := Load([]string{"testdata/kvcache_py/u50_d20_trace_mode.json", "testdata/kvcache_py/u50_d20_hand_measured.json",
		"testdata/u50_t1.json"}, nil, LoadOptions{GroupBy: []string{"file"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]*Group{}
	for _, g := range r.Groups {
		groups[g.Label] = g
	}
	trace, measured, kvb := groups["u50_d20_trace_mode"], groups["u50_d20_hand_measured"], groups["u50_t1"]
	if trace == nil || measured == nil || kvb == nil {
		t.Fatalf("groups %v", slices.Sorted(maps.Keys(groups)))
	}
	want := map[string]float64{"tier2_read_device_p95": 12.5, "tier2_write_device_p95": 25, "tier2_read_device_p50": 3.5, "tier2_read_p95": 14,
		"tier2_write_p95": 30, MetricRequestP95: 90, MetricRefTokens: 1234.5}
	for name, v := range want {
		if got := measured.Stats[name]; got.N != 1 || got.Median != v {
			t.Errorf("hand-measured %s: %+v, want %v", name, got, v)
		}
	}
	if _, ok := trace.Stats["tier2_read_p95"]; ok {
		t.Error("the trace-mode document has a Tier-2 p95: it timed nothing")
	}
	if _, ok := kvb.Stats["tier2_read_p95"]; !ok {
		t.Error("the kvreplay document has no Tier-2 read p95")
	}
	var b bytes.Buffer
	if err := Render(&b, r, "text"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"u50_d20_trace_mode", "u50_d20_hand_measured", "u50_t1", "tier2_read_device_p95", "12.5"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the report lacks %q:\n%s", s, b.String())
		}
	}
}

// TestMLPerfOneDocumentARank: two documents of one kind at one place
// (two systems' rank 0 of trial 1, given as files) are refused, naming
// both, rather than one dropped; one file reached twice (its run's
// directory and itself) is read once.
func TestMLPerfOneDocumentARank(t *testing.T) {
	dir, _ := writeMLPerfRun(t)
	file := filepath.Join(dir, "option_1", "trial_0", "rank_0", "kvbench_result.json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// Outside the layout, each is placed by its own trial and rank.
	a, b := filepath.Join(t.TempDir(), "sysA.json"), filepath.Join(t.TempDir(), "sysB.json")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = LoadMLPerf(context.Background(), []string{a, b}, nil, nil)
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), a+" and "+b) || !strings.Contains(err.Error(), "both are rank 0 of trial") {
		t.Errorf("two documents at one place: %v", err)
	}
	// On stdin, each is named by its place in the stream.
	_, err = LoadMLPerf(context.Background(), []string{"-"}, strings.NewReader(string(raw)+string(raw)), nil)
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "-#1 and -#2: ") {
		t.Errorf("two documents at one place on stdin: %v", err)
	}
	alone, err := LoadMLPerf(context.Background(), []string{dir}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := LoadMLPerf(context.Background(), []string{dir, file}, nil, nil)
	if err != nil {
		t.Fatalf("a file and its run's directory: %v", err)
	}
	if len(twice.Ranks) != len(alone.Ranks) {
		t.Errorf("a file and its run's directory: %d ranks, want %d", len(twice.Ranks), len(alone.Ranks))
	}
}

// kvreplay results and kv-cache.py documents given together aggregate
// apart, the second beside the first, Option for Option.
func TestMLPerfByKind(t *testing.T) {
	dir, _ := writeMLPerfRun(t)
	ref := filepath.Join(dir, "option_1", "trial_0", "rank_0", "..", "..", "..", "ref")
	p := filepath.Join(ref, "option_1", "trial_0", "rank_0", "kvcache_results_1.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/kvcache_py/u50_d20_hand_measured.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := LoadMLPerf(context.Background(), []string{dir, ref}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	runs := run.ByKind()
	if len(runs) != 2 || runs[0].Ranks[0].Kind != KindKVReplay || runs[1].Ranks[0].Kind != KindReference {
		t.Fatalf("%d runs", len(runs))
	}
	s, err := AggregateMLPerf(context.Background(), runs[0], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := AggregateMLPerf(context.Background(), runs[1], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// The kvreplay run is as it was alone; the reference's is one rank.
	if o := s.Options["1"]; !nearly(o.AggregatedReadBandwidthGBps, 3.5) || s.TotalRanks != 2 || !s.Options["3"].PartialFailure {
		t.Errorf("kvreplay run: %+v", o)
	}
	if o := x.Options["1"]; x.TotalRanks != 1 || !nearly(o.AggregatedReadBandwidthGBps, 178.89764260717024) || *o.AggregatedDeviceReadP95MS != 12.5 {
		t.Errorf("kv-cache.py run: %+v", o)
	}
	var b bytes.Buffer
	if err := RenderMLPerf(&b, s, map[string]*MLPerfRunSummary{"kv-cache.py documents": x}, "md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| kv-cache.py documents (GiB/s converted to GB/s) |") || !strings.Contains(b.String(), "| 192.1 |") {
		t.Errorf("beside:\n%s", b.String())
	}
	// Option 1 shows the reference's figures beside; Options 2 and 3,
	// which it lacks, show "-".
	golden(t, "mlperf_beside.md", []byte(strings.ReplaceAll(b.String(), dir, "RUN")))
}

// FuzzDecodeRunSummary: any input is a run summary, an error, or not a
// run summary, never a panic; a summary read re-encodes to one that
// reads the same.
func FuzzDecodeRunSummary(f *testing.F) {
	f.Add([]byte(`{"schema_version": "1.0", "options": {"1": {"option": 1, "aggregated_read_bandwidth_gbps": 2.5, "missing_files": []}}}`))
	f.Add([]byte(`{"schema_version": "2.0", "options": {}}`))
	f.Add([]byte(`{"schema_version": 1, "options": []}`))
	f.Add([]byte(`{"requests_completed": 1, "summary": {}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, ok, err := decodeRunSummary(raw)
		if !ok || err != nil {
			return
		}
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, ok, err := decodeRunSummary(again)
		if !ok || err != nil {
			t.Fatalf("a summary read does not read again: %v %v\n%s", ok, err, again)
		}
		if a, _ := json.Marshal(s2); !bytes.Equal(a, again) {
			t.Fatalf("round trip differs:\n%s\n%s", again, a)
		}
	})
}

// FuzzPlaceOf: a path's option, trial and rank come from its
// option_<O>, trial_<T> and rank_<N> directories, whatever else it holds.
func FuzzPlaceOf(f *testing.F) {
	f.Add("results/option_1/trial_2/rank_3/x.json")
	f.Add("results/trial_2/rank_3.json")
	f.Add("a/b")
	f.Add("option_99999999999999999999/trial_1")
	f.Fuzz(func(t *testing.T, p string) {
		o, tr, r := placeOf(p)
		if o != "" && !optionDir.MatchString("option_"+o) || tr < -1 || r < -1 {
			t.Fatalf("placeOf(%q) = %q %d %d", p, o, tr, r)
		}
		if _, tr2, r2 := placeOf(filepath.Join(p, "option_7", "trial_5", "rank_4", "f.json")); tr2 != 5 || r2 != 4 {
			t.Fatalf("placeOf under %q: trial %d rank %d", p, tr2, r2)
		}
	})
}

// TestTraceOption: a kvreplay result knows its Option from its trace's
// sidecar: kvtrace --mlperf-option, else the Option whose model, tiers and
// allocation limit its configuration has.
func TestTraceOption(t *testing.T) {
	meta := func(s string) *schema.Result {
		return &schema.Result{Traces: []schema.TraceInfo{{File: "t.csv.zst", Meta: json.RawMessage(s)}}}
	}
	tests := []struct {
		name string
		r    *schema.Result
		want string
	}{
		{"flag", meta(`{"command_line": ["kvtrace", "--mlperf-option", "3", "--num-users", "2"], "config": {"model": "x"}}`), "3"},
		{"flag=", meta(`{"command_line": ["kvtrace", "--mlperf-option=1"]}`), "1"},
		{"config of option 2", meta(`{"command_line": ["kvtrace"], "config": {"model": "llama3.1-8b", "gpu_mem_gb": 0, "cpu_mem_gb": 4, "max_concurrent_allocs": 16, "num_users": 3}}`), "2"},
		{"config of option 3", meta(`{"config": {"model": "llama3.1-70b-instruct", "gpu_mem_gb": 0, "cpu_mem_gb": 0, "max_concurrent_allocs": 4}}`), "3"},
		{"another workload", meta(`{"config": {"model": "llama3.1-8b", "gpu_mem_gb": 16, "cpu_mem_gb": 32, "max_concurrent_allocs": 0}}`), ""},
		{"no sidecar", &schema.Result{Traces: []schema.TraceInfo{{File: "-"}}}, ""},
		{"a damaged sidecar", meta(`{"command_line": 3}`), ""},
	}
	for _, tt := range tests {
		if got := traceOption(tt.r); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPlaceOf(t *testing.T) {
	tests := []struct {
		path        string
		option      string
		trial, rank int
	}{
		{"r/option_1/trial_2/rank_3/kvcache_results_x.json", "1", 2, 3},
		{"r/trial_0/rank_1.json", "", 0, 1},
		{"option3/trial1/rank12", "3", 1, 12},
		{"r/x.json", "", -1, -1},
		{"r/rank_1234567/x.json", "", -1, -1}, // more than 6 digits: not a rank
	}
	for _, tt := range tests {
		if o, tr, r := placeOf(tt.path); o != tt.option || tr != tt.trial || r != tt.rank {
			t.Errorf("placeOf(%q) = %q %d %d, want %q %d %d", tt.path, o, tr, r, tt.option, tt.trial, tt.rank)
		}
	}
}

// A rank whose Tier-2 ran on the RAM backend (kvreplay --tier-map
// Tier-2=ram, or --fit's) kept its working set in memory: it is listed in
// cpu_tier_ranks and adds zeros to the storage figures, however fast its
// RAM was.
func TestAggregateMLPerfTier2InRAM(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, s := range []rankSpec{
		{option: 1, rank: 0, readGB: 2, writeGB: 0.2, readMS: 30, writeMS: 40, tokens: 100, ioS: 1},
		{option: 1, rank: 1, readGB: 4, writeGB: 2, readMS: 90, writeMS: 90, tokens: 300, ioS: 1, tier2RAM: true},
	} {
		d := mlperfDoc(t, s)
		d.Label = "option_1"
		raw, _ := json.Marshal(d)
		p := filepath.Join(dir, "rank_"+itoa(s.rank)+".json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	run, err := LoadMLPerf(context.Background(), paths, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := AggregateMLPerf(context.Background(), run, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options["1"]
	if !nearly(o.AggregatedReadBandwidthGBps, 1) || !nearly(o.AggregatedWriteBandwidthGBps, 0.1) || *o.AggregatedDeviceReadP95MS > 31 ||
		!nearly(o.AggregatedStorageThroughputTokensPerSec, 400) || !slices.Equal(o.CPUTierRanks, paths[1:]) {
		t.Errorf("%+v (device read p95 %v)", o, *o.AggregatedDeviceReadP95MS)
	}
}

// TestLoadMLPerfInputs: what LoadMLPerf makes of each kind of path it is
// given (stdin, a file, a glob, a run's directory) and of what such a
// directory holds: its Options, trials and ranks, the summaries kept
// beside, the files counted missing, and the errors, word for word.
func TestLoadMLPerfInputs(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, raw []byte) string {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	doc := func(s rankSpec, label string) []byte {
		d := mlperfDoc(t, s)
		d.Label = label
		if label != "" {
			d.Host.Hostname = label + "-" + d.Host.Hostname // another system's run
		}
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	const summary = `{"schema_version": "1.0", "options": {"1": {"option": 1, "aggregated_read_bandwidth_gbps": 9}}}`
	r0, r1 := mlperfSpecs[0], mlperfSpecs[1]
	// A run's directory: a summary at its top (kept) and a file that is
	// not one (ignored); rank 0's directory holds a summary (skipped)
	// and JSON that is no result (a harness's metadata: skipped) beside
	// its result; rank 1's one file does not parse (missing); a trial
	// with no rank directory.
	write("run/kvcache_run_summary_20260701_120000.json", []byte(summary))
	write("run/notes.json", []byte(`{"x": 1}`))
	write("run/option_1/trial_0/rank_0/a.json", []byte(summary))
	write("run/option_1/trial_0/rank_0/b.json", doc(r0, ""))
	write("run/option_1/trial_0/rank_0/a_metadata.json", []byte(`{"summary": {}, "run": 1}`))
	write("run/option_1/trial_0/rank_1/a.json", []byte(`{"cut": `))
	// A rank directory with two results, or a result and a file cut
	// short (a result too, perhaps): which one counts would decide the
	// figures, so neither is taken.
	twoDir := filepath.Dir(write("two/option_1/trial_0/rank_1/a_old.json", doc(r1, "")))
	write("two/option_1/trial_0/rank_1/b.json", doc(r1, ""))
	cutDir := filepath.Dir(write("cut/option_1/trial_0/rank_0/a.json", doc(r0, "")))
	write("cut/option_1/trial_0/rank_0/b.json", doc(r0, "")[:40])
	// One rank's result copied into another trial's directory: one run
	// counted twice.
	copied := write("copied/option_1/trial_0/rank_0/a.json", doc(r0, ""))
	copy1 := write("copied/option_1/trial_1/rank_0/a.json", doc(r0, ""))
	if err := os.MkdirAll(filepath.Join(root, "run/option_1/trial_1"), 0o755); err != nil {
		t.Fatal(err)
	}
	one := write("files/one.json", doc(r0, "opt-4"))
	named := write("files/named.json", doc(r1, "sysA"))
	noLabel := write("files/nolabel.json", doc(r1, ""))
	badSummary := write("files/bad_summary.json", []byte(`{"schema_version": "2.0", "options": {}}`))
	garbage := write("files/garbage.json", []byte(`nope`))
	sim := write("files/sim.json", mustReadFile(t, "testdata/kvtrace_stats.json"))
	simRun := write("simrun/trial_0/rank_0/s.json", mustReadFile(t, "testdata/kvtrace_stats.json"))
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(root, "run")

	// place is a rank's Option, trial, rank and file, one per line.
	place := func(run *MLPerfRun) string {
		var b strings.Builder
		for _, rk := range run.Ranks {
			b.WriteString(rk.Option + " " + itoa(rk.Trial) + " " + itoa(rk.Rank) + " " + strings.TrimPrefix(rk.Path, root) + "\n")
		}
		for _, u := range run.Unreadable {
			b.WriteString("missing " + u.Option + " " + itoa(u.Trial) + " " + itoa(u.Rank) + " " + strings.TrimPrefix(u.Path, root) + "\n")
		}
		for _, k := range slices.Sorted(maps.Keys(run.Summaries)) {
			b.WriteString("summary " + strings.TrimPrefix(k, root) + "\n")
		}
		return b.String()
	}
	tests := []struct {
		name    string
		paths   []string
		stdin   string
		noStdin bool
		want    string // place, or the error
		ranks   int
	}{
		{name: "a run's directory", paths: []string{run}, ranks: 2,
			want: "1 0 0 /run/option_1/trial_0/rank_0/b.json\nmissing 1 0 1 /run/option_1/trial_0/rank_1/a.json\nsummary /run/kvcache_run_summary_20260701_120000.json\n"},
		{name: "two results in a rank directory", paths: []string{filepath.Join(root, "two")},
			want: "report: " + filepath.Join(root, "two") + ": " + twoDir + ": 2 result files, a_old.json and b.json: a rank directory holds its rank's one result, " +
				"and which one the aggregate took would decide the run's figures: keep the rank's result there and move the others out"},
		{name: "a result and a file cut short in a rank directory", paths: []string{filepath.Join(root, "cut")},
			want: "report: " + filepath.Join(root, "cut") + ": " + cutDir + ": 2 result files, a.json and b.json (not whole JSON: cut short?): a rank directory holds its rank's one result, " +
				"and which one the aggregate took would decide the run's figures: keep the rank's result there and move the others out"},
		{name: "a result copied to another trial", paths: []string{filepath.Join(root, "copied")},
			want: "report: " + copied + " and " + copy1 + ": incompatible documents: both are the result of rank 0 of one run " +
				"(on hosta, started 2026-07-01T12:00:00Z), placed as trial 0 rank 0 and trial 1 rank 0: a copy would count it twice; keep the one where its run wrote it"},
		{name: "files: the Option from a label, else the label, else unknown", paths: []string{one, named, noLabel}, ranks: 2,
			want: "4 0 0 /files/one.json\nsysA 0 1 /files/named.json\nunknown 0 1 /files/nolabel.json\n"},
		{name: "a glob", paths: []string{filepath.Join(root, "files", "n*.json")}, ranks: 2,
			want: "sysA 0 1 /files/named.json\nunknown 0 1 /files/nolabel.json\n"},
		{name: "stdin", paths: []string{"-"}, stdin: string(doc(r0, "option_2")) + string(doc(r1, "option_2")), ranks: 2,
			want: "2 0 0 -#1\n2 0 1 -#2\n"},
		{name: "a summary on stdin", paths: []string{"-"}, stdin: summary, want: "summary -\n"},
		{name: "no stdin", paths: []string{"-"}, noStdin: true, want: "report: -: no standard input"},
		{name: "stdin empty", paths: []string{"-"}, want: "report: -: unknown document format: empty input, want a JSON document"},
		{name: "nothing", want: "report: no per-rank result document and no kvcache_run_summary given"},
		{name: "an empty directory", paths: []string{empty},
			want: "report: " + empty + ": no .../trial_<T>/rank_<N>/*.json result and no kvcache_run_summary in it"},
		{name: "no such file", paths: []string{filepath.Join(root, "nope.json")},
			want: "report: " + filepath.Join(root, "nope.json") + ": no such file or directory"},
		{name: "a glob matching nothing", paths: []string{filepath.Join(root, "x*.json")},
			want: "report: " + filepath.Join(root, "x*.json") + ": no file matches"},
		{name: "a named file that does not parse", paths: []string{garbage},
			want: "report: " + garbage + ":1:2: invalid character 'o' in literal null (expecting 'u')"},
		{name: "a summary of another major version", paths: []string{badSummary},
			want: "report: " + badSummary + `: a kvcache_run_summary of schema_version "2.0": this kvreport reads 1.x`},
		{name: "a simulation", paths: []string{sim},
			want: "report: " + sim + ": a kvtrace document is a simulation, not a measurement: the MLPerf aggregation takes kvreplay results and kv-cache.py --output documents"},
		{name: "a simulation in a run's directory", paths: []string{filepath.Join(root, "simrun")},
			want: "report: " + simRun + ": a kvtrace document is a simulation, not a measurement: the MLPerf aggregation takes kvreplay results and kv-cache.py --output documents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdin io.Reader = strings.NewReader(tt.stdin)
			if tt.noStdin {
				stdin = nil
			}
			run, err := LoadMLPerf(context.Background(), tt.paths, stdin, nil)
			if err != nil {
				if err.Error() != tt.want {
					t.Errorf("error\n%s\nwant\n%s", err, tt.want)
				}
				return
			}
			if got := place(run); got != tt.want || run.TotalRanks != tt.ranks {
				t.Errorf("%d ranks, placed\n%swant %d ranks\n%s", run.TotalRanks, got, tt.ranks, tt.want)
			}
		})
	}

	// The run's directory: both trials found, where they are.
	r, err := LoadMLPerf(context.Background(), []string{run}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]string{"1": {0: filepath.Join(run, "option_1/trial_0"), 1: filepath.Join(run, "option_1/trial_1")}}
	if !maps.EqualFunc(r.TrialDirs, want, maps.Equal) {
		t.Errorf("trials %v, want %v", r.TrialDirs, want)
	}
}

func mustReadFile(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// TestMLPerfRunDatetime: run_datetime is the date and time the run's
// directory is named by (bench/mlperf-option.sh's kvbench_mlperf_<ts>,
// mlpstorage's run/<ts>), which names the summary file too, whether the
// run's directory, an Option's or a rank's file is given; the earliest
// document's start when the directory names none (or no valid one).
func TestMLPerfRunDatetime(t *testing.T) {
	for _, tt := range []struct{ runDir, given, want string }{
		{"kvbench_mlperf_20260701_113000", "", "20260701_113000"},
		{"kvbench_mlperf_20260701_113000", "option_1", "20260701_113000"},
		{"kvbench_mlperf_20260701_113000", "option_1/trial_0/rank_1/kvbench_result.json", "20260701_113000"},
		{"run/20260701_113000", "", "20260701_113000"},
		{"results", "", "20260701_120000"},
		{"kvbench_mlperf_20261399_999999", "", "20260701_120000"},
	} {
		dir := filepath.Join(t.TempDir(), tt.runDir)
		for _, s := range mlperfSpecs[:2] {
			rd := filepath.Join(dir, "option_1", "trial_0", "rank_"+itoa(s.rank))
			if err := os.MkdirAll(rd, 0o755); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(mlperfDoc(t, s))
			if err := os.WriteFile(filepath.Join(rd, "kvbench_result.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run, err := LoadMLPerf(context.Background(), []string{filepath.Join(dir, tt.given)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := AggregateMLPerf(context.Background(), run, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if s.RunDatetime != tt.want || MLPerfSummaryName(s) != "kvcache_run_summary_"+tt.want+".json" {
			t.Errorf("%s, given %q: run_datetime %s, want %s", tt.runDir, tt.given, s.RunDatetime, tt.want)
		}
	}
}
