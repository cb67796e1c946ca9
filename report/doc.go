// Package report owns kvreport's engine: it loads kvreplay result
// documents, the reference's kv-cache.py --output documents and kvtrace's
// simulated statistics (marked simulated wherever they are shown), merges
// the ranks of a run exactly (counts and bytes add, HdrHistograms merge,
// offered load is recomputed over the common wall-clock window), computes
// statistics across trials and ratios across systems (warning of unlike
// runs), and renders them, with each run's SLA per QoS class, as text,
// Markdown, CSV, JSON, Go benchmark lines, XLSX and HTML. It never links
// replay backends.
//
// Load matches a document's keys exactly, as Python reads them
// (schema.CheckKeys: a key that names a field only in another case, or one
// given twice in an object, is refused with its path and line), refuses a
// document whose figures no run gives (negative latencies, percentiles out
// of order, means outside min..max, counts that disagree, an SLA met that
// its compliance does not meet), and escapes the control characters of the
// text documents hold (labels, warnings, reasons), so that no renderer
// prints a line a document forged.
//
// The flow is Load (documents with labels), Build (groups of trials, each
// trial's ranks merged with MergeRanks, per-metric statistics, Compare
// against a baseline) and Render.
package report

import "errors"

// Errors of the report engine, tested with errors.Is.
var (
	// ErrFormat is wrapped by the errors of documents that are neither a
	// kvreplay result nor a kv-cache.py --output document, or of a newer
	// format version.
	ErrFormat = errors.New("unknown document format")
	// ErrIncompatible is wrapped by the errors of documents that cannot be
	// merged or grouped together (a different size scale, a rank given
	// twice, ranks missing: a *MissingRanksError is ErrIncompatible too).
	ErrIncompatible = errors.New("incompatible documents")
	// ErrScales is wrapped, beside ErrIncompatible, by the error of ranks
	// replayed at different size scales: unlike CheckRanks' other
	// refusals, no merge joins them, even one told to (kvreport --force),
	// for a merged document states one size scale, at which every byte
	// and rate in it is read, and theirs would add bytes of two.
	ErrScales = errors.New("different size scales")
	// ErrNotBuilt is wrapped by the error of a format whose renderer is not
	// in this build.
	ErrNotBuilt = errors.New("not built yet")
)
