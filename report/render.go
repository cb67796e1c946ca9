package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gocarina/gocsv"

	"github.com/kvbench/kvbench/results"
)

// Formats lists the formats Render knows, in the order --help shows them.
var formats = []string{"text", "md", "csv", "json", "bench", "html", "xlsx"}

// Binary reports whether format writes bytes that are not text (xlsx),
// which a tool must not write to a terminal.
func Binary(format string) bool { return format == "xlsx" }

// Formats returns the formats Render knows.
func Formats() []string { return append([]string(nil), formats...) }

// renderers holds the renderers of the formats defined in other files of
// this package (html.go and xlsx.go register renderHTML and renderXLSX in
// their init functions); it is written only by init functions.
var renderers = map[string]func(io.Writer, *Report) error{}

// Render writes r to w in format: "text" (aligned tables, the default when
// format is empty), "md" (Markdown), "csv", "json", "bench" (Go benchmark
// lines for benchstat), "html" or "xlsx". A missing value is shown as "-"
// (an empty field in CSV, null in JSON), never as 0.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "", "text":
		return renderText(w, r, false)
	case "md":
		return renderText(w, r, true)
	case "csv":
		return renderCSV(w, r)
	case "json":
		return renderJSON(w, r)
	case "bench":
		return renderBench(w, r)
	}
	if f, ok := renderers[format]; ok {
		return f(w, r)
	}
	for _, f := range formats {
		if f == format {
			return fmt.Errorf("report: format %s: %w", format, ErrNotBuilt)
		}
	}
	return fmt.Errorf("report: format %q: unknown (want one of %s)", format, strings.Join(formats, ", "))
}

// num renders a value for people: "-" when missing, 4 significant digits,
// whole numbers from 1000 up.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// nearTarget is the figure s of metric name's value v, written with more
// digits where it reads as the metric's target and is not: a share of
// 94.996 % within target, below the 95 % the SLA wants, read "95" (num's
// four digits) beside a verdict that said NOT met.
func nearTarget(name string, v float64, s string) string {
	t, ok := MetricTarget(name)
	if !ok || v == t || math.IsNaN(v) || math.IsInf(v, 0) {
		return s
	}
	for prec := 5; prec <= 17; prec++ {
		if f, err := strconv.ParseFloat(s, 64); err != nil || f != t {
			return s
		}
		s = strconv.FormatFloat(v, 'g', prec, 64)
	}
	return s
}

// numOf is num of metric name's value v (nearTarget).
func numOf(name string, v float64) string { return nearTarget(name, v, num(v)) }

func ratio(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return ratioNum(v, 2) + "x"
}

// ratioNum writes a ratio with digits decimals, or, for one that would
// round to zero and is not (a kvreplay smoke test against the
// reference's 192 GB/s: 0.0042), with two significant digits: "0.00x"
// read as nothing at all.
func ratioNum(v float64, digits int) string {
	if v != 0 && math.Abs(v) < 0.5*math.Pow(10, -float64(digits)) {
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func percent(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
}

func lookup(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

// table is a titled table that renders aligned or as Markdown, with notes
// under it.
type table struct {
	title  string
	header []string
	rows   [][]string
	notes  []string
}

func (t *table) write(w io.Writer, md bool) error {
	if len(t.header) == 0 {
		// Notes only.
		if md {
			fmt.Fprintf(w, "## %s\n\n", mdLine(t.title))
		} else {
			fmt.Fprintf(w, "%s\n", t.title)
		}
		for _, n := range t.notes {
			if md {
				fmt.Fprintf(w, "- %s\n", mdLine(n))
			} else {
				fmt.Fprintf(w, "  %s\n", n)
			}
		}
		_, err := fmt.Fprintln(w)
		return err
	}
	if md {
		fmt.Fprintf(w, "## %s\n\n", mdLine(t.title))
		fmt.Fprintf(w, "| %s |\n", mdRow(t.header))
		seps := make([]string, len(t.header))
		for i := range seps {
			seps[i] = "---"
			if i > 0 {
				seps[i] = "---:"
			}
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(seps, "|"))
		for _, row := range t.rows {
			fmt.Fprintf(w, "| %s |\n", mdRow(row))
		}
		if len(t.notes) > 0 {
			fmt.Fprintln(w)
			for _, n := range t.notes {
				fmt.Fprintf(w, "- %s\n", mdLine(n))
			}
		}
		_, err := fmt.Fprintln(w)
		return err
	}
	fmt.Fprintf(w, "%s\n", t.title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(t.header, "\t"))
	for _, row := range t.rows {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range t.notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// count says n of what: "1 trial", "3 trials".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// tables are the views every tabular format shows: statistics per group,
// the comparison, and storage_health per run.
func tables(r *Report) []*table {
	var ts []*table
	for _, g := range r.Groups {
		title := fmt.Sprintf("%s: %s", g.Label, count(len(g.Trials), "trial"))
		if n := g.note(); n != "" {
			title += " (" + n + ")"
		}
		ids := make([]string, len(g.Trials))
		for i := range ids {
			ids[i] = strconv.Itoa(g.TrialID(i))
		}
		t := &table{title: title,
			header: []string{"metric", "unit", "n", "median", "mean", "min", "max", "stddev", "cv", "p95", trialsHeader(ids)}}
		for _, m := range r.Metrics {
			row := []string{m.Name, m.Unit, "0", "-", "-", "-", "-", "-", "-", "-"}
			if st, ok := g.Stats[m.Name]; ok {
				row = []string{m.Name, m.Unit, strconv.Itoa(st.N), numOf(m.Name, st.Median), numOf(m.Name, st.Mean),
					numOf(m.Name, st.Min), numOf(m.Name, st.Max), num(st.StdDev), strconv.FormatFloat(st.CV, 'f', 3, 64), numOf(m.Name, st.P95)}
			}
			t.rows = append(t.rows, append(row, trialValues(g, m.Name)))
		}
		ts = append(ts, t)
	}
	if c := r.Comparison; c != nil && len(r.Groups) > 1 {
		t := &table{title: "comparison (median over trials; ratio to " + c.Baseline + "; win rate over matched trials)",
			header: []string{"metric", "unit", "better"}}
		for _, g := range r.Groups {
			t.header = append(t.header, g.Label)
			if g.Label != c.Baseline {
				t.header = append(t.header, "ratio", "wins")
			}
		}
		for _, row := range c.Rows {
			cells := []string{row.Metric.Name, row.Metric.Unit, row.Metric.Better}
			for _, g := range r.Groups {
				cells = append(cells, numOf(row.Metric.Name, lookup(row.Medians, g.Label)))
				if g.Label != c.Baseline {
					rt, ok := row.Ratios[g.Label]
					wr, wok := row.WinRate[g.Label]
					cells = append(cells, ratio(rt, ok), percent(wr, wok))
				}
			}
			t.rows = append(t.rows, cells)
		}
		t.notes = append(append(t.notes, comparisonNote), notComparedNotes(r)...)
		ts = append(ts, t)
	}
	t := &table{title: "storage_health (MLPerf) per run", header: []string{"group", "trial", "status", "criteria passed", "why"}}
	for _, g := range r.Groups {
		for i, id := range g.TrialIDs {
			h := judgedHealth(g.Trials[i])
			passed := "-"
			if h.TotalCount > 0 {
				passed = fmt.Sprintf("%d/%d", h.PassedCount, h.TotalCount)
			}
			if scope := healthScope(g.Trials[i]); scope != "" {
				passed += " (" + scope + ")"
			}
			t.rows = append(t.rows, []string{g.Label, strconv.Itoa(id), g.Health[i], passed, cmp.Or(healthReasons(g.Trials[i]), "-")})
		}
	}
	ts = append(ts, t)
	if t := slaTable(r); t != nil {
		ts = append(ts, t)
	}
	if t := pathTable(r); t != nil {
		ts = append(ts, t)
	}
	return append(ts, metricsTable(r))
}

// notComparedNotes say which groups of r the comparison leaves out for
// not being a measurement (Group.NotMeasured), and why.
func notComparedNotes(r *Report) []string {
	var notes []string
	for _, g := range r.Groups {
		switch {
		case r.Comparison == nil || g.Simulated || len(g.NotMeasured) == 0:
		case g.Label == r.Comparison.Baseline:
			notes = append(notes, fmt.Sprintf("the baseline %s is %s: no ratio or win rate is computed against it", g.Label, g.note()))
		default:
			notes = append(notes, fmt.Sprintf("%s is %s: no ratio or win rate is computed for it", g.Label, g.note()))
		}
	}
	return notes
}

// comparisonNote says what the comparison's "-" means.
const comparisonNote = "ratio and wins are - where nothing was compared: the metric is absent on either side, the baseline's median is 0, " +
	"or every matched pair of trials has it 0 on both sides (nothing against nothing is no tie)"

// trialsHeader heads the column of each trial's value: "trial 1",
// "trials 1, 2, 3".
func trialsHeader(ids []string) string {
	if len(ids) == 1 {
		return "trial " + ids[0]
	}
	return "trials " + strings.Join(ids, ", ")
}

// trialValues is metric name's value in each trial of g, in trial order,
// "-" where a trial has none: every trial's figure beside the statistics
// over them.
func trialValues(g *Group, name string) string {
	vs := make([]string, len(g.Trials))
	for i := range vs {
		v, ok := trialValue(g, i, name)
		if !ok {
			v = math.NaN()
		}
		vs[i] = numOf(name, v)
	}
	return strings.Join(vs, ", ")
}

// metricsTable defines the report's metrics, so that no figure is read
// for another (a device rate for an offered load, kvbench's token rate for
// the reference's).
func metricsTable(r *Report) *table {
	t := &table{title: "metrics (bandwidths in GB/s and data in GB, decimal: 10^9 bytes)"}
	for _, m := range r.Metrics {
		unit := m.Unit
		if v, ok := MetricTarget(m.Name); ok {
			unit += ", target " + num(v)
		}
		t.notes = append(t.notes, fmt.Sprintf("%s (%s): %s", m.Name, unit, MetricDescription(m.Name)))
	}
	return t
}

// mdRow joins cells into the inside of a Markdown table row, each made
// text (mdCell): a label, a file name or a reason may hold a "|", which
// would split its cell in two.
func mdRow(cells []string) string {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = mdCell(c)
	}
	return strings.Join(esc, " | ")
}

// mdCell is s, text that may come from a document (a label, a path, a
// warning, already printable: one line), written so that a Markdown
// renderer (CommonMark, GitHub's) shows it as the text it is, inside a
// line: a backslash escapes each character that would be read as
// Markdown and change what is shown or do something. Always "|" (a
// table's cell), "`" (a code span), "*" and "~" (emphasis,
// strikethrough), "[" and "]" (a link, an image: a click, a fetch); "<"
// before a letter, "/", "!" or "?" (raw HTML, which renderers that pass
// HTML run, a comment that hides text, an autolink); "&" before a letter
// or "#" (an entity, which would write a character printable escaped);
// "_" unless between letters or digits, where it never emphasizes
// (tier2_read_bw reads as it is); "\" before an ASCII punctuation
// character or at the end (where it would escape the next character, the
// text's or the renderer's own). Others, ">", "#", "-", "." and the
// rest, mean something only at the start of a line (mdLine).
func mdCell(s string) string {
	if !strings.ContainsAny(s, "|`*~[]<&_\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		var esc bool
		switch c {
		case '|', '`', '*', '~', '[', ']':
			esc = true
		case '<':
			esc = isASCIILetter(next) || next == '/' || next == '!' || next == '?'
		case '&':
			esc = isASCIILetter(next) || next == '#'
		case '_':
			esc = i == 0 || !isWordByte(s[i-1]) || !isWordByte(next)
		case '\\':
			esc = next == 0 || isASCIIPunct(next)
		}
		if esc {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mdLine is mdCell(s) for text that begins a line's content: a list
// item's ("- " and the text), a heading's. A first character that would
// begin a block of its own there, a heading ("#"), a list ("-", "+", "1."
// or "1)"), a quote (">"), is escaped too.
func mdLine(s string) string {
	s = mdCell(s)
	t := strings.TrimLeft(s, " ")
	at := len(s) - len(t)
	switch {
	case t == "":
	case strings.ContainsRune("#-+>", rune(t[0])):
		return s[:at] + "\\" + t
	case t[0] >= '0' && t[0] <= '9':
		n := 0
		for n < len(t) && t[n] >= '0' && t[n] <= '9' {
			n++
		}
		if n < len(t) && (t[n] == '.' || t[n] == ')') {
			return s[:at] + t[:n] + "\\" + t[n:]
		}
	}
	return s
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// isWordByte says whether c is an ASCII letter or digit, or a byte of a
// character that is not ASCII (a letter, mostly: an "_" between two
// neither opens nor closes emphasis).
func isWordByte(c byte) bool { return isASCIILetter(c) || c >= '0' && c <= '9' || c >= 0x80 }

// isASCIIPunct says whether c is one of the characters CommonMark lets a
// backslash escape.
func isASCIIPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isASCIILetter(c) && !(c >= '0' && c <= '9')
}

// renderText writes the warnings first, where they cannot be missed, then
// the tables.
func renderText(w io.Writer, r *Report, md bool) error {
	if md {
		fmt.Fprint(w, "# kvreport\n\n")
	}
	if ws := allWarnings(r); len(ws) > 0 {
		if md {
			fmt.Fprint(w, "## Warnings\n\n")
		}
		for _, s := range ws {
			if md {
				s = "- **" + mdCell(s) + "**"
			} else {
				s = "WARNING: " + s
			}
			if _, err := fmt.Fprintln(w, s); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	for _, t := range tables(r) {
		if err := t.write(w, md); err != nil {
			return err
		}
	}
	return nil
}

// csvRow is one group's metric in the CSV view; a missing value is an
// empty field. Target is the metric's target (MetricTarget: a QoS class's
// p95 target), empty for a metric without one. Warnings are the group's (and the report's that name no
// group), joined with " | ", on every row of the group. Trial is empty on
// the rows of the group's statistics over its trials; the rows that follow
// them name their trial and hold its value as the median of n = 1 (empty,
// n = 0, where the trial has none), trial by trial: each metric of the
// trial, then each of its QoS classes' SLA figures (its p95 against its
// target, the share within the target, met 1 or 0, empty where the run
// did not measure it), each (trial, metric) once. Every trial's figures,
// not only its group's spread.
type csvRow struct {
	Group    string `csv:"group"`
	Metric   string `csv:"metric"`
	Unit     string `csv:"unit"`
	Target   string `csv:"target"`
	Better   string `csv:"better"`
	N        int    `csv:"n"`
	Median   string `csv:"median"`
	Mean     string `csv:"mean"`
	Min      string `csv:"min"`
	Max      string `csv:"max"`
	StdDev   string `csv:"stddev"`
	CV       string `csv:"cv"`
	P95      string `csv:"p95"`
	Baseline string `csv:"baseline"`
	Ratio    string `csv:"ratio"`
	WinRate  string `csv:"win_rate"`
	Warnings string `csv:"warnings"`
	Trial    string `csv:"trial"`
}

func csvNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func csvOpt(m map[string]float64, k string) string {
	if v, ok := m[k]; ok {
		return csvNum(v)
	}
	return ""
}

func renderCSV(w io.Writer, r *Report) error {
	var rows []*csvRow
	all := allWarnings(r)
	slas := slaRows(r)
	for _, g := range r.Groups {
		label, warns := csvText(g.Label), csvText(strings.Join(groupWarnings(all, g.Label, r.Groups), " | "))
		for i, m := range r.Metrics {
			row := csvMetricRow(label, m, warns)
			if st, ok := g.Stats[m.Name]; ok {
				row.N = st.N
				row.Median, row.Mean, row.Min, row.Max = csvNum(st.Median), csvNum(st.Mean), csvNum(st.Min), csvNum(st.Max)
				row.StdDev, row.CV, row.P95 = csvNum(st.StdDev), csvNum(st.CV), csvNum(st.P95)
			}
			if c := r.Comparison; c != nil && i < len(c.Rows) {
				cr := c.Rows[i]
				row.Baseline = csvText(c.Baseline)
				row.Ratio = csvOpt(cr.Ratios, g.Label)
				row.WinRate = csvOpt(cr.WinRate, g.Label)
			}
			rows = append(rows, row)
		}
		for i := range g.Trials {
			sla := csvSLARows(slas, g.Label, g.TrialID(i), warns)
			rows = append(rows, csvTrialRows(r, g, i, label, warns, sla)...)
			rows = append(rows, sla...)
		}
	}
	if err := gocsv.Marshal(rows, w); err != nil {
		return fmt.Errorf("report: csv: %w", err)
	}
	return nil
}

// csvText is a text field of the csv views (a label, the warnings): one
// that begins as a spreadsheet formula does ("=", "+", "-", "@", or a tab
// or a carriage return before one) is led by an apostrophe, so that a
// spreadsheet opening the file shows the text and runs no formula (OWASP's
// CSV injection): the text comes from documents kvreport did not write.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvMetricRow is a row of metric m of group label, its figures empty.
func csvMetricRow(label string, m Metric, warns string) *csvRow {
	row := &csvRow{Group: label, Metric: m.Name, Unit: m.Unit, Better: m.Better, Warnings: warns}
	if v, ok := MetricTarget(m.Name); ok {
		row.Target = csvNum(v)
	}
	return row
}

// csvTrialRows are the rows of trial i of group g: each metric's value in
// the trial as the median of n = 1, empty (n = 0) where it has none, but
// the metrics its SLA rows hold (sla: a QoS class's p95, share within
// target and verdict, which they give even where the SLA was not judged);
// label and warns are the group's fields as csvText writes them.
func csvTrialRows(r *Report, g *Group, i int, label, warns string, sla []*csvRow) []*csvRow {
	rows := make([]*csvRow, 0, len(r.Metrics))
	for _, m := range r.Metrics {
		if slices.ContainsFunc(sla, func(s *csvRow) bool { return s.Metric == m.Name }) {
			continue
		}
		row := csvMetricRow(label, m, warns)
		row.Trial = strconv.Itoa(g.TrialID(i))
		if v, ok := trialValue(g, i, m.Name); ok && csvNum(v) != "" {
			row.N, row.Median = 1, csvNum(v)
		}
		rows = append(rows, row)
	}
	return rows
}

// csvSLARows are the SLA rows of trial id of group label: for each QoS
// class, its p95 against its target, its share within the target and
// whether it met its SLA (empty when the run did not measure it).
func csvSLARows(slas []slaRow, label string, id int, warns string) []*csvRow {
	var rows []*csvRow
	for _, s := range slas {
		if s.Group != label || s.Trial != id {
			continue
		}
		met := ""
		if s.Measured {
			met = "0"
			if s.Met {
				met = "1"
			}
		}
		for _, f := range []struct {
			what, unit, better, target, value string
		}{
			{"p95", "ms", "lower", csvNum(s.TargetMS), csvNum(s.P95MS)},
			{"within_target", "%", "higher", csvNum(100 * results.ComplianceTarget), csvNum(s.withinPct())},
			{"sla_met", "met", "higher", "", met},
		} {
			row := &csvRow{Group: csvText(label), Metric: qosMetric(s.QoS, f.what), Unit: f.unit, Target: f.target, Better: f.better,
				Median: f.value, Warnings: warns, Trial: strconv.Itoa(s.Trial)}
			if f.value != "" {
				row.N = 1
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// The JSON view: every float that may be missing is a pointer (null).
type (
	jsonReport struct {
		Metrics    []jsonMetric    `json:"metrics"`
		Groups     []jsonGroup     `json:"groups"`
		Comparison *jsonComparison `json:"comparison,omitempty"`
		Warnings   []string        `json:"warnings"`
	}
	jsonMetric struct {
		Name        string   `json:"name"`
		Unit        string   `json:"unit"`
		Better      string   `json:"better"`
		Target      *float64 `json:"target,omitempty"`
		Description string   `json:"description"`
	}
	jsonGroup struct {
		Label string `json:"label"`
		// Simulated marks kvtrace's statistics: not a measurement.
		Simulated bool `json:"simulated,omitempty"`
		// NotAMeasurement says, per trial, why a kvreplay trial is not
		// a measurement ("trial 1: an incomplete run (...)"): the group
		// is compared with nothing.
		NotAMeasurement []string             `json:"not_a_measurement,omitempty"`
		Trials          []jsonTrial          `json:"trials"`
		Stats           map[string]jsonStats `json:"stats"`
		Warnings        []string             `json:"warnings"`
	}
	jsonTrial struct {
		Trial  int    `json:"trial"`
		Ranks  int    `json:"ranks"`
		Health string `json:"storage_health"`
		// HealthReasons say why Health is not PASS: each failed
		// criterion with its figures, failed operations, incompleteness.
		HealthReasons []string `json:"storage_health_reasons,omitempty"`
		// HealthScope says what Health judged where the run's SLA was
		// not measured (healthScope): "tier latency criteria only; SLA
		// not measured at --speed max".
		HealthScope string             `json:"storage_health_scope,omitempty"`
		Metrics     map[string]float64 `json:"metrics"`
		SLA         []jsonSLA          `json:"sla,omitempty"`
		// Storage is where each tier lived (pathRows).
		Storage []jsonPath `json:"storage,omitempty"`
	}
	// jsonPath is where one tier of a trial lived.
	jsonPath struct {
		Tier    string `json:"tier"`
		Backend string `json:"backend"`
		Where   string `json:"where"`
		Gateway string `json:"gateway,omitempty"`
	}
	// jsonSLA is one QoS class's SLA in a trial; Verdict is "met", "NOT
	// met", "not measured" (Why says why) or "simulated".
	jsonSLA struct {
		QoS      string `json:"qos"`
		Requests int64  `json:"requests"`
		// P95MS and WithinTarget are null where the run did not measure
		// them (kvtrace's simulation).
		P95MS        *float64 `json:"p95_ms"`
		TargetP95MS  float64  `json:"target_p95_ms"`
		WithinTarget *float64 `json:"within_target_pct"`
		Verdict      string   `json:"sla"`
		Why          string   `json:"why,omitempty"`
	}
	jsonStats struct {
		N      int     `json:"n"`
		Median float64 `json:"median"`
		Mean   float64 `json:"mean"`
		Min    float64 `json:"min"`
		Max    float64 `json:"max"`
		StdDev float64 `json:"stddev"`
		CV     float64 `json:"cv"`
		P95    float64 `json:"p95"`
	}
	jsonComparison struct {
		Baseline string            `json:"baseline"`
		Rows     []jsonComparison1 `json:"rows"`
	}
	jsonComparison1 struct {
		Metric   string             `json:"metric"`
		Unit     string             `json:"unit"`
		Better   string             `json:"better"`
		Baseline *float64           `json:"baseline_median"`
		Medians  map[string]float64 `json:"medians"`
		Ratios   map[string]float64 `json:"ratios"`
		WinRate  map[string]float64 `json:"win_rate"`
	}
)

func renderJSON(w io.Writer, r *Report) error {
	all := allWarnings(r)
	out := jsonReport{Metrics: []jsonMetric{}, Warnings: all}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, m := range r.Metrics {
		jm := jsonMetric{Name: m.Name, Unit: m.Unit, Better: m.Better, Description: MetricDescription(m.Name)}
		if v, ok := MetricTarget(m.Name); ok {
			jm.Target = &v
		}
		out.Metrics = append(out.Metrics, jm)
	}
	slas, paths := slaRows(r), pathRows(r)
	keep := map[string]bool{}
	for _, m := range r.Metrics {
		keep[m.Name] = true
	}
	for _, g := range r.Groups {
		jg := jsonGroup{Label: g.Label, Simulated: g.Simulated, Stats: map[string]jsonStats{}, Warnings: groupWarnings(all, g.Label, r.Groups)}
		for _, id := range slices.Sorted(maps.Keys(g.NotMeasured)) {
			jg.NotAMeasurement = append(jg.NotAMeasurement, fmt.Sprintf("trial %d: %s", id, g.NotMeasured[id]))
		}
		for i, id := range g.TrialIDs {
			ms := map[string]float64{}
			for k, v := range g.TrialValues[i] {
				if keep[k] {
					ms[k] = v
				}
			}
			jt := jsonTrial{Trial: id, Ranks: g.Trials[i].Ranks, Health: g.Health[i], HealthReasons: judgedHealth(g.Trials[i]).Reasons,
				HealthScope: healthScope(g.Trials[i]), Metrics: ms}
			for _, s := range slas {
				if s.Group == g.Label && s.Trial == id {
					jt.SLA = append(jt.SLA, jsonSLA{QoS: s.QoS, Requests: s.Requests, P95MS: optional(s.P95MS), TargetP95MS: s.TargetMS,
						WithinTarget: optional(s.withinPct()), Verdict: s.verdict(), Why: s.Why})
				}
			}
			for _, p := range paths {
				if p.Group == g.Label && p.Trial == id {
					jt.Storage = append(jt.Storage, jsonPath{Tier: p.Tier, Backend: p.Backend, Where: p.Where, Gateway: p.Gateway})
				}
			}
			jg.Trials = append(jg.Trials, jt)
		}
		for k, st := range g.Stats {
			if keep[k] {
				jg.Stats[k] = jsonStats(st)
			}
		}
		out.Groups = append(out.Groups, jg)
	}
	if c := r.Comparison; c != nil {
		jc := &jsonComparison{Baseline: c.Baseline, Rows: []jsonComparison1{}}
		for _, row := range c.Rows {
			jr := jsonComparison1{Metric: row.Metric.Name, Unit: row.Metric.Unit, Better: row.Metric.Better,
				Medians: row.Medians, Ratios: row.Ratios, WinRate: row.WinRate}
			if !math.IsNaN(row.Baseline) {
				b := row.Baseline
				jr.Baseline = &b
			}
			jc.Rows = append(jc.Rows, jr)
		}
		out.Comparison = jc
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report: json: %w", err)
	}
	return nil
}

// renderBench writes the Go benchmark format (golang.org/design/14313) for
// benchstat: the warnings first, as "# WARNING: ..." lines, which benchstat
// ignores and people read; then per group a configuration line "group:
// <label>", then one line per trial and metric, BenchmarkKV/<metric> 1
// <value> <unit>. The group is a configuration value, not part of the
// name, so the same metric of two systems has the same name and benchstat
// compares them: benchstat -col group all.txt, or benchstat -col group
// a.txt b.txt for two files. Each trial's SLA per QoS class follows its
// group line as "# SLA ..." lines, and a simulated group's label says it
// is simulated, so that benchstat never compares it with a measured one.
func renderBench(w io.Writer, r *Report) error {
	for _, s := range allWarnings(r) {
		if _, err := fmt.Fprintf(w, "# WARNING: %s\n", s); err != nil {
			return err
		}
	}
	for i, g := range r.Groups {
		sep := ""
		if i > 0 {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(w, "%sgroup: %s\n", sep, benchValue(g.labelNoted())); err != nil {
			return err
		}
		for _, s := range slaRows(r) {
			if s.Group != g.Label {
				continue
			}
			if _, err := fmt.Fprintf(w, "# SLA trial %d %s: p95 %s ms, target %s ms, %s within target: %s\n",
				s.Trial, s.QoS, num(s.P95MS), num(s.TargetMS), s.within(), s.verdict()); err != nil {
				return err
			}
		}
		for i := range g.TrialIDs {
			for _, m := range r.Metrics {
				v, ok := g.TrialValues[i][m.Name]
				if !ok {
					continue
				}
				if _, err := fmt.Fprintf(w, "BenchmarkKV/%s 1 %s %s\n", benchName(m.Name),
					strconv.FormatFloat(v, 'g', -1, 64), strings.ReplaceAll(m.Unit, " ", "_")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// groupWarnings are the warnings of all that name the group label, without
// it, and those that name no group of groups.
func groupWarnings(all []string, label string, groups []*Group) []string {
	out := []string{}
	for _, w := range all {
		if rest, ok := strings.CutPrefix(w, label+": "); ok {
			out = append(out, rest)
			continue
		}
		if !slices.ContainsFunc(groups, func(g *Group) bool { return strings.HasPrefix(w, g.Label+": ") }) {
			out = append(out, w)
		}
	}
	return out
}

// benchValue makes a label a configuration value: one line.
func benchValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	if s = strings.TrimSpace(s); s == "" {
		return "-"
	}
	return s
}

// benchName makes a metric name a benchmark name element: no spaces or
// slashes.
func benchName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '/' {
			return '_'
		}
		return r
	}, s)
}
