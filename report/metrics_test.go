package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The documents for these tests were written by
//
//	kvtrace --num-users 6 --duration 20 --generation-mode none --gpu-mem-gb 0 \
//	  --cpu-mem-gb 0.25 --seed 42 -o t.csv.zst --output kvtrace_stats.json
//	kvreplay --closed-loop --duration 4s --size-scale 1/64 --dir DIR \
//	  --system sysA --trial 1 -o closed_t1.json t.csv.zst
//
// a closed-loop replay with its three QoS classes, its tier busy times,
// the reference's storage throughput and kvbench's KV tokens, and kvtrace's
// simulated statistics of the same workload.
const (
	closedResult = "testdata/closed_t1.json"
	kvtraceStats = "testdata/kvtrace_stats.json"
)

// renderAll renders r in every format Render knows: the text of each, the
// xlsx workbook's sheets' cells joined.
func renderAll(t *testing.T, r *Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range Formats() {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !Binary(f) {
			out[f] = b.String()
			continue
		}
		x, err := excelize.OpenReader(&b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var all strings.Builder
		for _, sheet := range x.GetSheetList() {
			rows, err := x.GetRows(sheet)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range rows {
				all.WriteString(sheet + ": " + strings.Join(row, "\t") + "\n")
			}
		}
		x.Close()
		out[f] = all.String()
	}
	return out
}

// TestSLAInEveryFormat: every format shows, for each run, each QoS
// class's p95 against its target, the share within it and the verdict.
func TestSLAInEveryFormat(t *testing.T) {
	r := build(t, []string{closedResult}, LoadOptions{}, BuildOptions{})
	tr := r.Groups[0].Trials[0]
	if len(tr.Requests.ByQoS) != 3 {
		t.Fatalf("test document: classes %+v", tr.Requests.ByQoS)
	}
	for f, out := range renderAll(t, r) {
		for _, q := range tr.Requests.ByQoS {
			p95 := q.Latency.P95US / 1000
			forms := []string{num(p95), htmlNum(p95), strconv.FormatFloat(p95, 'g', -1, 64)}
			found := false
			for _, s := range forms {
				found = found || strings.Contains(out, s)
			}
			if !strings.Contains(out, q.QoS) || !found {
				t.Errorf("%s: no %s p95 %v (%q):\n%.3000s", f, q.QoS, p95, forms, out)
			}
			if target := strconv.FormatFloat(q.TargetP95MS, 'g', -1, 64); !strings.Contains(out, target) {
				t.Errorf("%s: no %s target %s", f, q.QoS, target)
			}
		}
	}

	// The workbook's SLA sheet: one row per class with its figures as
	// numbers.
	var b bytes.Buffer
	if err := Render(&b, r, "xlsx"); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows("SLA")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(tr.Requests.ByQoS) {
		t.Fatalf("SLA sheet: %d rows, want a header and %d classes", len(rows), len(tr.Requests.ByQoS))
	}
	for i, q := range tr.Requests.ByQoS {
		row := rows[i+1]
		p95, err1 := strconv.ParseFloat(row[4], 64)
		target, err2 := strconv.ParseFloat(row[5], 64)
		verdict := "NOT met"
		if q.Met {
			verdict = "met"
		}
		if row[2] != q.QoS || err1 != nil || err2 != nil || math.Abs(p95-q.Latency.P95US/1000) > 1e-9 || target != q.TargetP95MS || row[7] != verdict {
			t.Errorf("SLA row %v, want %s p95 %g target %g %s", row, q.QoS, q.Latency.P95US/1000, q.TargetP95MS, verdict)
		}
	}

	// The JSON view carries each trial's classes.
	var doc struct {
		Groups []struct {
			Trials []struct {
				SLA []struct {
					QoS    string  `json:"qos"`
					P95    float64 `json:"p95_ms"`
					Target float64 `json:"target_p95_ms"`
					SLA    string  `json:"sla"`
				} `json:"sla"`
			} `json:"trials"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(renderAll(t, r)["json"]), &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Groups[0].Trials[0].SLA; len(got) != 3 || got[0].QoS != "interactive" || got[0].Target != 50 || got[0].SLA == "" {
		t.Errorf("json sla %+v", got)
	}
}

// TestTokenRatesApart: kvbench's token rate and the reference's storage
// throughput are two metrics with their own names, never one for the
// other; a kv-cache.py document's storage throughput is the reference's.
func TestTokenRatesApart(t *testing.T) {
	docs, err := Load([]string{closedResult}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := MetricsOf(docs[0].Result)
	if err != nil {
		t.Fatal(err)
	}
	s := docs[0].Result.Summary
	if s.StorageKVTokensPerSec == nil || v[MetricKVTokensMoved] != *s.StorageKVTokensPerSec {
		t.Errorf("%s %v, want the summary's storage_kv_tokens_per_sec", MetricKVTokensMoved, v[MetricKVTokensMoved])
	}
	if got, ok := v[MetricRefTokens]; !ok || got != s.StorageThroughputTokensPerSec || got == v[MetricKVTokensMoved] {
		t.Errorf("%s %v (present %v), want the reference's %v", MetricRefTokens, got, ok, s.StorageThroughputTokensPerSec)
	}
	if _, ok := v["storage_tokens_per_s"]; ok {
		t.Error("the old ambiguous name is still a metric")
	}
	for _, name := range []string{MetricKVTokensMoved, MetricRefTokens} {
		if MetricDescription(name) == "" {
			t.Errorf("%s has no definition", name)
		}
	}
	ref, err := Load([]string{referenceJSON}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ref[0].Values[MetricKVTokensMoved]; ok {
		t.Errorf("a kv-cache.py document has kvbench's %s", MetricKVTokensMoved)
	}
}

// TestDeviceRateLeads: a tier's bandwidth metric is its device rate, in
// GB/s; its offered load has its own name; a run twice as long with the
// same busy time halves the offered load and keeps the bandwidth; a
// document from before busy times were measured has no device rate, never
// a guess.
func TestDeviceRateLeads(t *testing.T) {
	docs, err := Load([]string{closedResult}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := docs[0].Result
	v, err := MetricsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	var ram schema.TierTotals
	for _, tt := range r.Tiers {
		if tt.Tier == "Tier-1" {
			ram = tt
		}
	}
	if ram.ReadDeviceBps <= 0 || v["tier1_read_bw"] != ram.ReadDeviceBps/1e9 || v["tier1_read_offered"] != ram.ReadOfferedBps/1e9 {
		t.Fatalf("tier1 read bw %v offered %v, tier %+v", v["tier1_read_bw"], v["tier1_read_offered"], ram)
	}
	// The same bytes and busy times over a run twice as long, as when
	// another tier (a throttled disk) held the run up.
	slow := *r
	slow.WallS *= 2
	slow.Cells = append([]schema.Cell(nil), r.Cells...)
	for i := range slow.Cells {
		slow.Cells[i].OfferedBps /= 2
	}
	slow.Tiers = results.TierTotals(slow.Cells, seconds(slow.WallS))
	results.ApplyTierBusy(slow.Tiers, results.MergeTierBusy(r.Tiers))
	sv, err := MetricsOf(&slow)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := v["tier1_read_bw"], sv["tier1_read_bw"]; math.Abs(b/a-1) > 1e-9 {
		t.Errorf("tier1_read_bw %v on the longer run, %v on the first: the device rate moved", b, a)
	}
	if a, b := v["tier1_read_offered"], sv["tier1_read_offered"]; math.Abs(b/a-0.5) > 1e-9 {
		t.Errorf("tier1_read_offered %v on the longer run, %v on the first: want half", b, a)
	}
	// Two ranks merged keep a device rate: the bytes of both over the
	// longer busy time.
	r1 := *r
	r1.Rank, r1.Ranks = 1, 2
	r0 := *r
	r0.Ranks = 2
	m, err := MergeRanks([]*schema.Result{&r0, &r1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range m.Tiers {
		if tt.Tier == "Tier-1" && math.Abs(tt.ReadDeviceBps/ram.ReadDeviceBps-2) > 1e-6 {
			t.Errorf("merged Tier-1 read device rate %v, want twice one rank's %v", tt.ReadDeviceBps, ram.ReadDeviceBps)
		}
	}
	old, err := Load([]string{"testdata/u10_t1.json"}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ov, err := MetricsOf(old[0].Result)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ov["tier1_read_bw"]; ok {
		t.Errorf("a document without busy times has a device rate %v", ov["tier1_read_bw"])
	}
	if ov["tier1_read_offered"] <= 0 {
		t.Error("a document without busy times lost its offered load")
	}
}

// TestSimulatedIsNoMeasurement: kvtrace's statistics, in the reference's
// dialect, are marked simulated in every format, have no bandwidth and no
// PASS, and are compared with no measured run.
func TestSimulatedIsNoMeasurement(t *testing.T) {
	docs, err := Load([]string{kvtraceStats}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].Kind != KindSimulated {
		t.Fatalf("kind %q, want %q", docs[0].Kind, KindSimulated)
	}
	for name := range docs[0].Values {
		if strings.Contains(name, "_bw") || strings.Contains(name, "_offered") {
			t.Errorf("simulated document has the bandwidth %s", name)
		}
	}
	r, err := Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for f, out := range renderAll(t, r) {
		if !strings.Contains(strings.ToLower(out), "simulated") {
			t.Errorf("%s does not say simulated:\n%.1500s", f, out)
		}
		if f == "text" && strings.Contains(out, "PASS") {
			t.Errorf("text shows a PASS for a simulation:\n%s", out)
		}
	}

	// Beside a measured run, listed first: the measured run is the
	// baseline, and the simulation gets no ratio.
	docs, err = Load([]string{kvtraceStats, closedResult}, nil, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = Build(docs, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Comparison.Baseline != "sysA" {
		t.Errorf("baseline %q, want the measured sysA", r.Comparison.Baseline)
	}
	for _, row := range r.Comparison.Rows {
		if _, ok := row.Ratios["kvtrace_stats"]; ok {
			t.Errorf("%s: the simulation has a ratio to a measurement", row.Metric.Name)
		}
	}
	// Asked for as the baseline of a measured run, the simulation is
	// refused, naming the measured group: its comparison would leave the
	// measured run's column empty.
	_, err = Build(docs, BuildOptions{Baseline: "kvtrace_stats"})
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "no baseline of measured groups: give one of sysA") {
		t.Errorf("a simulated --baseline beside a measured run: %v", err)
	}
}

// TestComparisonWarnsOfUnlikeRuns: a comparison of runs that covered
// different windows of the trace, at different size scales or in
// different loops warns of each, in every format; runs alike raise none.
func TestComparisonWarnsOfUnlikeRuns(t *testing.T) {
	raw, err := os.ReadFile(closedResult)
	if err != nil {
		t.Fatal(err)
	}
	var whole schema.Result
	if err := json.Unmarshal(raw, &whole); err != nil {
		t.Fatal(err)
	}
	// The same trace replayed whole, open loop at its own pace, full size.
	whole.System, whole.ClosedLoop = "sysB", nil
	whole.Replay.ClosedLoop, whole.Replay.DurationS, whole.Replay.Speed = false, 0, 1
	whole.Replay.RowsDone = whole.Traces[0].Rows
	whole.SizeScale = 1
	whole.Warnings = nil
	b, err := json.Marshal(&whole)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "whole.json")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := build(t, []string{other, closedResult}, LoadOptions{}, BuildOptions{})
	want := []string{"DIFFERENT WINDOWS", "--duration 4s window", "the whole trace", "DIFFERENT SIZE SCALES", "DIFFERENT LOOPS", "closed loop"}
	for f, out := range renderAll(t, r) {
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q", f, w)
			}
		}
	}
	// The workbook's first sheet carries them, on the row of the group
	// they warn of: not only its Warnings sheet, the last but one.
	var xb bytes.Buffer
	if err := Render(&xb, r, "xlsx"); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenReader(&xb)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows(x.GetSheetList()[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][len(rows[0])-1] != "warnings" {
		t.Fatalf("first sheet %q: want a header ending in warnings and a row per group", rows)
	}
	for _, row := range rows[1:] {
		last := row[len(row)-1]
		if row[0] == r.Comparison.Baseline {
			continue
		}
		for _, w := range []string{"DIFFERENT WINDOWS", "DIFFERENT SIZE SCALES", "DIFFERENT LOOPS"} {
			if !strings.Contains(last, w) {
				t.Errorf("first sheet, group %s: its last cell %q lacks %s", row[0], last, w)
			}
		}
	}
	twin := filepath.Join(t.TempDir(), "twin.json")
	if err := os.WriteFile(twin, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	same := build(t, []string{closedResult, twin}, LoadOptions{GroupBy: []string{"file"}}, BuildOptions{})
	if len(same.Groups) != 2 {
		t.Fatalf("%d groups, want 2", len(same.Groups))
	}
	for _, w := range allWarnings(same) {
		if strings.Contains(w, "DIFFERENT") {
			t.Errorf("alike runs: %s", w)
		}
	}
}

// TestSLAPerTrialInCSV: the CSV view names every run's SLA, not only its
// group's spread over trials: a row per trial, class and figure, with the
// trial's own p95, target, share within and verdict.
func TestSLAPerTrialInCSV(t *testing.T) {
	raw, err := os.ReadFile(closedResult)
	if err != nil {
		t.Fatal(err)
	}
	// A second trial of the same system whose interactive class missed
	// its target: its p95 and verdict differ from the first's.
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["trial"] = 2
	q := doc["requests"].(map[string]any)["by_qos"].([]any)[0].(map[string]any)
	// Its p90 no higher than its p95, as a histogram gives them.
	l := q["latency"].(map[string]any)
	l["p90_us"], l["p95_us"] = 77700.0, 77700.0
	q["met"], q["within_target"], q["compliance"] = false, 1, 1/q["count"].(float64)
	second := filepath.Join(t.TempDir(), "closed_t2.json")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := build(t, []string{closedResult, second}, LoadOptions{}, BuildOptions{})
	if len(r.Groups) != 1 || len(r.Groups[0].Trials) != 2 {
		t.Fatalf("want one group of two trials, got %d groups", len(r.Groups))
	}
	var out bytes.Buffer
	if err := Render(&out, r, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	got := map[string][]string{} // trial/metric -> target, n, median
	for _, rec := range recs[1:] {
		if tr := rec[col["trial"]]; tr != "" {
			got[tr+"/"+rec[col["metric"]]] = []string{rec[col["target"]], rec[col["n"]], rec[col["median"]]}
		}
	}
	for _, s := range slaRows(r) {
		met := "0"
		if s.Met {
			met = "1"
		}
		for what, want := range map[string][]string{
			"p95":           {strconv.FormatFloat(s.TargetMS, 'g', -1, 64), "1", strconv.FormatFloat(s.P95MS, 'g', -1, 64)},
			"within_target": {"95", "1", strconv.FormatFloat(s.withinPct(), 'g', -1, 64)},
			"sla_met":       {"", "1", met},
		} {
			key := strconv.Itoa(s.Trial) + "/" + qosMetric(s.QoS, what)
			if g := got[key]; !slices.Equal(g, want) {
				t.Errorf("csv %s: target, n, median %q, want %q", key, g, want)
			}
		}
	}
	if g := got["2/qos_interactive_p95"]; len(g) != 3 || g[2] != "77.7" {
		t.Errorf("the second trial's interactive p95 %q, want its own 77.7 ms", g)
	}
	if g := got["2/qos_interactive_sla_met"]; len(g) != 3 || g[2] != "0" {
		t.Errorf("the second trial's interactive verdict %q, want 0 (not met)", g)
	}
}
