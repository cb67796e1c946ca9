package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/hist"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

func init() { renderers["html"] = renderHTML }

// renderHTML writes r as one self-contained HTML page: inline CSS and
// inline SVG charts drawn here, no scripts, fonts or links, so the page
// opens offline and can be mailed as one file. The page is a pure function
// of r: the same Report gives the same bytes.
//
// Charts of a group are drawn from its first trial (a trial's ranks are
// already merged exactly); the tables and scatters cover every trial.
func renderHTML(w io.Writer, r *Report) error {
	page := buildHTMLPage(r)
	if err := htmlTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("report: html: %w", err)
	}
	return nil
}

// htmlPage is what htmlTemplate renders.
type htmlPage struct {
	Warnings   []string
	Metrics    []Metric
	Summary    []htmlSummaryRow
	Comparison *htmlComparison
	Health     []htmlHealthRow
	SLA        []htmlSLARow
	Storage    *htmlTable // where each tier lived (pathTable); nil when no run says
	Scatters   []template.HTML
	Groups     []htmlGroup
	Defs       []htmlMetricDef
}

// htmlSLARow is one QoS class of one trial: its p95 against its target.
type htmlSLARow struct {
	Group, QoS          string
	Trial               int
	Requests            int64
	P95, Target, Within string
	Verdict             htmlCell
	Why                 string
}

// htmlTable is a table of the tabular formats, for the template.
type htmlTable struct {
	Header []string
	Rows   [][]string
	Notes  []string
}

// htmlMetricDef defines a metric of the report.
type htmlMetricDef struct {
	Metric
	Target, Desc string
}

type htmlSummaryRow struct {
	Label  string
	Trials int
	Cells  []htmlCell
}

// htmlCell is a formatted figure with a CSS class ("" or good, bad, fail,
// pass, na).
type htmlCell struct {
	Text  string
	Class string
}

type htmlComparison struct {
	Baseline string
	Groups   []string
	Rows     []htmlComparisonRow
	Note     string // what "-" means (comparisonNote)
}

type htmlComparisonRow struct {
	Metric   Metric
	Baseline string
	Cells    []htmlCell // per group: median, ratio, win rate
}

type htmlHealthRow struct {
	Group    string
	Trial    int
	Status   htmlCell
	Criteria []htmlCriterion
	Why      []string // why the status is not PASS
	Scope    string   // what it judged, where the SLA was not measured (healthScope)
}

type htmlCriterion struct {
	Name   string
	Actual string
	Target string
	Passed bool
	Reason string
}

type htmlGroup struct {
	Label     string
	Anchor    string
	Trials    []htmlTrial
	Notes     []string
	CDF       template.HTML
	Bandwidth []template.HTML
	Lag       template.HTML
}

type htmlTrial struct {
	N         int
	System    string
	WallS     string
	Complete  bool
	Reason    string
	SizeScale string
	Errors    int64
	FailedOps int64
	Rows      int64
	LagP99    string
}

func buildHTMLPage(r *Report) *htmlPage {
	p := &htmlPage{Metrics: r.Metrics, Warnings: htmlWarnings(r)}
	for _, g := range r.Groups {
		row := htmlSummaryRow{Label: g.labelNoted(), Trials: len(g.Trials)}
		for _, m := range r.Metrics {
			st, ok := g.Stats[m.Name]
			if !ok || st.N == 0 {
				row.Cells = append(row.Cells, htmlCell{Text: "–", Class: "na"})
				continue
			}
			txt := nearTarget(m.Name, st.Median, htmlNum(st.Median))
			if st.N > 1 {
				txt += " ±" + strconv.FormatFloat(100*st.CV, 'f', 1, 64) + "%"
			}
			row.Cells = append(row.Cells, htmlCell{Text: txt})
		}
		p.Summary = append(p.Summary, row)
	}
	p.Comparison = buildHTMLComparison(r)
	p.Health = buildHTMLHealth(r)
	for _, s := range slaRows(r) {
		v := htmlCell{Text: s.verdict(), Class: "na"}
		switch {
		case s.Measured && s.Met:
			v.Class = "pass"
		case s.Measured:
			v.Class = "fail"
		}
		p.SLA = append(p.SLA, htmlSLARow{Group: s.Group, QoS: s.QoS, Trial: s.Trial, Requests: s.Requests,
			P95: htmlMS(s.P95MS), Target: htmlMS(s.TargetMS), Within: s.within(), Verdict: v, Why: s.Why})
	}
	if t := pathTable(r); t != nil {
		p.Storage = &htmlTable{Header: t.header, Rows: t.rows, Notes: t.notes}
	}
	for _, m := range r.Metrics {
		d := htmlMetricDef{Metric: m, Target: "–", Desc: MetricDescription(m.Name)}
		if v, ok := MetricTarget(m.Name); ok {
			d.Target = htmlNum(v)
		}
		p.Defs = append(p.Defs, d)
	}
	for _, m := range r.Metrics {
		if s := svgScatter(r, m); s != "" {
			p.Scatters = append(p.Scatters, s)
		}
	}
	for i, g := range r.Groups {
		p.Groups = append(p.Groups, buildHTMLGroup(i, g))
	}
	return p
}

// htmlWarnings are the report's warnings (allWarnings).
func htmlWarnings(r *Report) []string { return allWarnings(r) }

func buildHTMLComparison(r *Report) *htmlComparison {
	c := r.Comparison
	if c == nil || len(c.Rows) == 0 {
		return nil
	}
	hc := &htmlComparison{Baseline: c.Baseline, Note: strings.Join(append([]string{comparisonNote}, notComparedNotes(r)...), "; ")}
	for _, g := range r.Groups {
		if g.Label != c.Baseline {
			hc.Groups = append(hc.Groups, g.Label)
		}
	}
	for _, row := range c.Rows {
		hr := htmlComparisonRow{Metric: row.Metric, Baseline: nearTarget(row.Metric.Name, row.Baseline, htmlNum(row.Baseline))}
		for _, label := range hc.Groups {
			med, ok := row.Medians[label]
			if !ok {
				hr.Cells = append(hr.Cells, htmlCell{"–", "na"}, htmlCell{"–", "na"}, htmlCell{"–", "na"})
				continue
			}
			hr.Cells = append(hr.Cells, htmlCell{Text: nearTarget(row.Metric.Name, med, htmlNum(med))})
			ratio, ok := row.Ratios[label]
			if !ok || math.IsNaN(ratio) || math.IsInf(ratio, 0) {
				hr.Cells = append(hr.Cells, htmlCell{"–", "na"})
			} else {
				hr.Cells = append(hr.Cells, htmlCell{Text: ratioNum(ratio, 3) + "×", Class: htmlRatioClass(ratio, row.Metric.Better)})
			}
			win, ok := row.WinRate[label]
			if !ok || math.IsNaN(win) {
				hr.Cells = append(hr.Cells, htmlCell{"–", "na"})
			} else {
				hr.Cells = append(hr.Cells, htmlCell{Text: strconv.FormatFloat(100*win, 'f', 0, 64) + "%"})
			}
		}
		hc.Rows = append(hc.Rows, hr)
	}
	return hc
}

// htmlRatioClass colours a ratio by whether it is better than the baseline.
func htmlRatioClass(ratio float64, better string) string {
	switch {
	case math.Abs(ratio-1) < 1e-9:
		return ""
	case (ratio > 1) == (better == "higher"):
		return "good"
	default:
		return "bad"
	}
}

func buildHTMLHealth(r *Report) []htmlHealthRow {
	var rows []htmlHealthRow
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			row := htmlHealthRow{Group: g.Label, Trial: g.TrialID(i)}
			status := ""
			if t != nil {
				sh := judgedHealth(t)
				status, row.Why, row.Scope = string(sh.OverallStatus), sh.Reasons, healthScope(t)
				for _, c := range sh.Criteria {
					row.Criteria = append(row.Criteria, htmlCriterion{
						Name:   c.Name,
						Actual: htmlNum(c.Actual) + " " + c.Unit,
						Target: htmlNum(c.Target) + " " + c.Unit,
						Passed: c.Passed,
						Reason: c.Reason,
					})
				}
			}
			if status == "" && i < len(g.Health) {
				status = g.Health[i]
			}
			row.Status = htmlHealthCell(status)
			rows = append(rows, row)
		}
	}
	return rows
}

func htmlHealthCell(status string) htmlCell {
	switch st := schema.HealthStatus(strings.ToUpper(status)); st {
	case schema.HealthPass, schema.HealthFail:
		return htmlCell{Text: string(st), Class: strings.ToLower(status)}
	case "":
		return htmlCell{Text: "n/a", Class: "na"}
	default:
		return htmlCell{Text: status, Class: "na"}
	}
}

func buildHTMLGroup(i int, g *Group) htmlGroup {
	hg := htmlGroup{Label: g.Label, Anchor: "group-" + strconv.Itoa(i+1)}
	if g.Simulated {
		hg.Notes = append(hg.Notes, "SIMULATED: "+simulatedNote+": its figures are virtual time, not a device's")
	}
	for _, id := range slices.Sorted(maps.Keys(g.NotMeasured)) {
		hg.Notes = append(hg.Notes, fmt.Sprintf("%s: trial %d: %s: its figures are shown, compared with nothing", results.VerdictNotAMeasurement, id, g.NotMeasured[id]))
	}
	for j, t := range g.Trials {
		if t == nil {
			continue
		}
		hg.Trials = append(hg.Trials, htmlTrial{
			N:         g.TrialID(j),
			System:    t.System,
			WallS:     strconv.FormatFloat(t.WallS, 'f', 3, 64),
			Complete:  t.Complete,
			Reason:    t.IncompleteReason,
			SizeScale: strconv.FormatFloat(t.SizeScale, 'g', 6, 64),
			Errors:    t.Errors.Count,
			FailedOps: failedOps(t),
			Rows:      t.Replay.RowsDone,
			LagP99:    htmlNum(t.Lag.P99US/1000) + " ms",
		})
	}
	if len(g.Trials) == 0 || g.Trials[0] == nil {
		hg.Notes = append(hg.Notes, "no trial documents: nothing to plot")
		return hg
	}
	t, id := g.Trials[0], g.TrialID(0)
	var notes []string
	hg.CDF, notes = svgCDF(t, id)
	hg.Notes = append(hg.Notes, notes...)
	hg.Bandwidth = svgBandwidth(t, id)
	hg.Lag = svgLag(t, id)
	return hg
}

// svgCDFPercentiles are the percentiles a CDF is drawn at: every percent,
// then finer towards the tail, to 99.999.
var svgCDFPercentiles = func() []float64 {
	var ps []float64
	for p := 0; p < 99; p++ {
		ps = append(ps, float64(p))
	}
	for _, base := range []float64{99, 99.9, 99.99} {
		step := (100 - base) / 10
		for k := 0; k < 10; k++ {
			ps = append(ps, base+float64(k)*step)
		}
	}
	return append(ps, 99.999)
}()

// svgCDF draws the latency CDF of each tier x operation of t, trial
// number trial, the phases of a tier and operation merged exactly.
// Histograms that do not decode are left out and named in the notes.
func svgCDF(t *schema.Result, trial int) (template.HTML, []string) {
	type key struct{ tier, op string }
	var keys []key
	byKey := map[key][]schema.Latency{}
	for _, c := range t.Cells {
		k := key{c.Tier, c.Op}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], c.Latency)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].tier != keys[j].tier {
			return keys[i].tier < keys[j].tier
		}
		return keys[i].op < keys[j].op
	})
	var notes []string
	ch := svgLineChart{
		Title:  fmt.Sprintf("Latency CDF per tier × operation (trial %d)", trial),
		XLabel: "latency (µs, log scale)",
		YLabel: "fraction of operations",
		LogX:   true,
		YMin:   0, YMax: 1, FixedY: true,
	}
	for _, k := range keys {
		name := k.tier + " " + k.op
		l, err := hist.MergeLatencies(byKey[k]...)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: latency histogram: %v", name, err))
			continue
		}
		h, err := hist.FromLatency(l)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: latency histogram: %v", name, err))
			continue
		}
		if h.Count() == 0 {
			continue
		}
		s := svgSeries{Name: fmt.Sprintf("%s (n=%d)", name, h.Count())}
		for _, p := range svgCDFPercentiles {
			v := float64(h.ValueAtPercentile(p))
			if v < 1 {
				v = 1
			}
			pt := svgPoint{v, p / 100}
			if n := len(s.Points); n > 0 && s.Points[n-1] == pt {
				continue
			}
			s.Points = append(s.Points, pt)
		}
		ch.Series = append(ch.Series, s)
	}
	if len(ch.Series) == 0 {
		return "", append(notes, "no latency histograms to plot")
	}
	return ch.SVG(), notes
}

// svgBandwidth draws the GB/s (decimal) read and written in each second
// of the timeline of t, trial number trial, for each tier that moved
// bytes: the offered load over time, not the device rate that kvbench
// calls a tier's bandwidth. The run ends inside its last second, so that
// second's bytes are drawn over its real length (t.WallS less its start),
// not as a full second's; where the wall time does not give that length
// (not past the second's start), the last second is left out, and the
// chart's title says so.
func svgBandwidth(t *schema.Result, trial int) []template.HTML {
	timeline, last, note := t.Timeline, 1.0, ""
	if n := len(timeline); n > 0 {
		switch l := t.WallS - float64(timeline[n-1].T); {
		case l <= 0:
			timeline, note = timeline[:n-1], ": last second left out, its length unknown"
		case l < 1:
			last = l
		}
	}
	var out []template.HTML
	for tier := schema.Tier(0); tier < schema.NumTiers; tier++ {
		var moved bool
		rd := svgSeries{Name: "read"}
		wr := svgSeries{Name: "write"}
		for i, s := range timeline {
			secs := 1.0
			if i == len(t.Timeline)-1 {
				secs = last
			}
			moved = moved || s.ReadBytes[tier] != 0 || s.WriteBytes[tier] != 0
			rd.Points = append(rd.Points, svgPoint{float64(s.T), float64(s.ReadBytes[tier]) / results.GB / secs})
			wr.Points = append(wr.Points, svgPoint{float64(s.T), float64(s.WriteBytes[tier]) / results.GB / secs})
		}
		if !moved {
			continue
		}
		ch := svgLineChart{
			Title:  fmt.Sprintf("Offered load timeline %s (trial %d)%s", tier, trial, note),
			XLabel: "time (s)",
			YLabel: "GB/s",
			Series: []svgSeries{rd, wr},
			YMin:   0,
		}
		out = append(out, ch.SVG())
	}
	return out
}

// svgLag draws the p99 issue lag of each second of t, trial number trial.
func svgLag(t *schema.Result, trial int) template.HTML {
	if len(t.Timeline) == 0 {
		return ""
	}
	s := svgSeries{Name: "lag p99"}
	for _, sec := range t.Timeline {
		s.Points = append(s.Points, svgPoint{float64(sec.T), sec.LagP99US / 1000})
	}
	ch := svgLineChart{
		Title:  fmt.Sprintf("Lag over time: p99 issue lag behind schedule (trial %d)", trial),
		XLabel: "time (s)",
		YLabel: "ms",
		Series: []svgSeries{s},
	}
	return ch.SVG()
}

// svgScatter draws each group's trial values of m, with the median as a
// bar; "" when no group has the metric.
func svgScatter(r *Report, m Metric) template.HTML {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range r.Groups {
		for _, v := range g.Values[m.Name] {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi {
		return ""
	}
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	ticks := svgTicks(lo, hi)
	lo, hi = ticks[0], ticks[len(ticks)-1]
	const (
		left, right, top, bottom = 70.0, 16.0, 44.0, 44.0
		minColW, height          = 110.0, 250.0
	)
	n := float64(len(r.Groups))
	width := math.Max(left+right+minColW*n, 300)
	colW := (width - left - right) / n
	plotH := height - top - bottom
	yPix := func(v float64) float64 { return scale(v, hi, lo, top, plotH) } // up
	var b strings.Builder
	openSVG(&b, width, height)
	title := m.Name
	if m.Unit != "" {
		title += " (" + m.Unit + ")"
	}
	fmt.Fprintf(&b, `<text x="8" y="16" class="title">%s</text>`, template.HTMLEscapeString(title))
	if m.Better != "" {
		fmt.Fprintf(&b, `<text x="8" y="31" class="tick">%s is better</text>`, template.HTMLEscapeString(m.Better))
	}
	for _, tk := range ticks {
		y := yPix(tk)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="grid"/>`, svgNum(left), svgNum(width-right), svgNum(y), svgNum(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, svgNum(left-6), svgNum(y+4), template.HTMLEscapeString(svgTickLabel(tk)))
	}
	for i, g := range r.Groups {
		cx := left + colW*(float64(i)+0.5)
		// Each trial's own value, named by its trial number; a trial
		// without the metric has no dot.
		var vals []float64
		var ids []int
		for i := range g.Trials {
			if v, ok := trialValue(g, i, m.Name); ok {
				vals, ids = append(vals, v), append(ids, g.TrialID(i))
			}
		}
		for j, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			// Spread the trials across the column, deterministically, so
			// equal values stay visible.
			dx := 0.0
			if len(vals) > 1 {
				dx = (float64(j)/float64(len(vals)-1) - 0.5) * colW * 0.5
			}
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="%s" fill-opacity="0.7"><title>%s trial %d: %s</title></circle>`,
				svgNum(cx+dx), svgNum(yPix(v)), svgPalette[i%len(svgPalette)], template.HTMLEscapeString(g.Label), ids[j], template.HTMLEscapeString(htmlNum(v)))
		}
		if st, ok := g.Stats[m.Name]; ok && st.N > 0 {
			y := yPix(st.Median)
			fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="median"><title>median %s</title></line>`,
				svgNum(cx-colW*0.35), svgNum(cx+colW*0.35), svgNum(y), svgNum(y), template.HTMLEscapeString(htmlNum(st.Median)))
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, svgNum(cx), svgNum(height-bottom+16), template.HTMLEscapeString(htmlTruncate(g.Label, 16)))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">median: bar; trials: dots</text>`, svgNum(left+(width-left-right)/2), svgNum(height-8))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// svgPoint is a chart svgPoint in data units.
type svgPoint struct{ X, Y float64 }

// svgSeries is one line of a chart.
type svgSeries struct {
	Name   string
	Points []svgPoint
}

// svgLineChart is a line chart drawn as inline SVG, with a legend on the
// right. Text is escaped here; the result is safe to embed.
type svgLineChart struct {
	Title, XLabel, YLabel string
	LogX                  bool
	// YMin anchors the y axis (0 for rates); FixedY also fixes YMax.
	YMin, YMax float64
	FixedY     bool
	Series     []svgSeries
}

// svgPalette is colour-blind safe (Okabe and Ito, "Color Universal Design").
var svgPalette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// SVG renders c.
func (c svgLineChart) SVG() template.HTML {
	const (
		width, height            = 640.0, 300.0
		left, right, top, bottom = 70.0, 170.0, 34.0, 48.0
	)
	plotW, plotH := width-left-right, height-top-bottom
	xlo, xhi := math.Inf(1), math.Inf(-1)
	ylo, yhi := c.YMin, c.YMin
	for _, s := range c.Series {
		for _, p := range s.Points {
			xlo, xhi = math.Min(xlo, p.X), math.Max(xhi, p.X)
			yhi = math.Max(yhi, p.Y)
			ylo = math.Min(ylo, p.Y)
		}
	}
	if xlo > xhi {
		return ""
	}
	if c.FixedY {
		ylo, yhi = c.YMin, c.YMax
	}
	yTicks := svgTicks(ylo, yhi)
	ylo, yhi = yTicks[0], yTicks[len(yTicks)-1]
	var xTicks []float64
	if c.LogX {
		xlo = math.Pow(10, math.Floor(math.Log10(math.Max(xlo, 1))))
		xhi = math.Pow(10, math.Ceil(math.Log10(math.Max(xhi, 1))))
		if xhi <= xlo {
			xhi = xlo * 10
		}
		for v := xlo; v <= xhi*1.0001; v *= 10 {
			xTicks = append(xTicks, v)
		}
	} else {
		xTicks = svgTicks(xlo, xhi)
		xlo, xhi = xTicks[0], xTicks[len(xTicks)-1]
	}
	xPix := func(v float64) float64 {
		if c.LogX {
			return scale(math.Log10(v), math.Log10(xlo), math.Log10(xhi), left, plotW)
		}
		return scale(v, xlo, xhi, left, plotW)
	}
	yPix := func(v float64) float64 { return scale(v, yhi, ylo, top, plotH) } // up
	var b strings.Builder
	openSVG(&b, width, height)
	fmt.Fprintf(&b, `<text x="%s" y="18" class="title">%s</text>`, svgNum(left), template.HTMLEscapeString(c.Title))
	for _, tk := range yTicks {
		y := yPix(tk)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="grid"/>`, svgNum(left), svgNum(left+plotW), svgNum(y), svgNum(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, svgNum(left-6), svgNum(y+4), template.HTMLEscapeString(svgTickLabel(tk)))
	}
	for _, tk := range xTicks {
		x := xPix(tk)
		fmt.Fprintf(&b, `<line x1="%s" x2="%s" y1="%s" y2="%s" class="grid"/>`, svgNum(x), svgNum(x), svgNum(top), svgNum(top+plotH))
		label := svgTickLabel(tk)
		if c.LogX {
			label = htmlMicros(tk)
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, svgNum(x), svgNum(top+plotH+16), template.HTMLEscapeString(label))
	}
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`, svgNum(left), svgNum(top), svgNum(plotW), svgNum(plotH))
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, svgNum(left+plotW/2), svgNum(height-10), template.HTMLEscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text x="16" y="%s" class="axis" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`, svgNum(top+plotH/2), svgNum(top+plotH/2), template.HTMLEscapeString(c.YLabel))
	for i, s := range c.Series {
		colour := svgPalette[i%len(svgPalette)]
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, svgNum(xPix(p.X))+","+svgNum(yPix(p.Y)))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), colour)
		if len(s.Points) <= 60 {
			for _, p := range s.Points {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, svgNum(xPix(p.X)), svgNum(yPix(p.Y)), colour)
			}
		}
		ly := top + 8 + float64(i)*18
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`, svgNum(left+plotW+12), svgNum(ly-10), colour)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend">%s</text>`, svgNum(left+plotW+30), svgNum(ly), template.HTMLEscapeString(htmlTruncate(s.Name, 24)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// svgTicks returns 2 to about 7 evenly spaced round values covering lo to
// hi (Heckbert, "Nice numbers for graph labels", Graphics Gems, 1990).
func svgTicks(lo, hi float64) []float64 {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			return []float64{0, 1}
		}
		d := math.Abs(lo) / 2
		lo, hi = lo-d, hi+d
	}
	step := svgNiceNum((hi-lo)/5, true)
	first, last := math.Floor(lo/step), math.Ceil(hi/step)
	var ticks []float64
	for k := first; k <= last && len(ticks) < 20; k++ {
		// Round away the binary fraction (0.6000000000000001) so labels
		// print as the round numbers they are.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(k*step, 'g', 12, 64), 64)
		ticks = append(ticks, v)
	}
	return ticks
}

func svgNiceNum(x float64, round bool) float64 {
	exp := math.Floor(math.Log10(x))
	f := x / math.Pow(10, exp)
	var nf float64
	switch {
	case round && f < 1.5, !round && f <= 1:
		nf = 1
	case round && f < 3, !round && f <= 2:
		nf = 2
	case round && f < 7, !round && f <= 5:
		nf = 5
	default:
		nf = 10
	}
	return nf * math.Pow(10, exp)
}

// svgNum formats an SVG coordinate: two decimals, no trailing zeros.
func svgNum(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// htmlMS is a latency in ms, "–" alone when missing.
func htmlMS(v float64) string {
	if math.IsNaN(v) {
		return htmlNum(v)
	}
	return htmlNum(v) + " ms"
}

// htmlNum formats a figure with about four significant digits and no
// exponent for the ranges reports meet; "–" for NaN.
func htmlNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	prec := 0
	switch {
	case a >= 1000:
		prec = 0
	case a >= 100:
		prec = 1
	case a >= 10:
		prec = 2
	case a >= 1:
		prec = 3
	case a >= 0.001:
		prec = 3 - int(math.Floor(math.Log10(a)))
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// htmlMicros labels a microsecond axis tick: 1µs, 10µs, 100µs, 1ms...
func htmlMicros(us float64) string {
	switch {
	case us >= 1e6:
		return svgTickLabel(us/1e6) + "s"
	case us >= 1e3:
		return svgTickLabel(us/1e3) + "ms"
	default:
		return svgTickLabel(us) + "µs"
	}
}

// svgTickLabel prints a round tick value with the digits it has and no
// more.
func svgTickLabel(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func htmlTruncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kvbench report</title>
<style>
` + htmlCSS + `</style>
</head>
<body>
<h1>kvbench report</h1>
<nav><a href="#summary">Summary</a><a href="#comparison">Comparison</a><a href="#health">Storage health</a><a href="#sla">SLA</a><a href="#scatter">Per-trial scatter</a><a href="#metrics">Metrics</a>{{range .Groups}}<a href="#{{.Anchor}}">{{.Label}}</a>{{end}}</nav>
{{if .Warnings}}<section class="warnings" id="warnings">
<h2>Warnings</h2>
<ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>
</section>{{end}}
<section id="summary">
<h2>Summary</h2>
<p>Median of each metric over a group's trials; ± is the coefficient of variation.</p>
<table>
<tr><th class="l">group</th><th>trials</th>{{range .Metrics}}<th>{{.Name}}{{if .Unit}} ({{.Unit}}){{end}}</th>{{end}}</tr>
{{range .Summary}}<tr><td class="l">{{.Label}}</td><td>{{.Trials}}</td>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
</section>
<section id="comparison">
<h2>Comparison</h2>
{{with .Comparison}}<p>Ratio of each group's median to the baseline's ({{.Baseline}}); win rate: share of matched trials better than the baseline; {{.Note}}.</p>
<table>
<tr><th class="l" rowspan="2">metric</th><th rowspan="2">better</th><th rowspan="2">{{.Baseline}} (baseline)</th>{{range .Groups}}<th colspan="3">{{.}}</th>{{end}}</tr>
<tr>{{range .Groups}}<th>median</th><th>ratio</th><th>win rate</th>{{end}}</tr>
{{range .Rows}}<tr><td class="l">{{.Metric.Name}}{{if .Metric.Unit}} ({{.Metric.Unit}}){{end}}</td><td>{{.Metric.Better}}</td><td>{{.Baseline}}</td>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{else}}<p class="na">No comparison: one group only, or no baseline.</p>{{end}}
</section>
<section id="health">
<h2>Storage health</h2>
<table>
<tr><th class="l">group</th><th>trial</th><th>status</th><th class="l">criteria</th></tr>
{{range .Health}}<tr><td class="l">{{.Group}}</td><td>{{.Trial}}</td><td class="{{.Status.Class}}">{{.Status.Text}}</td><td class="l">{{if .Criteria}}<ul class="criteria">{{range .Criteria}}<li>{{if .Passed}}PASS{{else}}<b>FAIL</b>{{end}}: {{.Name}}: {{.Actual}} (target {{.Target}}){{if .Reason}}: {{.Reason}}{{end}}</li>{{end}}</ul>{{else}}<span class="na">no criteria</span>{{end}}{{if .Why}}<p class="why">why: {{range $i, $w := .Why}}{{if $i}}; {{end}}{{$w}}{{end}}</p>{{end}}{{if .Scope}}<p class="why">{{.Scope}}</p>{{end}}</td></tr>
{{end}}</table>
</section>
<section id="sla">
<h2>SLA per QoS class</h2>
{{if .SLA}}<p>Each run's storage latency p95 of each QoS class against the class's target; the SLA is met when the target share of its requests are within it.</p>
<table>
<tr><th class="l">group</th><th>trial</th><th class="l">QoS</th><th>requests</th><th>p95</th><th>target</th><th>within target</th><th>SLA</th></tr>
{{range .SLA}}<tr><td class="l">{{.Group}}</td><td>{{.Trial}}</td><td class="l">{{.QoS}}</td><td>{{.Requests}}</td><td>{{.P95}}</td><td>{{.Target}}</td><td>{{.Within}}</td><td class="{{.Verdict.Class}}"{{if .Why}} title="{{.Why}}"{{end}}>{{.Verdict.Text}}</td></tr>
{{end}}</table>
{{else}}<p class="na">No QoS classes: the runs' traces name none.</p>{{end}}
</section>
{{with .Storage}}<section id="storage">
<h2>Storage</h2>
<p>Where each tier of each run lived: its backend, and the path, file system, device and I/O mode, the bucket and endpoint, or the POSIX gateway behind a mount.</p>
<table>
<tr>{{range .Header}}<th class="l">{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td class="l">{{.}}</td>{{end}}</tr>
{{end}}</table>
{{range .Notes}}<p>{{.}}</p>
{{end}}</section>
{{end}}
<section id="scatter">
<h2>Per-trial scatter</h2>
<div class="charts">{{range .Scatters}}{{.}}{{end}}</div>
</section>
<section id="metrics">
<h2>Metrics</h2>
<p>Bandwidths are in GB/s and data in GB, decimal (10<sup>9</sup> bytes).</p>
<table>
<tr><th class="l">metric</th><th>unit</th><th>better</th><th>target</th><th class="l">definition</th></tr>
{{range .Defs}}<tr><td class="l">{{.Name}}</td><td>{{.Unit}}</td><td>{{.Better}}</td><td>{{.Target}}</td><td class="l">{{.Desc}}</td></tr>
{{end}}</table>
</section>
{{range .Groups}}<section id="{{.Anchor}}">
<h2>Group: {{.Label}}</h2>
<table>
<tr><th>trial</th><th class="l">system</th><th>wall (s)</th><th>complete</th><th>rows done</th><th>errors</th><th>failed ops</th><th>size scale</th><th>lag p99</th></tr>
{{range .Trials}}<tr><td>{{.N}}</td><td class="l">{{.System}}</td><td>{{.WallS}}</td><td{{if not .Complete}} class="fail"{{end}}>{{if .Complete}}yes{{else}}no: {{.Reason}}{{end}}</td><td>{{.Rows}}</td><td{{if .Errors}} class="bad"{{end}}>{{.Errors}}</td><td{{if .FailedOps}} class="bad"{{end}}>{{.FailedOps}}</td><td>{{.SizeScale}}</td><td>{{.LagP99}}</td></tr>
{{end}}</table>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
<h3>Latency CDF</h3>
<div class="charts">{{.CDF}}</div>
<h3>Offered load timeline (GB/s in each second of the run; the last, partial second over its length)</h3>
<div class="charts">{{range .Bandwidth}}{{.}}{{else}}<p class="na">no bytes moved</p>{{end}}</div>
<h3>Lag over time</h3>
<div class="charts">{{if .Lag}}{{.Lag}}{{else}}<p class="na">no timeline</p>{{end}}</div>
</section>
{{end}}</body>
</html>
`))

// scale maps v from [lo, hi] linearly onto [from, from+span]: the middle
// when the range is empty. Given hi before lo, it maps upwards, as a
// chart's y axis runs.
func scale(v, lo, hi, from, span float64) float64 {
	if hi == lo {
		return from + span/2
	}
	return from + span*(v-lo)/(hi-lo)
}

// openSVG starts a chart of width by height pixels.
func openSVG(b *strings.Builder, width, height float64) {
	w, h := svgNum(width), svgNum(height)
	fmt.Fprintf(b, `<svg class="chart" width="%s" height="%s" viewBox="0 0 %s %s" role="img">`, w, h, w, h)
}

// htmlCSS styles kvreport's HTML pages: the report's and the searches'.
// Each page carries it inline, so that a page is one self-contained file.
//
//go:embed report.css
var htmlCSS string
