package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"

	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// The sheets renderXLSX writes, in order.
const (
	xlsxSummary    = "Summary"
	xlsxStats      = "Stats"
	xlsxTrials     = "Trials"
	xlsxComparison = "Comparison"
	xlsxHealth     = "Health"
	xlsxSLA        = "SLA"
	xlsxCells      = "Cells"
	xlsxWarnings   = "Warnings"
	xlsxMetrics    = "Metrics"
)

func init() { renderers["xlsx"] = renderXLSX }

// renderXLSX writes r as an Excel workbook with one sheet per view, a
// header row on each, numbers as numbers and missing figures as empty
// cells, the way the reference's json_to_xlsx.py users expect:
//
//   - Summary: one row per group, each metric's median over its trials
//     and, last, the group's warnings (as the csv view's rows carry them:
//     the first sheet says when runs are unlike or failed);
//   - Stats: one row per group and metric: n, median, mean, min, max,
//     standard deviation, CV, p95;
//   - Trials: one row per trial: its run facts (failed operations among
//     them) and each metric's value;
//   - Comparison: per metric, the baseline's median and each group's
//     median, ratio and win rate;
//   - Health: one row per trial and storage_health criterion;
//   - SLA: one row per trial and QoS class: its p95 against its target,
//     the share of requests within it, met or not;
//   - Cells: one row per trial, tier, operation and phase: operations,
//     failed operations (in no other figure), bytes, offered load and
//     device rate in GB/s and latency percentiles in microseconds;
//   - Warnings: the report's and the trials' warnings;
//   - Metrics: each metric's unit, target and definition.
//
// A simulated group (kvtrace's statistics) is labelled so on the Summary
// sheet.
//
// Every sheet names a trial by its number (kvreplay --trial), as the other
// formats do, and the Trials sheet holds each trial's own values (a trial
// without a metric has an empty cell).
func renderXLSX(w io.Writer, r *Report) error {
	f := excelize.NewFile()
	defer f.Close()
	x := &xlsxWriter{f: f}
	header, err := f.NewStyle(&excelize.Style{
		Font: &excelize.Font{Bold: true},
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"EEF3F8"}},
	})
	if err != nil {
		return fmt.Errorf("report: xlsx: %w", err)
	}
	x.header = header
	// The new workbook's one sheet becomes the first view.
	if err := f.SetSheetName(f.GetSheetName(0), xlsxSummary); err != nil {
		return fmt.Errorf("report: xlsx: %w", err)
	}
	xlsxWriteSummary(x, r)
	xlsxWriteStats(x, r)
	xlsxWriteTrials(x, r)
	xlsxWriteComparison(x, r)
	xlsxWriteHealth(x, r)
	xlsxWriteSLA(x, r)
	xlsxWriteCells(x, r)
	xlsxWriteWarnings(x, r)
	xlsxWriteMetrics(x, r)
	if x.err != nil {
		return fmt.Errorf("report: xlsx: %w", x.err)
	}
	f.SetActiveSheet(0)
	if _, err := f.WriteTo(w); err != nil {
		return fmt.Errorf("report: xlsx: %w", err)
	}
	return nil
}

// xlsxWriter writes rows to sheets, keeping the first error.
type xlsxWriter struct {
	f      *excelize.File
	header int
	sheet  string
	row    int
	err    error
}

// start begins sheet name (creating it unless it exists) with a header
// row, frozen, and columns wide enough for it.
func (x *xlsxWriter) start(name string, header ...any) {
	if x.err != nil {
		return
	}
	if idx, _ := x.f.GetSheetIndex(name); idx < 0 {
		if _, err := x.f.NewSheet(name); err != nil {
			x.err = err
			return
		}
	}
	x.sheet, x.row = name, 0
	x.add(header...)
	if x.err != nil {
		return
	}
	last, err := excelize.ColumnNumberToName(max(len(header), 1))
	if err == nil {
		err = x.f.SetCellStyle(name, "A1", last+"1", x.header)
	}
	if err == nil {
		err = x.f.SetColWidth(name, "A", last, 14)
	}
	if err == nil {
		err = x.f.SetPanes(name, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
	}
	x.err = err
}

// add writes the next row of the current sheet.
func (x *xlsxWriter) add(cells ...any) {
	if x.err != nil {
		return
	}
	x.row++
	cell, err := excelize.CoordinatesToCellName(1, x.row)
	if err == nil {
		err = x.f.SetSheetRow(x.sheet, cell, &cells)
	}
	x.err = err
}

// xlsxNum is v as a cell value: nil (an empty cell) for NaN and infinities,
// which a spreadsheet cannot hold.
func xlsxNum(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func xlsxMetricName(m Metric) string {
	if m.Unit == "" {
		return m.Name
	}
	return m.Name + " (" + m.Unit + ")"
}

func xlsxWriteSummary(x *xlsxWriter, r *Report) {
	header := []any{"group", "trials"}
	for _, m := range r.Metrics {
		header = append(header, xlsxMetricName(m))
	}
	x.start(xlsxSummary, append(header, "warnings")...)
	all := allWarnings(r)
	for _, g := range r.Groups {
		row := []any{g.labelNoted(), len(g.Trials)}
		for _, m := range r.Metrics {
			if st, ok := g.Stats[m.Name]; ok && st.N > 0 {
				row = append(row, xlsxNum(st.Median))
			} else {
				row = append(row, nil)
			}
		}
		var warns any
		if w := groupWarnings(all, g.Label, r.Groups); len(w) > 0 {
			warns = xlsxWarningsCell(w)
		}
		x.add(append(row, warns)...)
	}
}

// xlsxWarningsCell joins a group's warnings into one cell. A cell holds
// at most excelize.TotalCellChars characters (UTF-16 units), and excelize
// cuts a longer string without a word: past that, the cell keeps the
// warnings that fit whole and says how many more the Warnings sheet holds
// (a merged run of many ranks has a warning of each rank's own).
func xlsxWarningsCell(ws []string) string {
	if s := strings.Join(ws, " | "); utf16Len(s) <= excelize.TotalCellChars {
		return s
	}
	kept, n := 0, 0
	for kept < len(ws) {
		add := utf16Len(ws[kept]) + len(" | ")
		if n+add+utf16Len(moreWarnings(len(ws)-kept-1)) > excelize.TotalCellChars {
			break
		}
		n += add
		kept++
	}
	return strings.Join(append(ws[:kept:kept], moreWarnings(len(ws)-kept)), " | ")
}

// moreWarnings is the end of a cell of warnings that holds n fewer than
// the Warnings sheet.
func moreWarnings(n int) string {
	if n == 1 {
		return "1 more warning: see the Warnings sheet"
	}
	return fmt.Sprintf("%d more warnings: see the Warnings sheet", n)
}

// utf16Len is the length of s in UTF-16 units, as a spreadsheet counts a
// cell's characters.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func xlsxWriteStats(x *xlsxWriter, r *Report) {
	x.start(xlsxStats, "group", "metric", "unit", "better", "n", "median", "mean", "min", "max", "stddev", "cv", "p95")
	for _, g := range r.Groups {
		for _, m := range r.Metrics {
			st, ok := g.Stats[m.Name]
			if !ok {
				continue
			}
			x.add(g.Label, m.Name, m.Unit, m.Better, st.N, xlsxNum(st.Median), xlsxNum(st.Mean),
				xlsxNum(st.Min), xlsxNum(st.Max), xlsxNum(st.StdDev), xlsxNum(st.CV), xlsxNum(st.P95))
		}
	}
}

func xlsxWriteTrials(x *xlsxWriter, r *Report) {
	header := []any{"group", "trial", "system", "ranks", "wall_s", "complete", "incomplete_reason", "size_scale", "errors", "failed_ops", "rows_done", "storage_health"}
	for _, m := range r.Metrics {
		header = append(header, xlsxMetricName(m))
	}
	x.start(xlsxTrials, header...)
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			row := []any{g.Label, g.TrialID(i)}
			if t != nil {
				row = append(row, t.System, t.Ranks, xlsxNum(t.WallS), t.Complete, t.IncompleteReason,
					xlsxNum(t.SizeScale), t.Errors.Count, failedOps(t), t.Replay.RowsDone, healthStatus(t))
			} else {
				row = append(row, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
			}
			if t == nil || healthStatus(t) == "" {
				if i < len(g.Health) {
					row[len(row)-1] = g.Health[i]
				}
			}
			for _, m := range r.Metrics {
				if v, ok := trialValue(g, i, m.Name); ok {
					row = append(row, xlsxNum(v))
				} else {
					row = append(row, nil)
				}
			}
			x.add(row...)
		}
	}
}

// trialValue is metric name's value in trial i of g, if it has one.
func trialValue(g *Group, i int, name string) (float64, bool) {
	if i >= len(g.TrialValues) {
		return 0, false
	}
	v, ok := g.TrialValues[i][name]
	return v, ok
}

func xlsxWriteComparison(x *xlsxWriter, r *Report) {
	c := r.Comparison
	if c == nil {
		x.start(xlsxComparison, "metric", "unit", "better", "baseline")
		return
	}
	var others []string
	for _, g := range r.Groups {
		if g.Label != c.Baseline {
			others = append(others, g.Label)
		}
	}
	header := []any{"metric", "unit", "better", c.Baseline + " median (baseline)"}
	for _, label := range others {
		header = append(header, label+" median", label+" ratio", label+" win rate")
	}
	x.start(xlsxComparison, header...)
	for _, row := range c.Rows {
		cells := []any{row.Metric.Name, row.Metric.Unit, row.Metric.Better, xlsxNum(row.Baseline)}
		for _, label := range others {
			for _, m := range []map[string]float64{row.Medians, row.Ratios, row.WinRate} {
				if v, ok := m[label]; ok {
					cells = append(cells, xlsxNum(v))
				} else {
					cells = append(cells, nil)
				}
			}
		}
		x.add(cells...)
	}
}

// countFailed counts the criteria that failed: their reasons come first
// among a verdict's.
func countFailed(cs []schema.Criterion) int {
	n := 0
	for _, c := range cs {
		if !c.Passed {
			n++
		}
	}
	return n
}

func xlsxWriteHealth(x *xlsxWriter, r *Report) {
	x.start(xlsxHealth, "group", "trial", "overall_status", "passed_count", "total_count", "criterion", "target", "actual", "unit", "passed", "why")
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			var sh schema.StorageHealth
			status := ""
			if t != nil {
				sh = judgedHealth(t)
				status = string(sh.OverallStatus)
			}
			if status == "" && i < len(g.Health) {
				status = g.Health[i]
			}
			if len(sh.Criteria) == 0 {
				x.add(g.Label, g.TrialID(i), status, sh.PassedCount, sh.TotalCount, "", "", "", "", "", strings.Join(sh.Reasons, "; "))
				continue
			}
			for _, c := range sh.Criteria {
				x.add(g.Label, g.TrialID(i), status, sh.PassedCount, sh.TotalCount, c.Name, xlsxNum(c.Target), xlsxNum(c.Actual), c.Unit, c.Passed, c.Reason)
			}
			for _, why := range sh.Reasons[min(len(sh.Reasons), countFailed(sh.Criteria)):] {
				x.add(g.Label, g.TrialID(i), status, sh.PassedCount, sh.TotalCount, "", "", "", "", "", why) // failed operations, incompleteness
			}
		}
	}
}

func xlsxWriteCells(x *xlsxWriter, r *Report) {
	x.start(xlsxCells, "group", "trial", "tier", "backend", "op", "phase", "ops", "failed_ops",
		"logical_bytes", "physical_bytes", "busy_s", "bandwidth_GBps", "offered_GBps",
		"count", "min_us", "mean_us", "p50_us", "p90_us", "p95_us", "p99_us", "p99_9_us", "p99_99_us", "max_us",
		"from_schedule_p50_us", "from_schedule_p99_us", "from_schedule_max_us")
	for _, g := range r.Groups {
		for i, t := range g.Trials {
			if t == nil {
				continue
			}
			for _, c := range t.Cells {
				l, s := c.Latency, c.FromSchedule
				x.add(g.Label, g.TrialID(i), c.Tier, c.Backend, c.Op, c.Phase, c.Ops, c.FailedOps,
					c.LogicalBytes, c.PhysicalBytes, xlsxNum(c.BusyS), xlsxNum(c.DeviceBps/results.GB), xlsxNum(c.OfferedBps/results.GB),
					l.Count, xlsxNum(l.MinUS), xlsxNum(l.MeanUS), xlsxNum(l.P50US), xlsxNum(l.P90US), xlsxNum(l.P95US),
					xlsxNum(l.P99US), xlsxNum(l.P999US), xlsxNum(l.P9999US), xlsxNum(l.MaxUS),
					xlsxNum(s.P50US), xlsxNum(s.P99US), xlsxNum(s.MaxUS))
			}
		}
	}
}

func xlsxWriteWarnings(x *xlsxWriter, r *Report) {
	x.start(xlsxWarnings, "warning")
	for _, w := range htmlWarnings(r) {
		x.add(w)
	}
}

func xlsxWriteSLA(x *xlsxWriter, r *Report) {
	x.start(xlsxSLA, "group", "trial", "qos", "requests", "p95_ms", "target_p95_ms", "within_target_pct", "sla", "why")
	for _, s := range slaRows(r) {
		x.add(s.Group, s.Trial, s.QoS, s.Requests, xlsxNum(s.P95MS), xlsxNum(s.TargetMS), xlsxNum(s.withinPct()), s.verdict(), s.Why)
	}
}

func xlsxWriteMetrics(x *xlsxWriter, r *Report) {
	x.start(xlsxMetrics, "metric", "unit", "better", "target", "definition")
	for _, m := range r.Metrics {
		var target any
		if v, ok := MetricTarget(m.Name); ok {
			target = v
		}
		x.add(m.Name, m.Unit, m.Better, target, MetricDescription(m.Name))
	}
}
