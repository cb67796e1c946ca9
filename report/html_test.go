package report

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"html"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

var updateHTML = flag.Bool("update-html", false, "rewrite report/testdata/html golden files")

// The documents under testdata/html were written by
//
//	go run ./cmd/kvreplay --tier-map Tier-0=ram,Tier-1=ram,Tier-2=nvme \
//	  --size-scale 1/4096 --speed 6 --dir $(mktemp -d) -o a1.json \
//	  testdata/reference/llama8b_u10_d30_gpu0_cpu4_s42.csv
//
// (a2.json the same again; b1.json with Tier-2=ram), so that the renderers
// meet real histograms and timelines.

// testMetrics are the metrics the test reports compare.
var testMetrics = []struct {
	Metric
	get func(*schema.Result) float64
}{
	{Metric{"storage_read_p95", "ms", "lower"}, func(r *schema.Result) float64 { return r.Summary.StorageReadP95MS }},
	{Metric{"storage_write_p95", "ms", "lower"}, func(r *schema.Result) float64 { return r.Summary.StorageWriteP95MS }},
	{Metric{"storage_read_bandwidth", "GB/s", "higher"}, func(r *schema.Result) float64 { return r.Summary.TierStorageReadBandwidthGBps }},
	{Metric{"lag_p99", "ms", "lower"}, func(r *schema.Result) float64 { return r.Lag.P99US / 1000 }},
}

func loadTestResult(tb testing.TB, name string) *schema.Result {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "html", name))
	if err != nil {
		tb.Fatal(err)
	}
	var r schema.Result
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return &r
}

// testStats is a plain computation of the statistics the renderers show;
// the report engine's own lives in stats.go.
func testStats(vals []float64) Stats {
	s := slices.Clone(vals)
	slices.Sort(s)
	st := Stats{N: len(s), Min: s[0], Max: s[len(s)-1], P95: s[len(s)-1]}
	if len(s)%2 == 1 {
		st.Median = s[len(s)/2]
	} else {
		st.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	for _, v := range s {
		st.Mean += v
	}
	st.Mean /= float64(len(s))
	for _, v := range s {
		st.StdDev += (v - st.Mean) * (v - st.Mean)
	}
	st.StdDev = math.Sqrt(st.StdDev / float64(len(s)))
	if st.Mean != 0 {
		st.CV = st.StdDev / st.Mean
	}
	return st
}

func testGroup(label string, trials ...*schema.Result) *Group {
	g := &Group{Label: label, Trials: trials, Values: map[string][]float64{}, Stats: map[string]Stats{}}
	for _, t := range trials {
		g.Health = append(g.Health, string(t.Summary.StorageHealth.OverallStatus))
		vals := map[string]float64{}
		for _, m := range testMetrics {
			vals[m.Name] = m.get(t)
			g.Values[m.Name] = append(g.Values[m.Name], m.get(t))
		}
		g.TrialValues = append(g.TrialValues, vals) // as buildGroup keeps them
	}
	for name, vals := range g.Values {
		g.Stats[name] = testStats(vals)
	}
	return g
}

// testReport builds a two-group report from the stored kvreplay documents.
func testReport(tb testing.TB) *Report {
	tb.Helper()
	a := testGroup("ram+nvme", loadTestResult(tb, "a1.json"), loadTestResult(tb, "a2.json"))
	b := testGroup("ram only", loadTestResult(tb, "b1.json"))
	r := &Report{Groups: []*Group{a, b}, Comparison: &Comparison{Baseline: a.Label}}
	for _, m := range testMetrics {
		r.Metrics = append(r.Metrics, m.Metric)
		base := a.Stats[m.Name].Median
		med := b.Stats[m.Name].Median
		win := 0.0
		if (m.Better == "higher") == (b.Values[m.Name][0] > a.Values[m.Name][0]) {
			win = 1
		}
		r.Comparison.Rows = append(r.Comparison.Rows, ComparisonRow{
			Metric:   m.Metric,
			Baseline: base,
			Medians:  map[string]float64{a.Label: base, b.Label: med},
			Ratios:   map[string]float64{a.Label: 1, b.Label: med / base},
			WinRate:  map[string]float64{b.Label: win},
		})
	}
	return r
}

func renderHTMLString(tb testing.TB, r *Report) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := renderHTML(&buf, r); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// htmlSections are the section titles every report page has.
var htmlSections = []string{"Warnings", "Summary", "Comparison", "Storage health", "Per-trial scatter",
	"Group: ram+nvme", "Group: ram only", "Latency CDF", "Offered load timeline", "Lag over time"}

// withoutCSS checks that page carries report.css inline, once, and returns
// the page with the style sheet's text replaced by its name: the golden
// file holds what the report says, and the style sheet lives in one place.
func withoutCSS(t *testing.T, page string) string {
	t.Helper()
	const open = "<style>\n"
	if strings.Count(page, htmlCSS) != 1 || !strings.Contains(page, open+htmlCSS+"</style>") {
		t.Fatalf("the page does not carry report.css inline in its <style>, once")
	}
	return strings.Replace(page, open+htmlCSS, open+"/* report.css */\n", 1)
}

// assertSelfContained fails when page could load anything from elsewhere.
func assertSelfContained(t *testing.T, page string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(lower, bad) {
			t.Errorf("page contains %q: not self-contained", bad)
		}
	}
}

func TestHTMLGolden(t *testing.T) {
	r := testReport(t)
	page := renderHTMLString(t, r)
	if again := renderHTMLString(t, r); again != page {
		t.Fatal("two renders of one report differ")
	}
	body := withoutCSS(t, page)
	golden := filepath.Join("testdata", "html", "report.golden.html")
	if *updateHTML {
		if err := os.WriteFile(golden, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run TestHTMLGolden -update-html)", err)
	}
	if body != string(want) {
		t.Errorf("page differs from %s (run with -update-html after checking the change)", golden)
	}
	assertSelfContained(t, page)
	for _, s := range htmlSections {
		if !strings.Contains(html.UnescapeString(page), ">"+s) {
			t.Errorf("page lacks section %q", s)
		}
	}
	for _, s := range []string{"SCALED RUN", "PASS", "<polyline", "Tier-1 Read", "Tier-2 Write", "median"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	// One CDF, one lag chart per group, one bandwidth chart per tier used,
	// one scatter per metric.
	if n, want := strings.Count(page, "<svg"), 2*(1+1+2)+len(r.Metrics); n != want {
		t.Errorf("page has %d charts, want %d", n, want)
	}
}

func TestHTMLEscapesAndFlags(t *testing.T) {
	bad := loadTestResult(t, "a1.json")
	bad.Complete = false
	bad.IncompleteReason = "disk full <sda>"
	bad.Errors.Count = 3
	bad.Summary.StorageHealth.OverallStatus = "FAIL"
	bad.Summary.StorageHealth.Criteria[0].Passed = false
	// kvreport judges the figures again: make them fail.
	bad.Summary.StorageWriteP95MS, bad.Summary.StorageReadP95MS = 900, 900
	bad.Cells[0].Latency.Histogram = "not base64!"
	g := testGroup(`<script>alert("x")</script>`, bad)
	g.Values["storage_read_p95"] = []float64{math.NaN()}
	delete(g.Stats, "storage_write_p95")
	empty := &Group{Label: "empty & none"}
	r := &Report{
		Metrics:  []Metric{{"storage_read_p95", "ms", "lower"}, {"storage_write_p95", "ms", "lower"}},
		Groups:   []*Group{g, empty},
		Warnings: []string{"MIXED <configs>"},
	}
	page := renderHTMLString(t, r)
	assertSelfContained(t, page)
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",
		"MIXED &lt;configs&gt;",
		"INCOMPLETE RUN",
		"disk full &lt;sda&gt;",
		"3 operations failed",
		`class="fail">FAIL`,
		"<b>FAIL</b>",
		"latency histogram:",
		"No comparison",
		"empty &amp; none",
		"no trial documents",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "disk full <sda>") {
		t.Error("page holds unescaped text")
	}
}

func TestSVGTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 97, []float64{0, 20, 40, 60, 80, 100}},
		{0, 0, []float64{0, 1}},
		{5, 5, []float64{2, 3, 4, 5, 6, 7, 8}},
		{0, 1234, []float64{0, 200, 400, 600, 800, 1000, 1200, 1400}},
	} {
		got := svgTicks(tc.lo, tc.hi)
		if !slices.Equal(got, tc.want) {
			t.Errorf("svgTicks(%v, %v) = %v, want %v", tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestHTMLNum(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {math.NaN(), "–"}, {12345.6, "12346"}, {123.456, "123.5"}, {1.23456, "1.235"},
		{0.0123456, "0.01235"}, {-2.5, "-2.500"}, {0.00001234, "1.234e-05"},
	} {
		if got := htmlNum(tc.v); got != tc.want {
			t.Errorf("htmlNum(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// chromiumPath finds a Chromium to render the page with, or "".
func chromiumPath() string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// consoleError matches what Chromium logs for a page's script errors and
// failed loads.
var consoleError = regexp.MustCompile(`(?i)uncaught|console\(|CONSOLE|net::ERR_|Failed to load`)

// TestHTMLChromium renders the report page in headless Chromium: it must
// load, draw a non-blank screenshot, hold the section titles in its DOM and
// log no console errors. KVREPORT_SCREENSHOT=path keeps the screenshot.
func TestHTMLChromium(t *testing.T) {
	chromium := chromiumPath()
	if chromium == "" {
		t.Skip("chromium not installed (apt-get install chromium): the page is not rendered in a browser")
	}
	if testing.Short() {
		t.Skip("-short: skipping the browser")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(renderHTMLString(t, testReport(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	run := func(extra ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		args := append([]string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0",
		}, extra...)
		args = append(args, "file://"+page)
		cmd := exec.CommandContext(ctx, chromium, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", chromium, strings.Join(extra, " "), err, errb.String())
		}
		return out.String(), errb.String()
	}

	_, stderr := run("--screenshot="+shot, "--window-size=1400,2000", "--hide-scrollbars")
	checkConsole(t, stderr)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	var ink, total int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			total++
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
		}
	}
	if share := float64(ink) / float64(total); share < 0.01 {
		t.Errorf("screenshot %dx%d is blank: %.2f%% of pixels not white", b.Dx(), b.Dy(), 100*share)
	} else {
		t.Logf("screenshot %dx%d: %.1f%% of pixels not white", b.Dx(), b.Dy(), 100*share)
	}
	if keep := os.Getenv("KVREPORT_SCREENSHOT"); keep != "" {
		png, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(keep, png, 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}

	dom, stderr := run("--dump-dom")
	checkConsole(t, stderr)
	for _, s := range htmlSections {
		if !strings.Contains(html.UnescapeString(dom), ">"+s) {
			t.Errorf("rendered DOM lacks section %q", s)
		}
	}
	if n := strings.Count(dom, "<svg"); n < 8 {
		t.Errorf("rendered DOM has %d charts, want at least 8", n)
	}
}

func checkConsole(t *testing.T, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if consoleError.MatchString(line) {
			t.Errorf("chromium logged: %s", line)
		}
	}
}

// TestHTMLTrialNumbers: a group's table of trials and the charts of its
// first trial name the trials by their numbers (kvreplay --trial), as the
// page's other tables and every other format do; they named trials 5 and
// 7 "1" and "2", and charted trial 5 as "trial 1".
func TestHTMLTrialNumbers(t *testing.T) {
	var docs []*Doc
	for _, trial := range []int{5, 7} {
		r := loadTestResult(t, "a1.json")
		r.Trial = trial
		docs = append(docs, &Doc{Path: "a" + strconv.Itoa(trial) + ".json", Kind: KindKVReplay, Label: "a", Trial: trial, Result: r})
	}
	rep, err := Build(docs, BuildOptions{Metrics: []string{MetricHealth}})
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	if err := Render(&page, rep, "html"); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	for _, want := range []string{`<tr><td>5</td><td class="l">`, `<tr><td>7</td><td class="l">`,
		"Latency CDF per tier × operation (trial 5)", "(trial 5)</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("html: no %q", want)
		}
	}
	if strings.Contains(s, "(trial 1)") || strings.Contains(s, `<tr><td>1</td><td class="l">`) {
		t.Errorf("html: names a trial 1 of trials 5 and 7")
	}
}
