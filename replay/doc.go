// Package replay owns kvreplay's engine: it schedules the rows of one or
// more traces onto tier backends (per-key order, per-request sequence,
// concurrency and speed), moves data between tiers, and measures latency and
// bandwidth per tier, operation and phase with HdrHistograms.
//
// A run is Prepare (an optional prescan of the traces: cold objects, peak
// bytes per backend, malformed input found before any I/O), then Run. Tier
// backends implement Backend and live in their own packages under replay/;
// this package never imports them: the main picks them.
//
// Semantics (design section 4): a Write materialises its object with
// unique, incompressible bytes derived from (seed, key, version, offset); a
// Read reads the whole object; an Evict Read on tier X then an Evict Write
// on tier Y move it (read from X, write to Y, free X); a Delete frees it.
// Objects are split into I/Os of at most the block size, issued in
// parallel through a pool of QueueDepth I/O workers (the psync engine).
// Rows of one key keep trace order, rows of one Request run in sequence, and
// everything else runs concurrently up to Workers object operations. Each
// operation's latency is measured from its submission and from its
// scheduled time, so waiting behind earlier work is not hidden.
package replay
