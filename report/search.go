package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/schema"
)

// Search documents (kvreplay --search) are rendered on their own: the
// answer of each, every probe (the curve of users or load against p95
// latency and throughput), and the answers compared with the first
// document's ("B serves 1.8x the users of A").

// IsSearch reports whether the document r holds is a search document. It
// reads only as far as the document's "format" member (the first one in
// every kvbench document), so telling a directory of results from
// searches costs a few bytes of each, not a parse.
func IsSearch(r io.Reader) bool { return SniffFormat(r) == schema.SearchFormat }

// SniffFormat returns the "format" member of the JSON object r starts
// with, reading no further than that member; "" when r holds no object or
// the object has no string "format" in its first megabyte.
func SniffFormat(r io.Reader) string {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return ""
		}
		if k == "format" {
			var v string
			if dec.Decode(&v) != nil {
				return ""
			}
			return v
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// LoadSearches reads search documents from paths ("-" is stdin). It
// refuses anything else: results and searches do not mix in one report.
func LoadSearches(paths []string, stdin io.Reader) ([]*schema.SearchResult, []string, error) {
	var docs []*schema.SearchResult
	var names []string
	var files []string
	for _, p := range paths {
		names := []string{p}
		if p != "-" {
			var err error
			if names, err = Expand(p); err != nil {
				return nil, nil, err
			}
		}
		files = append(files, names...)
	}
	for _, p := range files {
		var raw []byte
		var err error
		if p == "-" {
			raw, err = io.ReadAll(stdin)
		} else {
			raw, err = os.ReadFile(p)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("report: %w", err)
		}
		if !IsSearch(bytes.NewReader(raw)) {
			return nil, nil, fmt.Errorf("report: %s: %w: not a search document; kvreport renders search documents (kvreplay --search) on their own, not with results", p, ErrFormat)
		}
		var d schema.SearchResult
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, nil, fmt.Errorf("report: %w", jsonError(p, raw, 0, err))
		}
		if d.FormatVersion > schema.SearchFormatVersion || d.FormatVersion < 1 {
			return nil, nil, fmt.Errorf("report: %s: %w: search format_version %d, this kvreport reads 1 to %d", p, ErrFormat, d.FormatVersion, schema.SearchFormatVersion)
		}
		docs = append(docs, &d)
		names = append(names, p)
	}
	if len(docs) > 1 {
		for i, d := range docs[1:] {
			if d.Kind != docs[0].Kind {
				return nil, nil, fmt.Errorf("report: %s is a %s search and %s a %s search: compare searches of one kind", names[i+1], d.Kind, names[0], docs[0].Kind)
			}
		}
	}
	return docs, names, nil
}

// searchName names a search in a report: its system, label, or file.
func searchName(d *schema.SearchResult, file string) string {
	switch {
	case d.System != "" && d.Label != "":
		return d.System + " " + d.Label
	case d.System != "":
		return d.System
	case d.Label != "":
		return d.Label
	}
	return file
}

// answer is a search's answer in words.
func answer(d *schema.SearchResult) string {
	if d.Kind == schema.SearchUsers {
		s := fmt.Sprintf("%d of %d users", d.Users, d.TotalUsers)
		if d.Users > 0 {
			s += fmt.Sprintf(" (confidence %.0f%%, resolution %d)", 100*d.Confidence, d.Resolution)
		}
		return s
	}
	return fmt.Sprintf("peak %.1f MB/s at --speed %g", d.PeakBandwidthBps/1e6, d.PeakSpeed)
}

// compareLine compares d's answer with the baseline's.
func compareLine(d, base *schema.SearchResult, name, baseName string) string {
	if d.Kind == schema.SearchUsers {
		if base.Users == 0 {
			return fmt.Sprintf("%s serves %d users; %s serves none", name, d.Users, baseName)
		}
		return fmt.Sprintf("%s serves %.2fx the users of %s (%d vs %d)", name, float64(d.Users)/float64(base.Users), baseName, d.Users, base.Users)
	}
	if base.PeakBandwidthBps == 0 {
		return fmt.Sprintf("%s peaks at %.1f MB/s; %s delivered nothing", name, d.PeakBandwidthBps/1e6, baseName)
	}
	return fmt.Sprintf("%s delivers %.2fx the peak bandwidth of %s (%.1f vs %.1f MB/s)", name, d.PeakBandwidthBps/base.PeakBandwidthBps, baseName,
		d.PeakBandwidthBps/1e6, base.PeakBandwidthBps/1e6)
}

func probeRow(d *schema.SearchResult, p schema.SearchProbe) []string {
	load := fmt.Sprintf("%d users", p.Users)
	verdict := "PASS"
	if !p.Pass {
		verdict = "FAIL: " + p.Reason
	}
	if d.Kind == schema.SearchCapacity {
		load = fmt.Sprintf("--speed %g", p.Speed)
		verdict = p.Health
	}
	return []string{load, fmt.Sprintf("%.1f", p.RequestsPerSecond), fmt.Sprintf("%.0f", p.TokensPerSecond),
		fmt.Sprintf("%.1f", p.BandwidthBps/1e6), p.P95s(), verdict}
}

var probeHeader = []string{"probe", "requests/s", "tokens/s", "MB/s", "p95 ms by QoS", "verdict"}

// RenderSearches writes the searches in format: text, markdown or html.
func RenderSearches(w io.Writer, docs []*schema.SearchResult, names []string, format string) error {
	if len(docs) == 0 {
		return errors.New("report: no search document")
	}
	var b strings.Builder
	switch format {
	case "text", "markdown":
		md := format == "markdown"
		for i, d := range docs {
			name := searchName(d, names[i])
			if md {
				fmt.Fprintf(&b, "## %s: %s search\n\n**%s**. %s\n\n", name, d.Kind, answer(d), d.Reason)
				fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(probeHeader, " | "), strings.Repeat("---|", len(probeHeader)))
				for _, p := range d.Probes {
					fmt.Fprintf(&b, "| %s |\n", strings.Join(probeRow(d, p), " | "))
				}
			} else {
				fmt.Fprintf(&b, "%s: %s search, %d probes of %gs: %s\n  %s\n", name, d.Kind, len(d.Probes), d.WindowS, answer(d), d.Reason)
				fmt.Fprintf(&b, "  %-14s %10s %9s %9s  %-40s %s\n", probeHeader[0], probeHeader[1], probeHeader[2], probeHeader[3], probeHeader[4], probeHeader[5])
				for _, p := range d.Probes {
					r := probeRow(d, p)
					fmt.Fprintf(&b, "  %-14s %10s %9s %9s  %-40s %s\n", r[0], r[1], r[2], r[3], r[4], r[5])
				}
			}
			for _, warn := range d.Warnings {
				fmt.Fprintf(&b, "  WARNING: %s\n", warn)
			}
			b.WriteString("\n")
		}
		for i := 1; i < len(docs); i++ {
			fmt.Fprintln(&b, compareLine(docs[i], docs[0], searchName(docs[i], names[i]), searchName(docs[0], names[0])))
		}
	case "html":
		b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kvbench search</title></head><body>\n")
		for i, d := range docs {
			name := searchName(d, names[i])
			fmt.Fprintf(&b, "<h2>%s: %s search</h2>\n<p><b>%s</b>. %s</p>\n", html.EscapeString(name), d.Kind, html.EscapeString(answer(d)), html.EscapeString(d.Reason))
			b.WriteString(curveSVG(d))
			b.WriteString("<table border=\"1\"><tr>")
			for _, h := range probeHeader {
				fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
			}
			b.WriteString("</tr>\n")
			for _, p := range d.Probes {
				b.WriteString("<tr>")
				for _, c := range probeRow(d, p) {
					fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c))
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
			for _, warn := range d.Warnings {
				fmt.Fprintf(&b, "<p>WARNING: %s</p>\n", html.EscapeString(warn))
			}
		}
		for i := 1; i < len(docs); i++ {
			fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(compareLine(docs[i], docs[0], searchName(docs[i], names[i]), searchName(docs[0], names[0]))))
		}
		b.WriteString("</body></html>\n")
	default:
		return fmt.Errorf("report: --format %s: search documents render as text, markdown or html", format)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// curveSVG plots a search's probes, in load order: throughput (requests/s
// for users, MB/s for capacity) as dots, the worst p95 as a line on its
// own scale.
func curveSVG(d *schema.SearchResult) string {
	type pt struct{ x, y, p95 float64 }
	var pts []pt
	for _, p := range d.Probes {
		x, y := float64(p.Users), p.RequestsPerSecond
		if d.Kind == schema.SearchCapacity {
			x, y = p.Speed, p.BandwidthBps/1e6
		}
		worst := 0.0
		for _, v := range p.P95MSByQoS {
			worst = max(worst, v)
		}
		pts = append(pts, pt{x, y, worst})
	}
	if len(pts) == 0 {
		return ""
	}
	var maxX, maxY, maxP float64
	for _, p := range pts {
		maxX, maxY, maxP = max(maxX, p.x), max(maxY, p.y), max(maxP, p.p95)
	}
	const w, h, pad = 480.0, 240.0, 30.0
	sx := func(x float64) float64 { return pad + (w-2*pad)*x/max(maxX, 1e-9) }
	sy := func(y, m float64) float64 { return h - pad - (h-2*pad)*y/max(m, 1e-9) }
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\"><rect width=\"100%%\" height=\"100%%\" fill=\"white\" stroke=\"#ccc\"/>\n", w, h)
	xl, yl := "users", "requests/s"
	if d.Kind == schema.SearchCapacity {
		xl, yl = "--speed", "MB/s"
	}
	fmt.Fprintf(&b, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%s (max %.4g)</text><text x=\"4\" y=\"14\" font-size=\"11\">dots: %s (max %.4g); line: worst p95 ms (max %.4g)</text>\n",
		w/2-30, h-8, xl, maxX, yl, maxY, maxP)
	for _, p := range pts {
		fmt.Fprintf(&b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"steelblue\"/>\n", sx(p.x), sy(p.y, maxY))
	}
	if maxP > 0 {
		sorted := slices.Clone(pts)
		slices.SortStableFunc(sorted, func(a, b pt) int { return cmp.Compare(a.x, b.x) })
		b.WriteString("<polyline fill=\"none\" stroke=\"darkred\" points=\"")
		for _, p := range sorted {
			fmt.Fprintf(&b, "%.1f,%.1f ", sx(p.x), sy(p.p95, maxP))
		}
		b.WriteString("\"/>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}
