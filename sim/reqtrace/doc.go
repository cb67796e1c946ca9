// Package reqtrace owns the parsers of public LLM request traces: the
// per-request arrival times and token counts that kvtrace's simulator
// (package sim) turns into KV-cache I/O. It reads four formats, one request
// at a time, into caller-owned Request values:
//
//   - BurstGPT (HPMLL/BurstGPT, CSV): columns found by header name, both the
//     v1 layout "Timestamp,Model,Request tokens,Response tokens,Total
//     tokens,Log Type" and the v2 layout that adds "Session ID,Elapsed time"
//     and float timestamps. Rows that the reference (kv-cache.py
//     --use-burst-trace) drops silently are dropped here too, but counted
//     (see Skipper); so are a few that it keeps or stops at, and a byte
//     order mark it keeps in a column's name is dropped: File.RefDepartures
//     says which.
//   - ShareGPT (V3 JSON array of {"id", "conversations": [{"from",
//     "value"}]}): one request per human-then-gpt pair, tokens estimated as
//     the reference does without tiktoken (a quarter of the characters),
//     all at arrival 0: the simulator paces them.
//   - Mooncake (kvcache-ai/Mooncake FAST'25 JSONL): millisecond arrivals,
//     token counts and the prefix-block hash ids (512 tokens a block), and
//     traces in its form with other units (Unix s, ms, us or ns, numbers or
//     strings) and blocks of any size (an LMBench-style trace's ids cover 6
//     to 101 tokens): a record whose ids are not one per 512 tokens (or per
//     Options.BlockTokens) has its input apportioned over them, and
//     HashBlocks says what was found.
//   - Azure LLM inference traces (Azure/AzurePublicDataset 2023 and 2024,
//     CSV "TIMESTAMP,ContextTokens,GeneratedTokens").
//
// Detect tells the formats apart by content. NewReader reads any io.Reader;
// Open reads a file or standard input and also takes gzip and zstd streams,
// found by their magic numbers. Summarize computes a trace's Stats.
//
// Arrivals are durations from the first request and never decrease: a
// request stamped earlier than the one before it arrives with it
// (File.Early counts them). Each
// request's Stamp keeps its own timestamp, for a replay that sleeps
// (t - previous t) when it is positive, over one file or several, as the
// reference's BurstGPT replay does: there a request after one stamped
// early sleeps from that one's stamp.
//
// Malformed input is a *ParseError naming the file, line, column and value
// and wrapping one of the sentinel errors of this package; no input makes a
// Reader panic or buffer more than MaxLineBytes per line (MaxConversationBytes
// per ShareGPT conversation). Readers are not safe for concurrent use.
//
// Nothing here imports trace, replay, report or internal/cli: like sim, this
// package knows requests, not I/O traces.
package reqtrace
