// Package report owns kvreport's engine: it merges kvreplay result
// documents (trials, MPI ranks, systems) exactly, computes statistics across
// trials and ratios across systems, and renders them as text, Markdown, CSV,
// JSON, XLSX, Go benchmark lines and HTML. It never links replay backends.
//
// The engine is not built yet (issue 6): Run reports ErrNotImplemented.
package report

import "errors"

// ErrNotImplemented is returned by the parts of the engine that do not
// exist yet, so that callers say so instead of pretending.
var ErrNotImplemented = errors.New("report: the report engine is not implemented yet")
