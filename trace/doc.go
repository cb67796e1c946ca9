// Package trace owns the kvbench trace format: a streaming Reader and Writer
// for CSV traces (plain or zstd), the metadata sidecar, trace summaries, and
// the rules every consumer of a trace applies alike (ScaledSize, ColdRead).
// This comment is the format's specification (contract v1).
//
// # Format
//
// A trace is CSV, UTF-8, comma-separated, with one header row. Writers end
// lines with LF; readers accept LF and CRLF (the reference writes CRLF) and
// skip empty lines. Fields are never quoted: no value of the format needs
// quoting, and a field containing a double quote is rejected. Any input whose
// first four bytes are the zstd frame magic (28 b5 2f fd), or a skippable
// frame's (50-5f 2a 4d 18, which pzstd writes first), is a zstd stream; the
// Reader detects this by content, never by file name. A zstd stream must
// end with a complete frame: a truncated stream is an error (ErrTruncated),
// not a short trace.
//
// Readers find columns by header name and ignore columns they do not know.
// The columns, in the order kvbench writes them:
//
//	Timestamp          seconds, written with 6 decimals; required
//	Operation          Read | Write | Delete; required
//	Object_Size_Bytes  non-negative integer; required
//	Tier               Tier-0 (GPU) | Tier-1 (CPU RAM) | Tier-2 (NVMe); required
//	Key                object name: no commas, no whitespace; required
//	Phase              Prefill | Decode | Evict; required
//	Request            non-negative integer, empty or 0 for none; optional
//	QoS                interactive | responsive | batch, or empty; optional
//	User               non-negative integer, empty or 0 for none; optional
//	Tokens             non-negative integer, empty or 0 for none; optional
//
// The first six columns, their order and values are exactly those of the
// reference (kv-cache.py --io-trace-log). Delete, Request, QoS, User and
// Tokens are kvbench extensions. The rows of one request are contiguous in
// a kvbench trace and carry the same Request, QoS, User and Tokens. User
// names the user who issued the request: a user's requests follow one
// another, so a closed-loop replay issues a user's next request only once
// its previous one completed. Rows with no User (preconditioning, RAG
// ingestion, requests from request traces) belong to no user. Tokens is the
// number of tokens the request generates, which the reference's storage
// throughput (tokens generated per second of storage I/O) counts. Readers
// written before User and Tokens ignore them, as any unknown column. An
// Evict Read on tier X followed by an Evict Write of the same
// key on tier Y is one demotion X -> Y.
//
// # Dialects
//
// The Writer writes two dialects. DialectKvbench writes all ten columns
// with virtual time from 0. DialectMLPerf writes exactly the reference's six
// columns with Unix-epoch timestamps counted from a base the caller gives
// (so the output stays deterministic) and drops Delete rows, which the
// reference format cannot express; the Writer counts what it dropped.
//
// # Compression
//
// A Writer compressing with zstd writes one frame. By default (Level 0) it
// is kvbench's row encoder's: each row's fields are compared, as values,
// with the row before and the last row of the same key, and runs of equal
// fields become matches (a row equal to the one before extends the match
// before it), literals Huffman-coded, sequences with FSE tables fitted to
// each block, a 1 MiB window and no content checksum. Matching what a
// trace repeats instead of searching for it makes it the fastest way to
// write a trace (kvtrace's MLPerf 8B run), in a file about 1.5 times the
// size of level 3's. Levels 1 to 22 use the zstd library at its levels;
// level 3 is the reference's. Every zstd decoder reads both.
//
// Reading a zstd stream and writing one take the registered ZstdCodec:
// package trace links no zstd code, neither the library nor the entropy
// coder of its row encoder, so that what only reads traces (the replay
// engine) carries none. Package trace/zst registers both when imported
// (github.com/klauspost/compress's library, and internal/zstdblock as the
// row encoder's block coder); the mains import it, and without it a zstd
// stream, read or written, is refused with ErrNoZstd.
//
// # Timestamps
//
// Timestamps are non-negative decimals (digits, optionally a point and up to
// nine more digits); signs and exponents are rejected. When the first row's
// timestamp is at least EpochThreshold seconds the trace is an epoch trace
// (the reference's): every row's Time is normalised to the first row and the
// original epoch is kept (Reader.Epoch). Otherwise timestamps are virtual
// time and are used as they are. Rows out of time order are accepted and
// counted (Reader.OutOfOrder): the reference's writer takes its clock before
// its lock.
//
// # Metadata sidecar
//
// Provenance travels beside a trace file as <trace>.meta.json (Meta): tool
// and version, command line, seed, model and bytes per token, tier
// capacities, tensor parallelism, counts, and where the measured window
// starts. A trace on a pipe has no sidecar and is complete without it.
// Readers ignore keys they do not know, and refuse a known key spelt in
// another case or given twice, and figures no writer writes (ReadMeta).
//
// # Errors
//
// Every malformed input is reported as a *ParseError carrying the file name,
// line, column and offending value, and wrapping one of the sentinel errors
// below, so callers can test the class with errors.Is. A Reader's error is
// sticky: after the first error every Read returns it again.
package trace
