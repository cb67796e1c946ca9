// Package sim owns kvtrace's engine: the deterministic discrete-event
// simulation of an LLM serving system's KV cache (models, users, multi-turn
// conversations, prefix and RAG reuse, QoS, the GPU/CPU/NVMe tiers with
// waterfall LRU eviction, tensor-parallel sharding and capacity limits) in
// virtual time. It emits schema.Record values to a sink the caller wires in
// (a trace.Writer, in kvtrace); it never imports trace, replay or report,
// never reads the wall clock and never uses a global random source.
//
// # Departures from kv-cache.py
//
// The simulation is kv-cache.py's model of inference (reference.md in the
// project's docs), run in virtual time. Where kv-cache.py crashes, or
// where following it would make no sense in virtual time, kvtrace departs
// from it on purpose. A run that meets one of these says so once, in
// Extra.Departures (a note beginning with DeparturePrefix, also in
// Extra.Notes, which the trace's sidecar carries); kvtrace prints it on
// stderr:
//
//   - Forgotten conversations. kv-cache.py's ConversationManager keeps
//     1000 conversation states (conversation.max_conversations) and
//     forgets the least recently used; a user whose conversation it forgot
//     while it went on dies at its next turn (add_turn raises ValueError
//     in the user's thread). That happens from about 600 users. Here the
//     user starts a new conversation and goes on sending requests.
//   - ShareGPT without multi-turn. With --dataset-path and
//     --disable-multi-turn (and not --decode-only), kv-cache.py's workers
//     compare a request's turn number, None, with 1, and each dies at its
//     first request: its trace has no rows. Here the conversations replay
//     as they do with multi-turn on, which in ShareGPT mode reads no
//     history either.
//   - BurstGPT rows. kv-cache.py drops a row whose numbers raise
//     ValueError, and so does kvtrace (the reqtrace package counts them).
//     A row with fewer fields than the columns it reads ends kv-cache.py's
//     generator thread (int(None) raises TypeError): no request follows
//     it. A timestamp of nan, inf or beyond 4.5e9 s, or a negative token
//     count, it reads; under --trace-speedup above 0 it sleeps the gap to
//     an infinite or huge timestamp (after a negative one, to the next
//     row) before it enqueues that row, in 5 s steps until the run ends,
//     so no request follows it. A file that begins with a UTF-8 byte
//     order mark makes its first column's name "\ufeffTimestamp", so it
//     reads every timestamp as 0. kvtrace skips the rows of the first two
//     kinds and goes on, and it drops the mark
//     (reqtrace.File.RefDepartures).
//   - Unpaced traces are bounded. Under --trace-speedup 0 (and with
//     --dataset-path but no --request-rate), kv-cache.py's generator
//     thread enqueues requests as fast as Python runs, into a queue with
//     no bound. Here one arrives every 100 µs of virtual time while fewer
//     than twice the workers are queued, and the generator waits for room.
//     Otherwise virtual time would not advance.
//   - RAG chunk choice. kv-cache.py picks a retrieval's chunks with
//     numpy's global stream (np.random.choice without replacement,
//     zipfian weights). kvtrace draws the same choice from its one stream,
//     kv-cache.py's Python random stream: for a seed the chunks differ, and
//     later draws come later in the Python stream than kv-cache.py's.
//   - Objects of 0 bytes (a BurstGPT row of 0 request tokens). With
//     --gpu-mem-gb 0, kv-cache.py's rule still puts them in the GPU tier
//     (0 bytes fit a tier of 0): Tier-0 rows in a trace without a GPU
//     tier, which kvreplay refuses. Here a tier of no capacity takes
//     nothing, and they go to the next.
//   - QoS profiles from --config. kvtrace queues requests and judges
//     their SLA by config.yaml's qos_profiles; kv-cache.py's benchmark and
//     monitoring modules import its built-in profiles before --config
//     rebinds them, so its queue priorities and p95 targets stay the
//     built-in ones (the shipped config.yaml has the same values). A run
//     whose profiles differ there says so.
//   - Generation bounded by the run. A trace-driven request (BurstGPT,
//     ShareGPT, --request-trace) generates at most the tokens --duration
//     holds at the generation mode's pace, and its decode reads stop
//     there. kv-cache.py makes all of a request's decode reads before it
//     sleeps through the generation: a BurstGPT row of 3000 response
//     tokens in a 30 s realistic run has 95 decode reads there, 33 here.
//     A trace's absurd lengths (1e8 tokens) would otherwise add millions
//     of reads a request.
//   - Think times of 0. A think_time_range of [0, 0] (--config) makes
//     kv-cache.py's user threads send requests as fast as Python runs;
//     here a user waits at least 100 µs between requests, as an unpaced
//     trace's requests are spaced. Otherwise virtual time would not
//     advance.
//   - Partial blocks (Mooncake-style traces, which kv-cache.py does not
//     read). A request's last hash-id block that its input ends inside is
//     written as a whole block, because a key keeps one size and a later
//     request may fill the block: on Mooncake's conversation trace, 3 % of
//     the blocks' bytes written (kvtrace --request-trace, 3600 s).
//
// One more is by design and applies to nearly every run, so no run says
// it: requests still generating when the run ends are counted in flight
// (Extra.RequestsInFlight, requests_in_flight_at_end), not completed.
// kv-cache.py's workers finish them while its run() joins its threads (up
// to 2 s each, benchmark.py 1433-1434 at a56caea) and count them
// completed, and its rates divide them by the run's time: 3-15 % more
// completions in realistic mode (issue 28 asked for kvtrace's count).
package sim
