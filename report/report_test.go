package report

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// The documents under testdata were written by kvreplay
// (--tier-map Tier-0=ram,Tier-1=ram,Tier-2=nvme --size-scale 1/4096
// --speed max, two trials of each of two reference traces).
var goldenInputs = []string{"testdata/u10_t1.json", "testdata/u10_t2.json", "testdata/u50_t1.json", "testdata/u50_t2.json"}

const referenceJSON = "../testdata/reference/llama8b_u50_d20_gpu2_cpu4_gennone_s42.json"

func build(tb testing.TB, paths []string, lo LoadOptions, bo BuildOptions) *Report {
	tb.Helper()
	docs, err := Load(paths, nil, lo)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := Build(docs, bo)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./report -update rewrites it):\n%s", name, path, got)
	}
}

func TestGolden(t *testing.T) {
	r := build(t, goldenInputs, LoadOptions{}, BuildOptions{Baseline: "llama8b_u50_d20_gpu2_cpu4_gennone_s42"})
	for _, f := range []string{"text", "md", "csv", "json", "bench"} {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, r, f); err != nil {
				t.Fatal(err)
			}
			golden(t, "report."+f, b.Bytes())
		})
	}
}

// TestMarkdownPipes: a label with a "|" (--label, --system, a file name)
// keeps its cell in every Markdown table: each row has the header's
// cells, the "|" escaped.
func TestMarkdownPipes(t *testing.T) {
	r := build(t, goldenInputs[:2], LoadOptions{Label: "sys|x"}, BuildOptions{})
	var b bytes.Buffer
	if err := Render(&b, r, "md"); err != nil {
		t.Fatal(err)
	}
	// cells counts a row's cells: its unescaped "|" less one.
	cells := func(line string) int { return strings.Count(line, "|") - strings.Count(line, `\|`) - 1 }
	width, rows := 0, 0
	for _, line := range strings.Split(b.String(), "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			width = 0
		case width == 0:
			width = cells(line)
		case cells(line) != width:
			t.Errorf("row of %d cells under a header of %d: %s", cells(line), width, line)
		case strings.Contains(line, "sys"):
			rows++
			if !strings.Contains(line, `| sys\|x |`) {
				t.Errorf("label cell not escaped: %s", line)
			}
		}
	}
	if rows == 0 {
		t.Fatalf("no table row holds the label:\n%s", b.String())
	}
}

// TestReferenceQoSIsEndToEnd: kv-cache.py's per-QoS p95 and compliance
// are of its end-to-end request latency (reference section 3.6), which the
// SLA table shows beside kvreplay's storage latency: every format says so,
// for a document in trace mode (whose storage latencies alone are zeros)
// and for a measured one (whose SLA figures are compared).
func TestReferenceQoSIsEndToEnd(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"testdata/kvcache_py/u50_d20_trace_mode.json", "its storage latencies are zeros; the p95 and compliance it gives per QoS class are of its end-to-end request latency"},
		{"testdata/kvcache_py/u50_d20_hand_measured.json", "kv-cache.py's SLA per QoS class (qos_*_p95, qos_*_within_target, qos_*_sla_met): the p95 and compliance it gives per QoS class are of its end-to-end request latency"},
	} {
		r := build(t, []string{tc.file}, LoadOptions{}, BuildOptions{})
		for _, f := range []string{"text", "md", "csv", "json", "html", "bench"} {
			var b bytes.Buffer
			if err := Render(&b, r, f); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if f == "json" || f == "html" {
				out = strings.NewReplacer(`\u0026`, "&", "&#39;", "'", `\u0027`, "'").Replace(out)
			}
			if (f == "csv" || f == "bench") && strings.Contains(tc.file, "trace_mode") {
				continue // they carry warnings, and say of an unmeasured SLA only that it is not measured
			}
			want := tc.want
			if f == "md" {
				want = mdCell(want) // its asterisks escaped
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s: %s: no %q", tc.file, f, want)
			}
		}
	}
}

// TestReferenceSideBySide compares the reference's own result with
// kvreplay results of the same configuration: the table renders, and what
// the reference does not measure is "-", not 0.
func TestReferenceSideBySide(t *testing.T) {
	docs, err := Load([]string{referenceJSON}, nil, LoadOptions{Label: "kv-cache.py"})
	if err != nil {
		t.Fatal(err)
	}
	if docs[0].Kind != KindReference {
		t.Fatalf("kind %q", docs[0].Kind)
	}
	more, err := Load([]string{"testdata/u50_t*.json"}, nil, LoadOptions{Label: "kvreplay"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(append(docs, more...), BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := r.Groups[0]
	for _, name := range []string{"tier2_read_p95", MetricLagP99, MetricDecodeBytesRead, MetricKVTokensMoved, "tier2_read_bw"} {
		if _, ok := ref.Stats[name]; ok {
			t.Errorf("reference has %s, which it does not measure", name)
		}
	}
	// The reference's tier bandwidth is bytes over the run in GiB/s: an
	// offered load, in GB/s.
	if v := ref.Values["tier2_read_offered"]; len(v) != 1 || math.Abs(v[0]-178.89764260717024*results.GiB/1e9) > 1e-9 {
		t.Errorf("tier2_read_offered %v, want the reference's tier_storage_read_bandwidth_gbps in GB/s", v)
	}
	// It ran in trace mode (it timed no storage I/O): its PASS judged
	// latencies of zero, and is no verdict.
	if ref.Health[0] != "NO_DATA" {
		t.Errorf("health %q", ref.Health[0])
	}
	for _, f := range []string{"text", "md", "csv", "json", "bench"} {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f == "text" {
			var line string
			for l := range strings.Lines(b.String()) {
				if strings.HasPrefix(strings.TrimSpace(l), "lag_p99 ") && strings.Contains(l, " lower ") {
					line = l
				}
			}
			fields := strings.Fields(line)
			if len(fields) < 5 || fields[3] != "-" {
				t.Errorf("comparison row of lag_p99 %q: want the reference's median shown as -", line)
			}
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, body, want string }{
		{"newer.json", fmt.Sprintf(`{"format":"kvbench-result","format_version":%d}`, schema.ResultFormatVersion+1),
			fmt.Sprintf("format_version %d", schema.ResultFormatVersion+1)},
		{"other.json", `{"format":"something"}`, `format "something"`},
		{"neither.json", `{"a":1}`, "neither a kvreplay result"},
		{"garbage.json", `{"format":`, "garbage.json:1:11: unexpected end of input"},
		{"empty.json", ``, "empty input"},
		{"trace.csv", "Timestamp,Operation,Object_Size_Bytes\n0.1,Write,4096\n", "trace.csv:1:1: invalid character 'T' looking for beginning of value (not JSON: kvreport reads kvreplay results, kv-cache.py --output and kvtrace --output documents; a trace is replayed with kvreplay first)"},
	} {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load([]string{p}, nil, LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.name) {
			t.Errorf("%s: error %v, want one naming the file and %q", tt.name, err, tt.want)
		}
	}
	if _, err := Load([]string{goldenInputs[0], goldenInputs[0]}, nil, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	docs, _ := Load([]string{goldenInputs[0], goldenInputs[0]}, nil, LoadOptions{})
	if _, err := Build(docs, BuildOptions{}); !errors.Is(err, ErrIncompatible) {
		t.Errorf("a rank given twice: error %v, want ErrIncompatible", err)
	}
}

func TestLoadStdinAndGroupBy(t *testing.T) {
	a, _ := os.ReadFile(goldenInputs[0])
	b, _ := os.ReadFile(goldenInputs[2])
	docs, err := Load([]string{"-"}, strings.NewReader(string(a)+"\n"+string(b)), LoadOptions{GroupBy: []string{"config", "file"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Label != "llama8b_u10_d30_gpu0_cpu4_s42/-" || docs[1].Path != "-#2" {
		t.Errorf("docs %d, label %q, path %q", len(docs), docs[0].Label, docs[len(docs)-1].Path)
	}
	if err := (LoadOptions{GroupBy: []string{"colour"}}).Validate(); err == nil {
		t.Error("--group-by colour accepted")
	}
}

func TestComputeStats(t *testing.T) {
	tests := []struct {
		in   []float64
		want Stats
	}{
		{[]float64{2}, Stats{N: 1, Median: 2, Mean: 2, Min: 2, Max: 2, P95: 2}},
		{[]float64{4, 1, 3, 2}, Stats{N: 4, Median: 2.5, Mean: 2.5, Min: 1, Max: 4, StdDev: math.Sqrt(5.0 / 3), CV: math.Sqrt(5.0/3) / 2.5, P95: 3.85}},
	}
	for _, tt := range tests {
		got := ComputeStats(tt.in)
		if got.N != tt.want.N || !near(got.Median, tt.want.Median) || !near(got.StdDev, tt.want.StdDev) ||
			!near(got.CV, tt.want.CV) || !near(got.P95, tt.want.P95) || got.Min != tt.want.Min || got.Max != tt.want.Max {
			t.Errorf("ComputeStats(%v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if s := ComputeStats(nil); s.N != 0 || !math.IsNaN(s.Median) {
		t.Errorf("no values: %+v", s)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestCompareWinRate(t *testing.T) {
	mk := func(label string, vals ...float64) *Group {
		g := &Group{Label: label, Values: map[string][]float64{}}
		for i, v := range vals {
			g.TrialIDs = append(g.TrialIDs, i+1)
			g.TrialValues = append(g.TrialValues, map[string]float64{"tier2_read_bw": v, MetricLagP99: v})
			g.Values["tier2_read_bw"] = append(g.Values["tier2_read_bw"], v)
			g.Values[MetricLagP99] = append(g.Values[MetricLagP99], v)
		}
		return g
	}
	slow, fast := mk("slow", 1, 2, 3), mk("fast", 2, 4, 3)
	c := Compare([]*Group{fast, slow}, "slow")
	for _, row := range c.Rows {
		switch row.Metric.Name {
		case "tier2_read_bw":
			if !near(row.Ratios["fast"], 1.5) || !near(row.WinRate["fast"], 2.5/3) {
				t.Errorf("bandwidth: ratio %v win %v", row.Ratios["fast"], row.WinRate["fast"])
			}
		case MetricLagP99:
			if !near(row.WinRate["fast"], 0.5/3) {
				t.Errorf("lag (lower is better): win %v", row.WinRate["fast"])
			}
		}
	}
}

// TestCompareNothingIsNoTie: a pair of trials with the metric 0 on both
// sides (no bytes against no bytes) or absent on either is not compared:
// it is no tie, counts in no win rate, and a metric with no pair compared
// has none.
func TestCompareNothingIsNoTie(t *testing.T) {
	nan := math.NaN() // absent
	for _, tc := range []struct {
		name      string
		base, new []float64
		want      float64 // NaN: no win rate
	}{
		{"zeros on both sides", []float64{0, 0, 0}, []float64{0, 0, 0}, nan},
		{"absent on both sides", []float64{nan, nan}, []float64{nan, nan}, nan},
		{"absent against zero", []float64{nan, 0}, []float64{0, nan}, nan},
		{"a zero pair among compared ones", []float64{0, 1, 2}, []float64{0, 2, 2}, 0.75},
		{"zero against something", []float64{0, 0}, []float64{1, 0}, 1},
		{"an equal pair is a tie", []float64{3}, []float64{3}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(label string, vals []float64) *Group {
				g := &Group{Label: label, Values: map[string][]float64{}}
				for i, v := range vals {
					g.TrialIDs = append(g.TrialIDs, i+1)
					tv := map[string]float64{}
					if !math.IsNaN(v) {
						tv["tier1_read_offered"] = v
						g.Values["tier1_read_offered"] = append(g.Values["tier1_read_offered"], v)
					}
					g.TrialValues = append(g.TrialValues, tv)
				}
				return g
			}
			c := Compare([]*Group{mk("base", tc.base), mk("new", tc.new)}, "base")
			for _, row := range c.Rows {
				if row.Metric.Name != "tier1_read_offered" {
					continue
				}
				w, ok := row.WinRate["new"]
				if math.IsNaN(tc.want) && ok {
					t.Errorf("win rate %v, want none: nothing was compared", w)
				}
				if !math.IsNaN(tc.want) && (!ok || !near(w, tc.want)) {
					t.Errorf("win rate %v (%v), want %v", w, ok, tc.want)
				}
			}
		})
	}
}

// synth builds the rank documents of one synthetic run, and the document
// of the whole run recorded from all the samples at once.
func synth(tb testing.TB, rng *rand.Rand, ranks int) (parts []*schema.Result, whole *schema.Result) {
	type cellID struct{ tier, op, phase string }
	ids := []cellID{{"Tier-1", "Write", "Prefill"}, {"Tier-2", "Read", "Decode"}, {"Tier-2", "Write", "Evict"}}
	start := time.Date(2026, 1, 9, 12, 0, 0, 0, time.UTC)
	wholeLat := map[cellID]*hist.Histogram{}
	wholeSched := map[cellID]*hist.Histogram{}
	wholeReq, wholeQ, wholeLag := hist.New(), hist.New(), hist.New()
	var wholeMet int64
	for _, id := range ids {
		wholeLat[id], wholeSched[id] = hist.New(), hist.New()
	}
	for r := range ranks {
		d := &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: 1, Tool: "kvreplay"}, Rank: r, Ranks: ranks,
			Started: start.Add(time.Duration(rng.IntN(3)) * time.Second), WallS: float64(1 + rng.IntN(5)), Complete: true,
			SizeScale: 1, Host: schema.Host{Hostname: fmt.Sprintf("h%d", r)}}
		for _, id := range ids {
			if rng.IntN(4) == 0 {
				continue // this rank had none
			}
			lat, sched := hist.New(), hist.New()
			n := 1 + rng.IntN(200)
			c := schema.Cell{Tier: id.tier, Op: id.op, Phase: id.phase, Backend: "ram", Ops: int64(n)}
			for range n {
				v := time.Duration(rng.ExpFloat64()*2000) * time.Microsecond
				lat.Record(v)
				sched.Record(2 * v)
				wholeLat[id].Record(v)
				wholeSched[id].Record(2 * v)
				b := int64(1 + rng.IntN(1<<20))
				c.LogicalBytes += b
				c.PhysicalBytes += b + 4096
			}
			c.BusyS = rng.Float64()
			c.Latency, c.FromSchedule = lat.Latency(), sched.Latency()
			d.Cells = append(d.Cells, c)
		}
		req, q, lag := hist.New(), hist.New(), hist.New()
		var met int64
		for range rng.IntN(50) {
			v := time.Duration(rng.ExpFloat64()*40) * time.Millisecond
			req.Record(v)
			q.Record(v)
			wholeReq.Record(v)
			wholeQ.Record(v)
			if v <= 50*time.Millisecond {
				met++
			}
		}
		wholeMet += met
		d.Requests = schema.RequestStats{Count: req.Count(), Latency: req.Latency()}
		if q.Count() > 0 {
			d.Requests.ByQoS = []schema.QoSStats{{QoS: "interactive", Count: q.Count(), TargetP95MS: 50,
				Compliance: float64(met) / float64(q.Count()), Latency: q.Latency()}}
			if r%2 == 0 {
				// Odd ranks' documents are older: no within_target.
				d.Requests.ByQoS[0].WithinTarget = met
			}
		}
		for range 1 + rng.IntN(100) {
			v := time.Duration(rng.IntN(10000)) * time.Microsecond
			lag.Record(v)
			wholeLag.Record(v)
		}
		d.Lag = lag.Latency()
		for s := range int(d.WallS) {
			sec := schema.Second{T: s}
			sec.ReadBytes[2] = int64(rng.IntN(1000))
			d.Timeline = append(d.Timeline, sec)
		}
		d.Tiers = results.TierTotals(d.Cells, seconds(d.WallS))
		parts = append(parts, d)
	}
	whole = &schema.Result{}
	for _, id := range ids {
		if wholeLat[id].Count() > 0 {
			whole.Cells = append(whole.Cells, schema.Cell{Tier: id.tier, Op: id.op, Phase: id.phase,
				Latency: wholeLat[id].Latency(), FromSchedule: wholeSched[id].Latency()})
		}
	}
	whole.Requests = schema.RequestStats{Count: wholeReq.Count(), Latency: wholeReq.Latency()}
	if wholeQ.Count() > 0 {
		share, met := results.Compliance(wholeMet, wholeQ.Count())
		whole.Requests.ByQoS = []schema.QoSStats{{QoS: "interactive", Count: wholeQ.Count(), TargetP95MS: 50,
			WithinTarget: wholeMet, Compliance: share, Met: met, Latency: wholeQ.Latency()}}
	}
	whole.Lag = wholeLag.Latency()
	return parts, whole
}

func mustMerge(tb testing.TB, docs ...*schema.Result) *schema.Result {
	tb.Helper()
	m, err := MergeRanks(docs)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestMergeProperty: merging the ranks of a run gives the counts, bytes
// and histograms of the whole run exactly, and merging is associative and
// independent of order.
func TestMergeProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for iter := range 12 {
		ranks := 3 + rng.IntN(4)
		parts, whole := synth(t, rng, ranks)
		m := mustMerge(t, parts...)
		if m.Ranks != ranks || m.Format != schema.ResultFormat {
			t.Fatalf("iter %d: ranks %d format %q", iter, m.Ranks, m.Format)
		}
		if len(m.Cells) != len(whole.Cells) {
			t.Fatalf("iter %d: %d cells, want %d", iter, len(m.Cells), len(whole.Cells))
		}
		for i, c := range m.Cells {
			w := whole.Cells[i]
			var ops, logical, physical int64
			for _, p := range parts {
				for _, pc := range p.Cells {
					if pc.Tier == c.Tier && pc.Op == c.Op && pc.Phase == c.Phase {
						ops += pc.Ops
						logical += pc.LogicalBytes
						physical += pc.PhysicalBytes
					}
				}
			}
			if c.Ops != ops || c.LogicalBytes != logical || c.PhysicalBytes != physical || c.Ops != w.Latency.Count {
				t.Errorf("iter %d: %s %s: ops %d bytes %d/%d, want %d %d/%d", iter, c.Tier, c.Op, c.Ops, c.LogicalBytes, c.PhysicalBytes, ops, logical, physical)
			}
			if c.Latency != w.Latency || c.FromSchedule != w.FromSchedule {
				t.Errorf("iter %d: %s %s: merged latency %+v, whole %+v", iter, c.Tier, c.Op, c.Latency, w.Latency)
			}
			if want := float64(c.LogicalBytes) / m.WallS; c.OfferedBps != want {
				t.Errorf("iter %d: offered load %v, want %v over the common window", iter, c.OfferedBps, want)
			}
		}
		if !reflect.DeepEqual(m.Requests, whole.Requests) {
			t.Errorf("iter %d: requests %+v, want %+v", iter, m.Requests, whole.Requests)
		}
		if m.Lag != whole.Lag {
			t.Errorf("iter %d: lag differs", iter)
		}

		// Associative and order-independent.
		k := 1 + rng.IntN(ranks-1)
		left := mustMerge(t, mustMerge(t, parts[:k]...), mustMerge(t, parts[k:]...))
		shuffled := append([]*schema.Result(nil), parts...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		nested := mustMerge(t, shuffled[0], mustMerge(t, shuffled[1:]...))
		for name, o := range map[string]*schema.Result{"(a..k)+(k..n)": left, "shuffled, nested": nested, "shuffled": mustMerge(t, shuffled...)} {
			if !sameMerge(m, o) {
				t.Errorf("iter %d: %s differs from the flat merge", iter, name)
			}
		}
	}
}

// sameMerge compares what a merge must reproduce exactly.
func sameMerge(a, b *schema.Result) bool {
	return a.Started.Equal(b.Started) && a.WallS == b.WallS && reflect.DeepEqual(a.Cells, b.Cells) &&
		reflect.DeepEqual(a.Tiers, b.Tiers) && reflect.DeepEqual(a.Requests, b.Requests) && a.Lag == b.Lag &&
		reflect.DeepEqual(a.Timeline, b.Timeline) && a.Host.Hostname == b.Host.Hostname &&
		a.Summary.StorageHealth.OverallStatus == b.Summary.StorageHealth.OverallStatus &&
		a.Summary.DecodeBytesReadGB == b.Summary.DecodeBytesReadGB
}

// TestMergeNamesTheDocument: a merge refused for one document's damaged
// or contradictory figures names that document.
func TestMergeNamesTheDocument(t *testing.T) {
	parts, _ := synth(t, rand.New(rand.NewPCG(1, 2)), 4)
	for _, tt := range []struct {
		name  string
		spoil func(*schema.Result) bool
		want  error
	}{
		{"cell histogram", func(d *schema.Result) bool {
			if len(d.Cells) == 0 {
				return false
			}
			d.Cells[len(d.Cells)-1].FromSchedule.Histogram = "!!"
			return true
		}, hist.ErrCorrupt},
		{"within target", func(d *schema.Result) bool {
			if len(d.Requests.ByQoS) == 0 {
				return false
			}
			d.Requests.ByQoS[0].WithinTarget = d.Requests.ByQoS[0].Count + 1
			return true
		}, results.ErrInconsistent},
		{"lag", func(d *schema.Result) bool { d.Lag.Histogram = ""; return true }, hist.ErrNoHistogram},
	} {
		t.Run(tt.name, func(t *testing.T) {
			docs := make([]*schema.Result, len(parts))
			spoilt := -1
			for i := len(parts) - 1; i >= 0; i-- {
				d := *parts[i]
				d.Cells = slices.Clone(d.Cells)
				d.Requests.ByQoS = slices.Clone(d.Requests.ByQoS)
				if spoilt < 0 && i > 0 && tt.spoil(&d) {
					spoilt = i
				}
				docs[i] = &d
			}
			if spoilt < 0 {
				t.Fatal("test setup: nothing to spoil")
			}
			_, err := MergeRanks(docs)
			if want := fmt.Sprintf("document %d (rank %d)", spoilt+1, docs[spoilt].Rank); !errors.Is(err, tt.want) || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %v naming %s", err, tt.want, want)
			}
		})
	}
}

func TestMergeRefusesScales(t *testing.T) {
	a := &schema.Result{SizeScale: 1}
	b := &schema.Result{SizeScale: 0.5}
	_, err := MergeRanks([]*schema.Result{a, b})
	if !errors.Is(err, ErrIncompatible) || !errors.Is(err, ErrScales) || !strings.Contains(err.Error(), "document 1 and document 2") {
		t.Errorf("error %v, want ErrIncompatible and ErrScales naming both", err)
	}
	// CheckRanks refuses the scales before what --force may override
	// (the same rank twice, here), so a forced merge never gets to them.
	if err := CheckRanks([]*schema.Result{a, a, b}, []string{"a", "a", "b"}); !errors.Is(err, ErrScales) {
		t.Errorf("CheckRanks: %v, want ErrScales", err)
	}
}

func TestRenderUnknownFormat(t *testing.T) {
	r := build(t, goldenInputs[:1], LoadOptions{}, BuildOptions{})
	if err := Render(&bytes.Buffer{}, r, "pdf"); err == nil {
		t.Error("format pdf accepted")
	}
}

func BenchmarkMerge1000(b *testing.B) {
	docs, err := Load(goldenInputs[2:3], nil, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	results := make([]*schema.Result, 1000)
	for i := range results {
		r := *docs[0].Result
		r.Rank = i
		r.Started = r.Started.Add(time.Duration(i) * time.Millisecond)
		results[i] = &r
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MergeRanks(results); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCount: one of a thing is singular ("1 trial", "1 user"), as the
// group titles and the search probes say it.
func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n    int
		what string
		want string
	}{{0, "trial", "0 trials"}, {1, "trial", "1 trial"}, {3, "trial", "3 trials"}, {1, "user", "1 user"}, {17, "user", "17 users"}} {
		if got := count(tt.n, tt.what); got != tt.want {
			t.Errorf("count(%d, %q) = %q, want %q", tt.n, tt.what, got, tt.want)
		}
	}
	r := build(t, goldenInputs[:1], LoadOptions{}, BuildOptions{})
	var b bytes.Buffer
	if err := Render(&b, r, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ": 1 trial\n") {
		t.Errorf("one trial's group title:\n%.300s", b.String())
	}
}

// TestMetricsNoDocumentHas: --metrics naming a metric of the catalogue
// that no document has warns, in every format, instead of leaving its
// rows out silently; the metrics that are there are shown.
func TestMetricsNoDocumentHas(t *testing.T) {
	r := build(t, goldenInputs[:1], LoadOptions{}, BuildOptions{Metrics: []string{"tier3_read_bw", MetricElapsed}})
	if len(r.Metrics) != 1 || r.Metrics[0].Name != MetricElapsed {
		t.Errorf("metrics %v, want elapsed alone", r.Metrics)
	}
	for _, f := range []string{"text", "md", "csv", "json", "bench", "html"} {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "--metrics tier3_read_bw: no document has this metric") {
			t.Errorf("%s: no warning of the missing metric:\n%.800s", f, b.String())
		}
	}
}

// TestReferenceTrials: kv-cache.py's documents carry no trial number;
// several given one label are that group's trials 1, 2, ... in the order
// given, with statistics over them, not refused as "trial 0 given
// twice".
func TestReferenceTrials(t *testing.T) {
	r := build(t, []string{referenceJSON, "testdata/kvcache_py/u50_d20_hand_measured.json"}, LoadOptions{Label: "ref"}, BuildOptions{})
	if len(r.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(r.Groups))
	}
	g := r.Groups[0]
	if len(g.Trials) != 2 || g.TrialID(0) != 1 || g.TrialID(1) != 2 {
		t.Fatalf("trials %v, want 1 and 2", g.TrialIDs)
	}
	if st := g.Stats[MetricElapsed]; st.N != 2 {
		t.Errorf("elapsed over %d trials, want 2", st.N)
	}
}

// TestRatioText: a ratio that would round to 0.00x and is not zero keeps
// two significant digits; a true zero and ordinary ratios keep their
// fixed decimals.
func TestRatioText(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{0, "0.00x"}, {0.0042, "0.0042x"}, {0.004999, "0.005x"}, {0.005, "0.01x"}, {0.935, "0.94x"}, {34.09, "34.09x"}, {1.2e-5, "1.2e-05x"}} {
		if got := ratio(tt.v, true); got != tt.want {
			t.Errorf("ratio(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := ratioNum(0.0004, 3) + "×"; got != "0.0004×" {
		t.Errorf("html ratio of 0.0004: %q", got)
	}
}
