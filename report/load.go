package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/results"
	"github.com/kvbench/kvbench/schema"
)

// Kinds of input documents (Doc.Kind).
const (
	KindKVReplay  = "kvreplay"
	KindReference = "kv-cache.py"
	// KindSimulated is kvtrace's --output statistics: the reference's
	// dialect, from a simulation in virtual time, not a measurement.
	KindSimulated = "kvtrace"
)

// simulatedNote is how every format marks kvtrace's statistics.
const simulatedNote = "simulated (kvtrace): not a measurement"

// LoadOptions say how loaded documents are labelled.
type LoadOptions struct {
	// Label, when set, labels every document (one group).
	Label string
	// GroupBy, when set, labels each document by these keys joined with
	// "/": "system", "label", "config" (the trace's name without
	// extensions, or the reference document's file name) and "file"; a
	// document without the key's value has "no-<key>" (no-label).
	GroupBy []string
	// Open, when set, opens a named file for Load (os.Open otherwise):
	// kvreport's waits for a named pipe's writer under its signal
	// context, so that ^C stops a wait that open(2) would not let go of.
	Open func(name string) (io.ReadCloser, error)
}

// GroupKeys are the keys LoadOptions.GroupBy accepts.
var groupKeys = []string{"system", "label", "config", "file"}

// Validate reports every problem of o, one per line.
func (o LoadOptions) Validate() error {
	var errs []error
	if o.Label != "" && len(o.GroupBy) > 0 {
		errs = append(errs, fmt.Errorf("--label %s and --group-by %s: --label puts every document in one group, which --group-by would not change: give one of them",
			parsemsg.Arg(o.Label), parsemsg.Arg(strings.Join(o.GroupBy, ","))))
	}
	for _, k := range o.GroupBy {
		if !slices.Contains(groupKeys, k) {
			errs = append(errs, fmt.Errorf("--group-by %s: must be one of %s", parsemsg.Arg(k), strings.Join(groupKeys, ", ")))
		}
	}
	return errors.Join(errs...)
}

// Expand returns the files a path names: itself, or the matches of a
// glob pattern (an error when none matches).
func Expand(p string) ([]string, error) {
	if !strings.ContainsAny(p, "*?[") {
		return []string{p}, nil
	}
	m, err := filepath.Glob(p)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", parsemsg.Printable(p), err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("report: %s: no file matches", parsemsg.Printable(p))
	}
	return m, nil
}

// Load reads the documents named by paths: files, globs, and "-" for a
// stream of concatenated JSON documents read from stdin. Each is a kvreplay
// result document or a kv-cache.py --output document; anything else, or a
// newer format version, is refused with an error naming the file and why.
// Keys the schema does not know are ignored; a key of the schema spelt in
// another case, or any key given twice in one object, is refused
// (schema.CheckKeys), as kv-cache.py's and MLPerf's Python readers would
// not read it as encoding/json does.
// Documents are labelled as opt says, else by their own Label, System, or
// file name; Trial and Rank come from the document. The text of a
// document, its label and its path (in errors too) are made printable
// (parsemsg.Printable: a control character escaped, as Go quotes it), so that
// every format shows the same text and none breaks a line, a table or a
// terminal.
func Load(paths []string, stdin io.Reader, opt LoadOptions) ([]*Doc, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	open := opt.Open
	if open == nil {
		open = func(name string) (io.ReadCloser, error) { return os.Open(name) }
	}
	var docs []*Doc
	for _, p := range paths {
		if p == "-" {
			if stdin == nil {
				return nil, errors.New("report: -: no standard input")
			}
			ds, err := decodeStream("-", stdin)
			if err != nil {
				return nil, err
			}
			docs = append(docs, ds...)
			continue
		}
		names, err := Expand(p)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if fi, err := os.Stat(name); err == nil && fi.IsDir() {
				return nil, fmt.Errorf("report: %s: a directory, not a result document: give the results in it (%s), "+
					"or aggregate a run's .../trial_<T>/rank_<N>/ directories with kvreport --aggregate mlperf", parsemsg.Printable(name), parsemsg.Printable(filepath.Join(name, "*.json")))
			}
			f, err := open(name)
			if err != nil {
				return nil, fmt.Errorf("report: %w", cli.FileError(err))
			}
			ds, err := decodeStream(name, f)
			f.Close()
			if err != nil {
				return nil, err
			}
			docs = append(docs, ds...)
		}
	}
	if err := checkGroupBy(docs, opt.GroupBy); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	for _, d := range docs {
		d.Label = parsemsg.Printable(labelOf(d, opt))
	}
	return docs, nil
}

// groupKeySetBy says what gives a document a --group-by key it may lack
// (config and file every document has).
var groupKeySetBy = map[string]string{"system": "kvreplay --system", "label": "kvreplay --label"}

// checkGroupBy refuses a --group-by key that none of docs has: it would
// put every document in one group, "no-<key>", and tell none apart. The error
// says what sets the key and what the documents can be grouped by.
func checkGroupBy(docs []*Doc, keys []string) error {
	for _, k := range keys {
		setBy, ok := groupKeySetBy[k]
		if !ok || slices.ContainsFunc(docs, func(d *Doc) bool { return groupValue(d, k) != "" }) {
			continue
		}
		var others []string
		for _, o := range groupKeys {
			if o == k || slices.Contains(keys, o) {
				continue
			}
			if _, lacks := groupKeySetBy[o]; !lacks {
				others = append(others, o)
				continue
			}
			var vals []string
			for _, d := range docs {
				if v := groupValue(d, o); v != "" && !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			if len(vals) > 0 {
				others = append(others, fmt.Sprintf("%s (%s)", o, strings.Join(vals, ", ")))
			}
		}
		what := fmt.Sprintf("none of the %d documents has a %s", len(docs), k)
		if len(docs) == 1 {
			what = "the document has no " + k
		}
		instead := "give --label NAME to put them in one group"
		if n := len(others); n > 0 {
			by := others[n-1]
			if n > 1 {
				by = strings.Join(others[:n-1], ", ") + " or " + by
			}
			instead = "group them by what they have, --group-by " + by + ", or " + instead
		}
		return fmt.Errorf("--group-by %s: %s (%s sets one; kv-cache.py documents have none): %s", k, what, setBy, instead)
	}
	return nil
}

// decodeStream decodes the concatenated JSON documents of r, read from
// the file name. It reads r whole (result documents are small) so that an
// error can name the line and column where it is. The documents' Path,
// and its errors, name the file printable (parsemsg.Printable): a file name, as
// the text of a document, is shown escaped.
func decodeStream(name string, r io.Reader) ([]*Doc, error) {
	name = parsemsg.Printable(name)
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("report: %s: %w", name, cli.UnwrapPath(err))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []*Doc
	for i := 0; ; i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			if i == 0 {
				return nil, fmt.Errorf("report: %s: %w: empty input, want a JSON document", name, ErrFormat)
			}
			return docs, nil
		} else if err != nil {
			err = jsonError(name, data, 0, err)
			if pe := (*ParseError)(nil); i == 0 && errors.As(err, &pe) && pe.Line == 1 && pe.Column == 1 {
				// Not JSON from its first byte: a trace, a log, a
				// compressed file, not a document kvreport reads.
				pe.Msg += " (not JSON: kvreport reads kvreplay results, kv-cache.py --output and kvtrace --output documents; a trace is replayed with kvreplay first)"
			}
			return nil, fmt.Errorf("report: %w", err)
		}
		path := name
		if name == "-" || i > 0 {
			path = fmt.Sprintf("%s#%d", name, i+1)
		}
		start := int(dec.InputOffset()) - len(raw)
		d, err := decode(path, raw, func(err error) error { return jsonError(name, data, start, err) })
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

// Decode decodes one document read from path: a kvreplay result or a
// kv-cache.py --output document, its text and path made printable (see
// Load). The Doc's Label is the document's own. A document that is not
// JSON, has a value of the wrong type or a key Load refuses gets a
// *ParseError naming path, the line and the column.
func Decode(path string, raw []byte) (*Doc, error) {
	path = parsemsg.Printable(path)
	return decode(path, raw, func(err error) error { return jsonError(path, raw, 0, err) })
}

// decode is Decode, with place turning a JSON error of raw into one that
// names where it is.
func decode(path string, raw []byte, place func(error) error) (*Doc, error) {
	var probe struct {
		Format            *string         `json:"format"`
		FormatVersion     int             `json:"format_version"`
		Summary           json.RawMessage `json:"summary"`
		RequestsCompleted json.RawMessage `json:"requests_completed"`
		// Kvbench is the block kvtrace's statistics add to the
		// reference's dialect.
		Kvbench json.RawMessage `json:"kvbench"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		err = place(err)
		if pe := (*ParseError)(nil); errors.As(err, &pe) && pe.Field == "" {
			// Not an object at all: not a document kvreport reads.
			pe.Msg += " (a kvreplay result or a kv-cache.py --output document)"
			pe.Err = errors.Join(ErrFormat, pe.Err)
		}
		return nil, fmt.Errorf("report: %w", err)
	}
	switch {
	case probe.Format != nil && *probe.Format == schema.ResultFormat:
		if probe.FormatVersion > schema.ResultFormatVersion || probe.FormatVersion < 1 {
			return nil, fmt.Errorf("report: %s: %w: format_version %d, this kvreport reads 1 to %d",
				path, ErrFormat, probe.FormatVersion, schema.ResultFormatVersion)
		}
		var r schema.Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("report: %w", place(err))
		}
		if err := schema.CheckKeys(raw, &r); err != nil {
			return nil, fmt.Errorf("report: %w", place(err))
		}
		if probe.FormatVersion < 3 {
			if err := schema.UpgradeBandwidths(&r, raw); err != nil {
				return nil, fmt.Errorf("report: %s: %w", path, err)
			}
		}
		if probe.FormatVersion == 1 {
			// Version 1 had Go field names in config and traces' meta.
			r.Config = schema.SnakeCaseKeys(r.Config)
			for i := range r.Traces {
				r.Traces[i].Meta = schema.SnakeCaseKeys(r.Traces[i].Meta)
			}
		}
		if err := checkResult(&r); err != nil {
			return nil, fmt.Errorf("report: %s: %w", path, err)
		}
		printableStrings(reflect.ValueOf(&r).Elem())
		return &Doc{Path: path, Kind: KindKVReplay, Label: r.Label, System: r.System, Config: parsemsg.Printable(configOf(&r, path)),
			Trial: r.Trial, Rank: r.Rank, Result: &r}, nil
	case probe.Format != nil:
		return nil, fmt.Errorf("report: %s: %w: format %q, want %q or a kv-cache.py --output document",
			path, ErrFormat, *probe.Format, schema.ResultFormat)
	case probe.Summary != nil && probe.RequestsCompleted != nil:
		return decodeReference(path, raw, place, probe.Kvbench != nil)
	}
	return nil, fmt.Errorf("report: %s: %w: neither a kvreplay result (no \"format\": %q) nor a kv-cache.py --output document (no \"summary\" and \"requests_completed\")",
		path, ErrFormat, schema.ResultFormat)
}

// configOf names a kvreplay run's configuration: its traces' names without
// directories and extensions, so a kvreplay run and the reference's run of
// the same configuration share it.
func configOf(r *schema.Result, path string) string {
	var names []string
	for _, t := range r.Traces {
		names = append(names, baseName(t.File))
	}
	if len(names) == 0 {
		return baseName(path)
	}
	return strings.Join(names, "+")
}

// baseName is a path's file name without its extensions (.json, .csv,
// .zst).
func baseName(p string) string {
	b := filepath.Base(p)
	if i := strings.IndexByte(b, '#'); i > 0 {
		b = b[:i]
	}
	for _, ext := range []string{".zst", ".csv", ".json"} {
		b = strings.TrimSuffix(b, ext)
	}
	return b
}

// groupValue is document d's value of the --group-by key k ("" when it
// has none).
func groupValue(d *Doc, k string) string {
	switch k {
	case "system":
		return d.System
	case "label":
		return d.Label
	case "config":
		return d.Config
	case "file":
		return baseName(d.Path)
	}
	return ""
}

func labelOf(d *Doc, opt LoadOptions) string {
	if opt.Label != "" {
		return opt.Label
	}
	if len(opt.GroupBy) > 0 {
		parts := make([]string, 0, len(opt.GroupBy))
		for _, k := range opt.GroupBy {
			v := groupValue(d, k)
			if v == "" {
				v = "no-" + k // not "-", which names stdin
			}
			parts = append(parts, v)
		}
		return strings.Join(parts, "/")
	}
	switch {
	case d.Label != "":
		return d.Label
	case d.System != "":
		return d.System
	}
	return baseName(d.Path)
}

// reference is the part of a kv-cache.py --output document kvreport reads
// (reference section 5).
type reference struct {
	RequestsCompleted     int64   `json:"requests_completed"`
	TotalStorageIOLatency float64 `json:"total_storage_io_latency"`
	Summary               struct {
		TotalRequests                 int64               `json:"total_requests"`
		ElapsedTime                   *float64            `json:"elapsed_time"`
		TotalStorageIOTime            float64             `json:"total_storage_io_time"`
		StorageThroughputTokensPerSec *float64            `json:"storage_throughput_tokens_per_sec"`
		RequestsPerSecond             *float64            `json:"requests_per_second"`
		StorageIOLatencyMS            *schema.Percentiles `json:"storage_io_latency_ms"`
		CacheStats                    map[string]any      `json:"cache_stats"`
		QoS                           map[string]refQoS   `json:"qos_metrics"`
	} `json:"summary"`
}

type refQoS struct {
	NoData        bool  `json:"no_data"`
	TotalRequests int64 `json:"total_requests"`
	LatencyMS     struct {
		Mean float64 `json:"mean"`
		P50  float64 `json:"p50"`
		P95  float64 `json:"p95"`
		P99  float64 `json:"p99"`
		Max  float64 `json:"max"`
	} `json:"latency_ms"`
	SLA struct {
		TargetP95MS float64 `json:"target_p95_ms"`
		Compliance  float64 `json:"compliance"`
		Met         bool    `json:"met"`
	} `json:"sla"`
}

// decodeReference maps a kv-cache.py --output document onto the result
// fields and metrics that mean the same. Its latencies are kept only when
// the run measured storage time (in trace mode the reference times
// nothing and reports zeros, which are unknowns, not measurements). Its
// tier bandwidths are bytes over the run, in GiB/s: they become offered
// loads, in GB/s. A simulated document (kvtrace's statistics, in the same
// dialect) is a KindSimulated Doc: no bandwidth (its rates are over
// virtual time), no storage_health verdict and no SLA verdict are taken
// from it, and every format marks it simulated.
func decodeReference(path string, raw []byte, place func(error) error, simulated bool) (*Doc, error) {
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		return nil, fmt.Errorf("report: %w (a kv-cache.py --output document)", place(err))
	}
	if err := schema.CheckKeys(raw, &ref); err != nil {
		return nil, fmt.Errorf("report: %w (a kv-cache.py --output document)", place(err))
	}
	var all map[string]any
	_ = json.Unmarshal(raw, &all)
	s := ref.Summary
	d := refDoc{cs: s.CacheStats, values: map[string]float64{}, simulated: simulated,
		r: &schema.Result{Header: schema.Header{Format: schema.ResultFormat, FormatVersion: schema.ResultFormatVersion, Tool: KindReference},
			Ranks: 1, Complete: true, SizeScale: 1}}
	r := d.r
	if s.ElapsedTime != nil {
		r.WallS = d.figure("summary.elapsed_time", *s.ElapsedTime)
		r.Summary.ElapsedTime = r.WallS
		d.values[MetricElapsed] = r.WallS
	}
	r.Requests.Count = ref.RequestsCompleted
	r.Summary.TotalRequests = s.TotalRequests
	if s.RequestsPerSecond != nil {
		r.Summary.RequestsPerSecond = d.figure("summary.requests_per_second", *s.RequestsPerSecond)
		d.values[MetricRequestsPerS] = r.Summary.RequestsPerSecond
	}
	measured := s.TotalStorageIOTime > 0 || ref.TotalStorageIOLatency > 0
	if measured && s.StorageThroughputTokensPerSec != nil {
		r.Summary.StorageThroughputTokensPerSec = d.figure("summary.storage_throughput_tokens_per_sec", *s.StorageThroughputTokensPerSec)
		d.values[MetricRefTokens] = r.Summary.StorageThroughputTokensPerSec
	}
	if measured && s.StorageIOLatencyMS != nil {
		l := s.StorageIOLatencyMS
		for _, p := range []struct {
			name string
			v    float64
		}{{"mean", l.Mean}, {"p50", l.P50}, {"p95", l.P95}, {"p99", l.P99}, {"p999", l.P999}, {"p9999", l.P9999}} {
			d.figure("summary.storage_io_latency_ms."+p.name, p.v)
		}
		d.check(ordered("summary.storage_io_latency_ms.", []string{"p50", "p95", "p99", "p999", "p9999"},
			[]float64{l.P50, l.P95, l.P99, l.P999, l.P9999}, maxFigure))
		r.Summary.StorageIOLatencyMS = *l
		d.values[MetricRequestP95] = l.P95
	}
	d.tiers()
	if err := d.health(raw); err != nil {
		return nil, fmt.Errorf("report: %w (a kv-cache.py --output document)", place(err))
	}
	if measured {
		d.latencies() // after health: its CPU RAM criterion holds the pooled CPU P95
	}
	d.qos(s.QoS)
	d.counts(&ref)
	if d.err != nil {
		return nil, fmt.Errorf("report: %w (a kv-cache.py --output document)", place(d.err))
	}
	kind := KindReference
	switch {
	case simulated:
		kind, r.Tool = KindSimulated, KindSimulated
		r.Tiers = nil
		r.Summary = schema.Summary{ElapsedTime: r.Summary.ElapsedTime, TotalRequests: r.Summary.TotalRequests,
			RequestsPerSecond: r.Summary.RequestsPerSecond, NotMeasured: map[string]string{results.NotMeasuredSLA: simulatedNote}}
		// Its virtual elapsed time and requests per second of it, marked
		// simulated wherever they are shown, and compared with nothing
		// measured.
		d.values = map[string]float64{}
		if r.WallS > 0 {
			d.values[MetricElapsed] = r.WallS
		}
		if rps := r.Summary.RequestsPerSecond; rps > 0 {
			d.values[MetricRequestsPerS] = rps
		}
	case !measured:
		r.Summary.NotMeasured = map[string]string{results.NotMeasuredSLA: "kv-cache.py timed no storage I/O (its trace mode): its storage latencies are zeros; " + refQoSLatency}
		if h := &r.Summary.StorageHealth; h.OverallStatus == schema.HealthPass {
			// Its criteria passed on latencies of zero: a PASS without
			// grounds (the reference's metrics issues, reference section 7),
			// which no format shows as one: a simulation's verdict, as
			// kvtrace's own (results.Simulated).
			*h = results.Simulated(h.Criteria, refTraceModePass)
			delete(d.values, MetricHealth)
		}
	default:
		qosValues(r, d.values)
		r.Warnings = append(r.Warnings, "kv-cache.py's SLA per QoS class (qos_*_p95, qos_*_within_target, qos_*_sla_met): "+refQoSLatency+
			", so it compares with kvreplay's storage latency only as far as kv-cache.py's requests spent their time in storage")
	}
	r.Started = time.Time{}
	printableStrings(reflect.ValueOf(r).Elem())
	return &Doc{Path: path, Kind: kind, Config: parsemsg.Printable(baseName(path)), Result: r, Reference: all, Values: d.values}, nil
}

// refTraceModePass is why a kv-cache.py document's PASS in trace mode is
// NO_DATA.
const refTraceModePass = "kv-cache.py timed no storage I/O (its trace mode): the criteria it passed judged storage latencies " +
	"of zero, which it did not measure: no verdict"

// refQoSLatency says what kv-cache.py's per-QoS latency is (reference
// section 3.6): not storage latency, which the SLA table's other rows hold.
const refQoSLatency = "the p95 and compliance it gives per QoS class are of its end-to-end request latency " +
	"(submission to completion: queue wait, storage I/O and generation time), not of storage latency"

// refDoc is a kv-cache.py --output document being read into a result r
// and its metric values: cs is its summary's cache_stats; err the first
// figure out of range.
type refDoc struct {
	r      *schema.Result
	values map[string]float64
	cs     map[string]any
	err    error
	// simulated marks kvtrace's statistics, whose storage_health is
	// results.Simulated's: NO_DATA where its criteria passed.
	simulated bool
}

// maxFigure bounds the figures kvreport reads from a kv-cache.py document
// (seconds, GB, GiB/s, ms, tokens/s, requests): a billion of any is a
// damaged document, and 1e300 GB read as bytes is past any integer.
const maxFigure = 1e9

// maxTokenRate bounds a kvreplay document's token rates, which a replay at
// a small size scale takes past maxFigure.
const maxTokenRate = 1e15

// figure checks the figure v the document holds under name: a number from
// 0 to maxFigure; the first that is not is d.err.
func (d *refDoc) figure(name string, v float64) float64 {
	if d.err == nil {
		d.err = boundedFigure(name, v, maxFigure)
	}
	return v
}

// boundedFigure refuses a figure v, named name, that is not a number from
// 0 to most: no run gives it (a damaged document).
func boundedFigure(name string, v, most float64) error {
	if v >= 0 && v <= most {
		return nil
	}
	return fmt.Errorf("%s is %g: want a number from 0 to %g (a damaged document?)", name, v, most)
}

// check makes err, when it is one, d.err, unless d.err is one already.
func (d *refDoc) check(err error) {
	if d.err == nil {
		d.err = err
	}
}

// num is the number cache_stats holds under k, if it holds one.
func (d *refDoc) num(k string) (float64, bool) {
	v, ok := d.cs[k].(float64)
	if ok {
		d.figure("summary.cache_stats."+k, v)
	}
	return v, ok
}

// counts checks the document's request counts and its QoS classes'
// figures.
func (d *refDoc) counts(ref *reference) {
	d.figure("requests_completed", float64(ref.RequestsCompleted))
	d.figure("summary.total_requests", float64(ref.Summary.TotalRequests))
	for _, q := range slices.Sorted(maps.Keys(ref.Summary.QoS)) {
		m, pre := ref.Summary.QoS[q], "summary.qos_metrics."+q+"."
		d.figure(pre+"total_requests", float64(m.TotalRequests))
		l := m.LatencyMS
		for i, v := range []float64{l.Mean, l.P50, l.P95, l.P99, l.Max, m.SLA.TargetP95MS, m.SLA.Compliance} {
			d.figure(pre+[...]string{"latency_ms.mean", "latency_ms.p50", "latency_ms.p95", "latency_ms.p99", "latency_ms.max",
				"sla.target_p95_ms", "sla.compliance"}[i], v)
		}
		// numpy's percentiles of one set of samples: in order, the mean
		// at most the max.
		d.check(ordered(pre+"latency_ms.", []string{"p50", "p95", "p99", "max"}, []float64{l.P50, l.P95, l.P99, l.Max}, maxFigure))
		if d.err == nil && l.Max > 0 && l.Mean > l.Max {
			d.err = fmt.Errorf("%slatency_ms.mean is %g: want at most latency_ms.max, %g (a damaged document?)", pre, l.Mean, l.Max)
		}
		// kv-cache.py's compliance is a share, its SLA met at
		// ComplianceTarget of it (reference section 3.6).
		d.check(boundedFigure(pre+"sla.compliance", m.SLA.Compliance, 1))
		if met := m.SLA.Compliance >= results.ComplianceTarget; d.err == nil && !m.NoData && m.TotalRequests > 0 && m.SLA.Met != met {
			d.err = fmt.Errorf("%ssla.met is %t with compliance %g: the SLA is met at %g (a damaged document?)", pre, m.SLA.Met, m.SLA.Compliance, results.ComplianceTarget)
		}
	}
}

// tiers reads each tier's bandwidths (its offered loads, in GiB/s) and
// bytes (in GiB), and the storage tier's bytes, into the result's tiers
// and summary in decimal GB/s and GB, the unit schema.Summary holds for
// every source. The MLPerf view reads the document's own GiB figures
// (referenceFigures), as mlpstorage does, not these.
func (d *refDoc) tiers() {
	r := d.r
	tiers := [...]struct{ ref, name string }{{"gpu", "Tier-0"}, {"cpu", "Tier-1"}, {"storage", "Tier-2"}}
	bw := [...]*float64{&r.Summary.TierGPUReadBandwidthGBps, &r.Summary.TierGPUWriteBandwidthGBps,
		&r.Summary.TierCPUReadBandwidthGBps, &r.Summary.TierCPUWriteBandwidthGBps,
		&r.Summary.TierStorageReadBandwidthGBps, &r.Summary.TierStorageWriteBandwidthGBps}
	for i, t := range tiers {
		tt := schema.TierTotals{Tier: t.name}
		has := false
		if v, ok := d.num("tier_" + t.ref + "_read_bandwidth_gbps"); ok {
			tt.ReadOfferedBps = v * results.GiB
			*bw[2*i] = tt.ReadOfferedBps / results.GB
			has = true
		}
		if v, ok := d.num("tier_" + t.ref + "_write_bandwidth_gbps"); ok {
			tt.WriteOfferedBps = v * results.GiB
			*bw[2*i+1] = tt.WriteOfferedBps / results.GB
			has = true
		}
		if v, ok := d.num("tier_" + t.ref + "_kv_bytes_read_gb"); ok {
			tt.ReadBytes = int64(v * results.GiB)
		}
		if v, ok := d.num("tier_" + t.ref + "_kv_bytes_written_gb"); ok {
			tt.WriteBytes = int64(v * results.GiB)
		}
		if !has {
			continue
		}
		r.Tiers = append(r.Tiers, tt)
		// Its unused tiers' bandwidths are zeros it never measured.
		if tierUsed(tt) {
			d.values[tierMetric(i, "read_offered")] = tt.ReadOfferedBps / results.GB
			d.values[tierMetric(i, "write_offered")] = tt.WriteOfferedBps / results.GB
		}
	}
	if v, ok := d.num("tier_storage_kv_bytes_read_gb"); ok {
		r.Summary.TierStorageKVBytesReadGB = v * results.GiB / results.GB
	}
	if v, ok := d.num("tier_storage_kv_bytes_written_gb"); ok {
		r.Summary.TierStorageKVBytesWrittenGB = v * results.GiB / results.GB
	}
}

// latencies reads the storage latencies of a run that timed its I/O. Its
// storage_*_p*_ms are each operation's whole span (with the host copy);
// its storage_*_device_p*_ms the device span (the np.load span, the fsync
// span), kvbench's device latency.
func (d *refDoc) latencies() {
	for _, op := range []string{"read", "write"} {
		for _, p := range []string{"p50", "p95", "p99"} {
			if v, ok := d.num("storage_" + op + "_" + p + "_ms"); ok {
				d.values["tier2_"+op+"_"+p] = v
			}
			if v, ok := d.num("storage_" + op + "_device_" + p + "_ms"); ok && v > 0 {
				d.values["tier2_"+op+"_device_"+p] = v
			}
		}
	}
	d.r.Summary.StorageReadP95MS, _ = d.num("storage_read_p95_ms")
	d.r.Summary.StorageWriteP95MS, _ = d.num("storage_write_p95_ms")
	d.r.Summary.CPUP95MS = d.cpuP95()
}

// cpuP95 is the reference's CPU RAM P95, of its CPU reads' and writes'
// samples pooled (reference section 5, storage_health): the figure of its
// storage_health's CPU RAM criterion where it has one, else the p95 of the
// one operation it has samples of (its cpu_{read,write}_p95_ms exist only
// with samples). With both and no pooled figure it is 0, not measured:
// neither operation's p95 is the pooled one.
func (d *refDoc) cpuP95() float64 {
	for _, c := range d.r.Summary.StorageHealth.Criteria {
		if strings.HasPrefix(c.Name, "CPU RAM P95") {
			return d.figure("summary.cache_stats.storage_health "+c.Name, c.Actual)
		}
	}
	read, reads := d.num("cpu_read_p95_ms")
	write, writes := d.num("cpu_write_p95_ms")
	switch {
	case reads && writes:
		return 0
	case writes:
		return write
	}
	return read
}

// health reads cache_stats' storage_health, where the document has one,
// from raw, the document.
func (d *refDoc) health(raw []byte) error {
	if _, ok := d.cs["storage_health"]; !ok {
		return nil
	}
	var health struct {
		Summary struct {
			CacheStats struct {
				StorageHealth struct {
					OverallStatus schema.HealthStatus `json:"overall_status"`
					Criteria      []refCriterion      `json:"criteria"`
					PassedCount   int                 `json:"passed_count"`
					TotalCount    int                 `json:"total_count"`
				} `json:"storage_health"`
			} `json:"cache_stats"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(raw, &health); err != nil {
		return err
	}
	if err := schema.CheckKeys(raw, &health); err != nil {
		return err
	}
	// Its verdict is shown as it stands (judgedHealth): it must be its
	// criteria's, as kv-cache.py counts them (reference section 5), and
	// their figures a run's.
	rh := &health.Summary.CacheStats.StorageHealth
	h, passed := &d.r.Summary.StorageHealth, 0
	h.OverallStatus, h.PassedCount, h.TotalCount = rh.OverallStatus, rh.PassedCount, rh.TotalCount
	for i, c := range rh.Criteria {
		at := fmt.Sprintf("summary.cache_stats.storage_health.criteria[%d].", i)
		target, err := refFigure(c.Target)
		if err != nil {
			return fmt.Errorf("%starget: %w", at, err)
		}
		actual, err := refFigure(c.Actual)
		if err != nil {
			return fmt.Errorf("%sactual: %w", at, err)
		}
		d.figure(at+"target", target)
		d.figure(at+"actual", actual)
		h.Criteria = append(h.Criteria, schema.Criterion{Name: c.Name, Target: target, Actual: actual, Unit: c.Unit, Passed: c.Passed})
		if c.Passed {
			passed++
		}
	}
	want := schema.HealthFail
	if passed == len(h.Criteria) {
		want = schema.HealthPass
		if d.simulated && h.OverallStatus == schema.HealthNoData {
			// kvtrace's verdict where its criteria passed on virtual
			// time's zeros (results.Simulated); one written before it
			// said so says PASS, which is read too.
			want = schema.HealthNoData
		}
	}
	switch {
	case h.PassedCount != passed || h.TotalCount != len(h.Criteria):
		d.check(fmt.Errorf("summary.cache_stats.storage_health: passed_count %d of total_count %d, but %d of its %d criteria passed (a damaged document?)",
			h.PassedCount, h.TotalCount, passed, len(h.Criteria)))
	case h.OverallStatus != want:
		d.check(fmt.Errorf("summary.cache_stats.storage_health.overall_status is %q, but %d of its %d criteria passed: want %q (a damaged document?)",
			h.OverallStatus, passed, len(h.Criteria), want))
	}
	switch d.r.Summary.StorageHealth.OverallStatus {
	case schema.HealthPass:
		d.values[MetricHealth] = 1
	case schema.HealthFail:
		d.values[MetricHealth] = 0
	}
	return nil
}

// refCriterion is a kv-cache.py storage_health criterion as its document
// holds it: the figures of --performance-profile throughput's bandwidth
// criteria are text (a target of ">0", an actual of "283.70").
type refCriterion struct {
	Name   string          `json:"name"`
	Target json.RawMessage `json:"target"`
	Actual json.RawMessage `json:"actual"`
	Unit   string          `json:"unit"`
	Passed bool            `json:"passed"`
}

// refFigure returns a criterion's figure f: a number, or a string of one,
// perhaps after a comparison (">0"); 0 where the document has none.
func refFigure(f json.RawMessage) (float64, error) {
	if len(f) == 0 || string(f) == "null" {
		return 0, nil
	}
	var n float64
	if json.Unmarshal(f, &n) == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(f, &s); err != nil {
		return 0, fmt.Errorf("%s: want a number", parsemsg.Printable(string(f)))
	}
	t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "<>=!"))
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || t == "" || strings.ContainsAny(t, "xXpP_") || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("%q: want a number, or one after a comparison (\">0\")", s)
	}
	return n, nil
}

// qos reads each QoS class's requests, latencies and SLA.
func (d *refDoc) qos(metrics map[string]refQoS) {
	for _, q := range []string{"interactive", "responsive", "batch"} {
		m, ok := metrics[q]
		if !ok || m.NoData {
			continue
		}
		d.r.Requests.ByQoS = append(d.r.Requests.ByQoS, schema.QoSStats{QoS: q, Count: m.TotalRequests,
			TargetP95MS: m.SLA.TargetP95MS, Compliance: m.SLA.Compliance, Met: m.SLA.Met,
			Latency: schema.Latency{Count: m.TotalRequests, MeanUS: m.LatencyMS.Mean * 1000, P50US: m.LatencyMS.P50 * 1000,
				P95US: m.LatencyMS.P95 * 1000, P99US: m.LatencyMS.P99 * 1000, MaxUS: m.LatencyMS.Max * 1000}})
	}
}
