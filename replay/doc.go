// Package replay owns kvreplay's engine: it schedules the rows of one or
// more traces onto tier backends (per-key order, per-request sequence,
// concurrency and speed), moves data between tiers, and measures latency and
// bandwidth per tier, operation and phase. Tier backends live in their own
// packages under replay/ and are chosen by the main; this package never
// imports them.
//
// The engine is not built yet (issue 4): Run reports ErrNotImplemented.
package replay

import "errors"

// ErrNotImplemented is returned by the parts of the engine that do not
// exist yet, so that callers say so instead of pretending.
var ErrNotImplemented = errors.New("replay: the replay engine is not implemented yet")
