package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Search documents (kvreplay --search) are rendered on their own: the
// answer of each, every probe (the curve of users or load against p95
// latency and throughput), and the answers compared with the first
// document's ("B serves 1.8x the users of A").

// IsSearch reports whether the document r holds is a search document
// (SniffFormat).
func IsSearch(r io.Reader) bool { return SniffFormat(r) == schema.SearchFormat }

// SniffFormat returns the "format" member of the JSON object r starts
// with, as a full decode into a struct finds it (Decode, LoadSearches):
// the last member whose name is "format" in any case (encoding/json's
// rule), when its value is a string (a null one changes nothing); "" when
// r holds no object, or the object no such member or a non-string one. It reads the first object
// whole, never what follows it in a stream: the first "format" member
// (kvbench writes it first) could be overridden by a later one, and a
// document sniffed as one format must not decode as another ({"format":
// "kvbench-search", ..., "format": "kvbench-result"} is a result). An
// object cut short gives the format of the members before the cut.
func SniffFormat(r io.Reader) string {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	format := ""
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return format
		}
		name, _ := k.(string)
		if !strings.EqualFold(name, "format") { // bytes.EqualFold is encoding/json's match
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return format
			}
			continue
		}
		var v *string
		if err := dec.Decode(&v); err != nil {
			if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
				return format // cut short
			}
			format = "" // not a string: a decode refuses it
			continue
		}
		if v != nil {
			// A null leaves the member as it was, as a decode into the
			// documents' Format string does.
			format = *v
		}
	}
	return format
}

// LoadSearches reads search documents from paths ("-" is stdin; a file or
// stdin may hold a stream of them, as Load reads results), those of
// format version 1 with the names of today's (schema.UpgradeSearchOffered).
// It refuses anything else: results and searches do not mix in one report.
// Files are opened with open (os.Open when nil), each once ctx is checked:
// kvreport's waits for a named pipe's writer under its signal context.
func LoadSearches(ctx context.Context, paths []string, stdin io.Reader, open func(name string) (io.ReadCloser, error)) ([]*schema.SearchResult, []string, error) {
	if open == nil {
		open = func(name string) (io.ReadCloser, error) { return os.Open(name) }
	}
	rd := fileReader{ctx: ctx, open: open}
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
			raw, err = rd.read(p)
		}
		if stopped(err) {
			return nil, nil, err
		}
		if err != nil {
			return nil, nil, fmt.Errorf("report: %w", cli.FileError(err))
		}
		ds, ns, err := decodeSearches(p, raw)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, ds...)
		names = append(names, ns...)
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

// decodeSearches decodes the concatenated search documents of raw, read
// from p, as Load decodes a stream of results: a document of stdin, or
// one of several in a file, is named p#N (its place in the stream), p
// made printable, in its name and its errors.
func decodeSearches(p string, raw []byte) ([]*schema.SearchResult, []string, error) {
	p = parsemsg.Printable(p)
	var docs []*schema.SearchResult
	var names []string
	dec := json.NewDecoder(bytes.NewReader(raw))
	for i := 0; ; i++ {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err == io.EOF {
			if i == 0 {
				return nil, nil, fmt.Errorf("report: %s: %w: empty input, want a JSON document", p, ErrFormat)
			}
			return docs, names, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("report: %w", jsonError(p, raw, 0, err))
		}
		name := p
		if p == "-" || i > 0 {
			name = fmt.Sprintf("%s#%d", p, i+1)
		}
		start := int(dec.InputOffset()) - len(doc)
		if !IsSearch(bytes.NewReader(doc)) {
			return nil, nil, fmt.Errorf("report: %s: %w: not a search document; kvreport renders search documents (kvreplay --search) on their own, not with results", name, ErrFormat)
		}
		var d schema.SearchResult
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, nil, fmt.Errorf("report: %w", jsonError(p, raw, start, err))
		}
		if err := schema.CheckKeys(doc, &d); err != nil {
			return nil, nil, fmt.Errorf("report: %w", jsonError(p, raw, start, err))
		}
		if d.FormatVersion > schema.SearchFormatVersion || d.FormatVersion < 1 {
			return nil, nil, fmt.Errorf("report: %s: %w: search format_version %d, this kvreport reads 1 to %d", name, ErrFormat, d.FormatVersion, schema.SearchFormatVersion)
		}
		if d.FormatVersion == 1 {
			if err := schema.UpgradeSearchOffered(&d, doc); err != nil {
				return nil, nil, fmt.Errorf("report: %s: %w", name, err)
			}
		}
		printableStrings(reflect.ValueOf(&d).Elem())
		docs = append(docs, &d)
		names = append(names, name)
	}
}

// SearchName names a search in a report: its system, label, or file (the
// name it was read from), with its trial where it has one ("A trial 2").
func SearchName(d *schema.SearchResult, file string) string {
	var name string
	switch {
	case d.System != "" && d.Label != "":
		name = d.System + " " + d.Label
	case d.System != "":
		name = d.System
	case d.Label != "":
		name = d.Label
	default:
		return file
	}
	if d.Trial > 0 {
		name += fmt.Sprintf(" trial %d", d.Trial)
	}
	return name
}

// BaselineSearch finds the search named want among docs (read from
// files) for kvreport --baseline: the first whose name (SearchName), file
// or file's base name is want; else the one search of the system or label
// want (SearchName without its trial: --baseline A names "A trial 2" when
// it is A's only search). It fails, saying which names there are and how
// to give one, where none is want's, or where several searches are of
// want (its trials: which one is the baseline is the user's to say).
func BaselineSearch(docs []*schema.SearchResult, files []string, want string) (int, error) {
	var of []int // the searches of system or label want
	for i, d := range docs {
		if SearchName(d, files[i]) == want || files[i] == want || filepath.Base(files[i]) == want {
			return i, nil
		}
		if d.System == want || d.Label == want || searchOf(d) == want {
			of = append(of, i)
		}
	}
	if len(of) == 1 {
		return of[0], nil
	}
	names := searchNames(docs, files)
	quoted := func(is []int) string {
		var q []string
		for _, i := range is {
			q = append(q, strconv.Quote(names[i]))
		}
		return strings.Join(q, ", ")
	}
	if len(of) > 1 {
		return -1, fmt.Errorf("--baseline %s: %d searches are of %s (%s): name the one to compare with, as --baseline %s, or by its file",
			parsemsg.Arg(want), len(of), parsemsg.Arg(want), quoted(of), strconv.Quote(SearchName(docs[of[0]], files[of[0]])))
	}
	all := make([]int, len(docs))
	for i := range all {
		all[i] = i
	}
	return -1, fmt.Errorf("--baseline %s: no such search (searches: %s): name one as listed (its system and label, with its trial where it has one), or by its file",
		parsemsg.Arg(want), quoted(all))
}

// searchOf is the system and label of a search's name (SearchName without
// its trial), "" when it has neither.
func searchOf(d *schema.SearchResult) string {
	return strings.TrimSpace(d.System + " " + d.Label)
}

// searchNames are the searches' names in a report: SearchName's, and for
// names two searches share (two searches of one system), the file each
// was read from beside it, so that a comparison says which is which.
func searchNames(docs []*schema.SearchResult, files []string) []string {
	shown := make([]string, len(docs))
	seen := map[string]int{}
	for i, d := range docs {
		shown[i] = SearchName(d, files[i])
		seen[shown[i]]++
	}
	for i := range shown {
		if seen[shown[i]] > 1 && shown[i] != files[i] {
			shown[i] += " (" + files[i] + ")"
		}
	}
	return shown
}

// answer is a search's answer in words: with how settled it is (a users
// search's resolution, the counts whose probes disagreed; a search that
// ran out of probes before it settled), or a lower bound.
func answer(d *schema.SearchResult) string {
	return answerOf(d, true)
}

// answerLine is answer for a line that the search's reason follows: the
// probes' noise (noise) is left to the reason where it says it
// (kvreplay's, in results' words), so that the two do not say it twice.
func answerLine(d *schema.SearchResult) string {
	return answerOf(d, !strings.Contains(d.Reason, noise(d)))
}

// noise is what d's probes say of the noise its answer is no more
// certain than: a users search's counts whose probes disagreed
// (results.ProbesDisagreed), a capacity search's probes whose offered
// load fell as --speed rose (results.OfferedLoadFell); "" when nothing.
func noise(d *schema.SearchResult) string {
	if d.Kind == schema.SearchCapacity {
		return results.OfferedLoadFell(d.Probes)
	}
	return results.ProbesDisagreed(d.Probes)
}

// answerOf is answer, with the probes' noise (noise) when disagreed.
func answerOf(d *schema.SearchResult, disagreed bool) string {
	var s string
	if d.Kind == schema.SearchUsers {
		s = fmt.Sprintf("%d of %d users", d.Users, d.TotalUsers)
		var notes []string
		if d.Users > 0 && d.Resolution > 0 && !allUsersPassed(d) {
			notes = append(notes, fmt.Sprintf("resolution %d", d.Resolution))
			if d.Confidence > 0 && d.Confidence < 1 {
				notes = append(notes, fmt.Sprintf("confidence %.0f%%", 100*d.Confidence))
			}
		}
		if n := noise(d); n != "" && disagreed {
			notes = append(notes, n)
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
	} else {
		s = fmt.Sprintf("peak offered load %s at --speed %g", results.FormatRate(d.PeakOfferedBps), d.PeakSpeed)
		if d.SaturatedFromFirstProbe {
			s += ", saturated from the first probe"
		}
		if n := noise(d); n != "" && disagreed {
			s += " (" + n + ")"
		}
	}
	switch {
	case d.AnswerIsLowerBound:
		s = "at least " + s + " (a lower bound: the search stopped early)"
	case d.Kind == schema.SearchCapacity && d.PeakOfferedBps == 0 && len(d.Probes) > 0:
		// Nothing moved, so nothing rose: no peak to be at least.
		s = fmt.Sprintf("no offered load delivered up to --speed %g (no probe's window moved a byte of the tiers measured)",
			slices.Max(probeSpeeds(d.Probes)))
	case !d.Done && d.Kind == schema.SearchCapacity && !d.Plateau:
		s = "at least " + s + " (still rising when the search ran out of probes: --search-probes)"
	case allUsersPassed(d):
		s = "at least " + s + " (every user of the trace passed: a trace with more users finds the limit)"
		if !d.Done {
			s += " (not settled: the search ran out of probes, --search-probes)"
		}
	case !d.Done:
		s += " (not settled: the search ran out of probes, --search-probes)"
	}
	return s
}

// allUsersPassed says that every user of d's traces passed (a users
// search): no count failed a probe, so the answer is a lower bound (its
// resolution absent), and the system may serve more users than the
// traces have.
func allUsersPassed(d *schema.SearchResult) bool {
	return d.Kind == schema.SearchUsers && d.TotalUsers > 0 && d.Users >= d.TotalUsers
}

// probeSpeeds are the probes' --speed values.
func probeSpeeds(ps []schema.SearchProbe) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Speed
	}
	return out
}

// searchDifferences says what keeps d's answer from being set beside
// base's, where both documents say: other traces, another probe window,
// size scale or tier map; nil when nothing does.
func searchDifferences(d, base *schema.SearchResult, name, baseName string) []string {
	var out []string
	if same, _ := SameTraces(d.Traces, base.Traces); len(d.Traces) > 0 && len(base.Traces) > 0 && !same {
		out = append(out, "they searched different traces")
	}
	if d.WindowS != base.WindowS {
		out = append(out, fmt.Sprintf("%s probed %gs windows and %s %gs", name, d.WindowS, baseName, base.WindowS))
	}
	dc, bc := searchConfigOf(d), searchConfigOf(base)
	if dc.SizeScale > 0 && bc.SizeScale > 0 && dc.SizeScale != bc.SizeScale {
		out = append(out, fmt.Sprintf("%s ran at --size-scale %g and %s at %g", name, dc.SizeScale, baseName, bc.SizeScale))
	}
	if dm, bm := dc.tierMap(), bc.tierMap(); dm != "" && bm != "" && dm != bm {
		out = append(out, fmt.Sprintf("%s mapped the tiers %s and %s %s", name, dm, baseName, bm))
	}
	return out
}

// unsettled names those of d and base whose searches did not settle
// their answers (out of probes, or stopped early), or whose answers are
// lower bounds (every user of the traces passed).
func unsettled(d, base *schema.SearchResult, name, baseName string) []string {
	var out []string
	for _, s := range []struct {
		d *schema.SearchResult
		n string
	}{{base, baseName}, {d, name}} {
		switch {
		case !s.d.Done || s.d.AnswerIsLowerBound:
			out = append(out, s.n+"'s answer is not settled")
		case allUsersPassed(s.d):
			out = append(out, s.n+"'s answer is a lower bound (every user of its traces passed)")
		}
	}
	return out
}

// searchConfig is what searchDifferences reads of a search's
// configuration; zero where the document does not say.
type searchConfig struct {
	SizeScale float64  `json:"size_scale"`
	TierMap   []string `json:"tier_map"`
}

// tierMap is the map as --tier-map writes it ("Tier-1=ram,Tier-2=nvme"),
// "" where the document does not say.
func (c searchConfig) tierMap() string {
	var pairs []string
	for i, b := range c.TierMap {
		if b != "" {
			pairs = append(pairs, schema.Tier(i).String()+"="+b)
		}
	}
	return strings.Join(pairs, ",")
}

func searchConfigOf(d *schema.SearchResult) searchConfig {
	var c searchConfig
	if len(d.Config) > 0 {
		_ = json.Unmarshal(d.Config, &c) // a document that does not say compares as zero
	}
	return c
}

// usersMix is a users probe's users by QoS class ("interactive 2, batch
// 6"), in class order; "" when the probe does not say.
func usersMix(p schema.SearchProbe) string {
	var parts []string
	for q := schema.QoSNone; q < schema.NumQoS; q++ {
		if n := p.UsersByQoS[q.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", cmp.Or(q.String(), "no class"), n))
		}
	}
	return strings.Join(parts, ", ")
}

// compareLine compares d's answer with the baseline's, saying what makes
// the two not comparable (searchDifferences) and which is not settled.
func compareLine(d, base *schema.SearchResult, name, baseName string) string {
	line := compareAnswers(d, base, name, baseName)
	if diffs := searchDifferences(d, base, name, baseName); len(diffs) > 0 {
		line += "; NOT COMPARABLE: " + strings.Join(diffs, "; ")
	}
	if u := unsettled(d, base, name, baseName); len(u) > 0 {
		line += "; " + strings.Join(u, ", ")
	}
	return line
}

// compareAnswers sets d's answer beside the baseline's.
func compareAnswers(d, base *schema.SearchResult, name, baseName string) string {
	if d.Kind == schema.SearchUsers {
		if base.Users == 0 {
			return fmt.Sprintf("%s serves %d users; %s serves none", name, d.Users, baseName)
		}
		return fmt.Sprintf("%s serves %.2fx the users of %s (%d vs %d)", name, float64(d.Users)/float64(base.Users), baseName, d.Users, base.Users)
	}
	switch {
	case base.PeakOfferedBps == 0 && d.PeakOfferedBps == 0:
		return fmt.Sprintf("neither %s nor %s delivered an offered load", name, baseName)
	case d.PeakOfferedBps == 0:
		return fmt.Sprintf("%s delivered nothing; %s peaks at an offered load of %s", name, baseName, results.FormatRate(base.PeakOfferedBps))
	case base.PeakOfferedBps == 0:
		return fmt.Sprintf("%s peaks at an offered load of %s; %s delivered nothing", name, results.FormatRate(d.PeakOfferedBps), baseName)
	}
	return fmt.Sprintf("%s delivers %.2fx the peak offered load of %s (%s vs %s)", name, d.PeakOfferedBps/base.PeakOfferedBps, baseName,
		results.FormatRate(d.PeakOfferedBps), results.FormatRate(base.PeakOfferedBps))
}

// probeRow is a probe's row of the probe table: its offered load (bytes
// over its elapsed time) in GB/s, decimal, as every kvbench bandwidth; its
// verdict is its
// search's (Pass and Reason, judged by kvreplay, in results.ProbeVerdict's
// words), or that it is not a measurement.
func probeRow(d *schema.SearchResult, p schema.SearchProbe) []string {
	load := count(p.Users, "user")
	if mix := usersMix(p); mix != "" {
		load += " (" + mix + ")"
	}
	if d.Kind == schema.SearchCapacity {
		load = fmt.Sprintf("--speed %g", p.Speed)
	}
	tokens := "-"
	if tok, ok := probeTokens(d, p); ok {
		tokens = fmt.Sprintf("%.0f", tok)
	}
	return []string{load, fmt.Sprintf("%.1f", p.RequestsPerSecond), tokens,
		results.FormatGB(p.OfferedBps), p.P95s(), results.ProbeVerdict(p)}
}

// probeTokens is a probe's storage throughput (the reference's tokens
// over storage time), unless it did not measure it: a capacity search's
// probes replay open loop, whose requests do not wait for their storage,
// and write 0 for it.
func probeTokens(d *schema.SearchResult, p schema.SearchProbe) (float64, bool) {
	if d.Kind == schema.SearchCapacity && p.TokensPerSecond == 0 {
		return 0, false
	}
	return p.TokensPerSecond, true
}

var probeHeader = []string{"probe", "requests/s", "tokens/s", "offered GB/s", "p95 ms by QoS", "verdict"}

// SearchFormats are the formats RenderSearches writes.
var SearchFormats = []string{"text", "md", "html", "json", "csv"}

// RenderSearches writes the searches in format: text, md, html, json (each
// document whole, with its answer in words) or csv (a row a probe).
func RenderSearches(w io.Writer, docs []*schema.SearchResult, names []string, format string) error {
	if len(docs) == 0 {
		return errors.New("report: no search document")
	}
	var b bytes.Buffer
	switch format {
	case "text", "md":
		renderSearchText(&b, docs, names, format == "md")
	case "html":
		renderSearchHTML(&b, docs, names)
	case "json":
		if err := renderSearchJSON(&b, docs, names); err != nil {
			return err
		}
	case "csv":
		if err := renderSearchCSV(&b, docs, names); err != nil {
			return err
		}
	default:
		return fmt.Errorf("report: --format %s: search documents render as %s", parsemsg.Arg(format), strings.Join(SearchFormats, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// renderSearchText writes each search's answer and probe table, aligned
// text or Markdown, then the answers compared with the first's.
func renderSearchText(b *bytes.Buffer, docs []*schema.SearchResult, names []string, md bool) {
	shown := searchNames(docs, names)
	for i, d := range docs {
		name := shown[i]
		if md {
			fmt.Fprintf(b, "## %s\n\n**%s**. %s\n\n", mdLine(name+": "+d.Kind+" search"), mdCell(answerLine(d)), mdCell(d.Reason))
			fmt.Fprintf(b, "| %s |\n|%s\n", mdRow(probeHeader), strings.Repeat("---|", len(probeHeader)))
			for _, p := range d.Probes {
				fmt.Fprintf(b, "| %s |\n", mdRow(probeRow(d, p)))
			}
		} else {
			fmt.Fprintf(b, "%s: %s search, %d probes of %gs: %s\n  %s\n", name, d.Kind, len(d.Probes), d.WindowS, answerLine(d), d.Reason)
			w := 14 // the probe column: as wide as its widest
			for _, p := range d.Probes {
				w = max(w, len(probeRow(d, p)[0]))
			}
			fmt.Fprintf(b, "  %-*s %10s %9s %12s  %-40s %s\n", w, probeHeader[0], probeHeader[1], probeHeader[2], probeHeader[3], probeHeader[4], probeHeader[5])
			for _, p := range d.Probes {
				r := probeRow(d, p)
				fmt.Fprintf(b, "  %-*s %10s %9s %12s  %-40s %s\n", w, r[0], r[1], r[2], r[3], r[4], r[5])
			}
		}
		if md && len(d.Warnings) > 0 {
			b.WriteString("\n") // a line right after a table would be read as a row of it
		}
		for _, warn := range d.Warnings {
			if md {
				fmt.Fprintf(b, "- WARNING: %s\n", mdCell(warn))
			} else {
				fmt.Fprintf(b, "  WARNING: %s\n", warn)
			}
		}
		b.WriteString("\n")
	}
	for i := 1; i < len(docs); i++ {
		line := compareLine(docs[i], docs[0], shown[i], shown[0])
		if md {
			line = mdLine(line)
		}
		fmt.Fprintln(b, line)
	}
}

// renderSearchHTML writes the searches as one self-contained page, with
// the report's styling and charts with labelled axes.
func renderSearchHTML(b *bytes.Buffer, docs []*schema.SearchResult, names []string) {
	shown := searchNames(docs, names)
	// The report's page: its styling, charts with labelled axes.
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>kvbench search</title>\n<style>\n" +
		htmlCSS + "</style>\n</head>\n<body>\n<h1>kvbench search</h1>\n")
	// The page's warnings lead it, each naming its search where there are
	// several: two searches' "SCALED RUN" read as one search's twice.
	var warnings []string
	for i, d := range docs {
		for _, w := range d.Warnings {
			if len(docs) > 1 {
				w = shown[i] + ": " + w
			}
			warnings = append(warnings, w)
		}
	}
	if len(warnings) > 0 {
		b.WriteString("<section class=\"warnings\">\n<h2>Warnings</h2>\n<ul>")
		for _, w := range warnings {
			fmt.Fprintf(b, "<li>WARNING: %s</li>", html.EscapeString(w))
		}
		b.WriteString("</ul>\n</section>\n")
	}
	for i, d := range docs {
		name := shown[i]
		fmt.Fprintf(b, "<section>\n<h2>%s: %s search</h2>\n<p><b>%s</b>. %s</p>\n", html.EscapeString(name), html.EscapeString(d.Kind),
			html.EscapeString(answerLine(d)), html.EscapeString(d.Reason))
		if d.WindowS > 0 {
			fmt.Fprintf(b, "<p>%d probes, each a replay of %gs.", len(d.Probes), d.WindowS)
		} else {
			fmt.Fprintf(b, "<p>%d probes.", len(d.Probes))
		}
		if d.UserSelection != "" {
			fmt.Fprintf(b, " Users: %s.", html.EscapeString(d.UserSelection))
		}
		b.WriteString("</p>\n<div class=\"charts\">")
		for _, c := range searchCharts(d) {
			b.WriteString(string(c.SVG()))
		}
		b.WriteString("</div>\n<table>\n<tr>")
		for j, h := range probeHeader {
			fmt.Fprintf(b, "<th%s>%s</th>", leftIf(j == 0 || j >= 4), html.EscapeString(h))
		}
		b.WriteString("</tr>\n")
		for _, p := range d.Probes {
			b.WriteString("<tr>")
			for j, c := range probeRow(d, p) {
				class := leftIf(j == 0 || j == 4)
				if j == 5 {
					class = ` class="pass"`
					if !p.Pass {
						class = ` class="fail"`
					}
				}
				fmt.Fprintf(b, "<td%s>%s</td>", class, html.EscapeString(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n</section>\n")
	}
	for i := 1; i < len(docs); i++ {
		fmt.Fprintf(b, "<p>%s</p>\n", html.EscapeString(compareLine(docs[i], docs[0], shown[i], shown[0])))
	}
	b.WriteString("</body>\n</html>\n")
}

// renderSearchJSON writes the searches for a program: each document whole
// under "search", with its name and answer in words, and the comparisons.
func renderSearchJSON(b *bytes.Buffer, docs []*schema.SearchResult, names []string) error {
	shown := searchNames(docs, names)
	type named struct {
		Name   string               `json:"name"`
		Answer string               `json:"answer"`
		Search *schema.SearchResult `json:"search"`
	}
	out := struct {
		Searches    []named  `json:"searches"`
		Comparisons []string `json:"comparisons"`
	}{Comparisons: []string{}}
	for i, d := range docs {
		out.Searches = append(out.Searches, named{Name: shown[i], Answer: answer(d), Search: d})
	}
	for i := 1; i < len(docs); i++ {
		out.Comparisons = append(out.Comparisons, compareLine(docs[i], docs[0], shown[i], shown[0]))
	}
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// renderSearchCSV writes a row a probe of every search, in the order they
// ran, with the figures unrounded (offered load in GB/s, decimal) and a
// p95 column for each QoS class any probe names; an empty field is a
// figure the probe does not have. Each row carries its search's answer,
// its comparison with the first search and its warnings (joined by " | "),
// as the results' CSV carries a group's.
func renderSearchCSV(b *bytes.Buffer, docs []*schema.SearchResult, names []string) error {
	shown := searchNames(docs, names)
	var classes []string
	for q := schema.QoSNone; q < schema.NumQoS; q++ {
		if slices.ContainsFunc(docs, func(d *schema.SearchResult) bool {
			return slices.ContainsFunc(d.Probes, func(p schema.SearchProbe) bool { _, ok := p.P95MSByQoS[q.String()]; return ok })
		}) {
			classes = append(classes, q.String())
		}
	}
	header := []string{"search", "kind", "answer", "probe", "users", "speed", "pass", "storage_health", "not_measured", "wall_s",
		"requests", "requests_per_second", "tokens_per_second", "offered_GB_per_s"}
	for _, c := range classes {
		header = append(header, "p95_ms_"+cmp.Or(c, "none"))
	}
	w := csv.NewWriter(b)
	if err := w.Write(append(header, "verdict", "comparison", "warnings")); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, d := range docs {
		name, compared := shown[i], ""
		if i > 0 {
			compared = compareLine(d, docs[0], name, shown[0])
		}
		warns := strings.Join(d.Warnings, " | ")
		for j, p := range d.Probes {
			users, speed := strconv.Itoa(p.Users), num(p.Speed)
			if d.Kind == schema.SearchCapacity {
				users = ""
			} else {
				speed = ""
			}
			row := []string{csvText(name), d.Kind, answer(d), strconv.Itoa(j + 1), users, speed, strconv.FormatBool(p.Pass), p.Health, p.NotMeasured,
				num(p.WallS), strconv.FormatInt(p.Requests, 10), num(p.RequestsPerSecond), "", num(p.OfferedBps / results.GB)}
			if tok, ok := probeTokens(d, p); ok {
				row[12] = num(tok)
			}
			for _, c := range classes {
				field := "" // the class has no figure in this probe
				if v, ok := p.P95MSByQoS[c]; ok {
					field = num(v)
				}
				row = append(row, field)
			}
			if err := w.Write(append(row, csvText(results.ProbeVerdict(p)), csvText(compared), csvText(warns))); err != nil {
				return err
			}
		}
	}
	w.Flush()
	return w.Error()
}

// leftIf is the class attribute of a left-aligned cell when left.
func leftIf(left bool) string {
	if left {
		return ` class="l"`
	}
	return ""
}

// searchCharts plots a search's probes against their load (users, or
// --speed as a multiple of the trace's pace), in load order: the
// throughput (requests/s of a users search, the offered load delivered,
// bytes over the elapsed time, in GB/s of a capacity search), and each
// QoS class's p95 request latency in ms.
func searchCharts(d *schema.SearchResult) []svgLineChart {
	probes := slices.Clone(d.Probes)
	load := func(p schema.SearchProbe) float64 {
		if d.Kind == schema.SearchCapacity {
			return p.Speed
		}
		return float64(p.Users)
	}
	slices.SortStableFunc(probes, func(a, b schema.SearchProbe) int { return cmp.Compare(load(a), load(b)) })
	xl := "users (probe)"
	tp := svgLineChart{Title: "Throughput by users", XLabel: xl, YLabel: "requests/s"}
	if d.Kind == schema.SearchCapacity {
		xl = "--speed (× the trace's pace)"
		tp = svgLineChart{Title: "Offered load delivered by --speed", XLabel: xl, YLabel: "offered load (GB/s)"}
	}
	lat := svgLineChart{Title: "p95 request latency by QoS class", XLabel: xl, YLabel: "p95 latency (ms)"}
	series := svgSeries{Name: tp.YLabel}
	byClass := map[string]*svgSeries{}
	for _, p := range probes {
		if p.NotMeasured != "" {
			continue // not a measurement: not on the curve
		}
		y := p.RequestsPerSecond
		if d.Kind == schema.SearchCapacity {
			y = p.OfferedBps / results.GB
		}
		series.Points = append(series.Points, svgPoint{load(p), y})
		for q := schema.QoSNone; q < schema.NumQoS; q++ {
			v, ok := p.P95MSByQoS[q.String()]
			if !ok {
				continue
			}
			s := byClass[q.String()]
			if s == nil {
				s = &svgSeries{Name: cmp.Or(q.String(), "no class")}
				byClass[q.String()] = s
			}
			s.Points = append(s.Points, svgPoint{load(p), v})
		}
	}
	if len(series.Points) == 0 {
		return nil
	}
	tp.Series = []svgSeries{series}
	for q := schema.QoSNone; q < schema.NumQoS; q++ {
		if s := byClass[q.String()]; s != nil {
			lat.Series = append(lat.Series, *s)
		}
	}
	charts := []svgLineChart{tp}
	if len(lat.Series) > 0 {
		charts = append(charts, lat)
	}
	return charts
}
