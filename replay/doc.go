// Package replay owns kvreplay's engine: it schedules the rows of one or
// more traces onto tier backends, moves data between tiers, and measures
// latency and bandwidth per tier, operation and phase with HdrHistograms.
//
// A run is Prepare, then Run. Prepare reads the traces once where they can
// be read twice (a prescan: cold objects, each backend's peak live bytes,
// the trace's identity, malformed input found before any I/O) or plans from
// their sidecars; Advise fits that plan to the machine (kvreplay --plan and
// --fit: the size scale, capacity or RAM budget that fits its memory and
// disk). Run replays: one event loop (sched.go) reads rows, releases them,
// orders them, reserves their space and runs them as calls on their
// backends (exec.go).
//
// What is released when is a releaser's (release.go): the open loop
// releases each row at its trace time divided by Speed (or at once at
// Speed 0, "max"); the closed loop (Config.ClosedLoop, closed.go) releases
// each user's next request when its previous one completed, plus the think
// time the trace recorded, so a slower system serves fewer requests
// instead of falling behind. Time is a Clock (clock.go), injectable, so
// pacing, think times and --duration windows are tested without sleeping.
//
// Semantics (design section 4): a Write materialises its object with
// unique, incompressible bytes derived from (seed, key, version, offset); a
// Read reads the whole object; an Evict Read on tier X then an Evict Write
// on tier Y move it (read from X, write to Y, free X); a Delete frees it.
// Rows of one key keep trace order (reads of one key run side by side),
// rows of one Request run in sequence, and everything else runs
// concurrently up to Workers object operations. Space is modelled in trace
// order (model.go, reserve.go): a write waits for the frees before it in
// the trace, so no write fails for space while the trace fits, and a
// bounded backend (Capacity, a RAM budget) evicts its least recently used
// objects. Each operation's latency is measured from its submission and
// from its scheduled time, so waiting behind earlier work is not hidden.
// Only what succeeded is counted: a failed operation is in its cell's and
// tier's FailedOps and in the errors, in no byte, rate or latency; what
// ran before the clock (the cold objects' writes, setup rows) is left out
// of the measured run's counts (their evictions are
// SetupCapacityEvictions).
//
// Objects are split into I/Os of at most BlockSize, QueueDepth in flight,
// through the I/O engine Config.Engine names in the ioengine registry:
// io_uring by default (on the loop itself, no goroutine handoff per
// block), psync (a pool of pread/pwrite workers) where the kernel refuses
// io_uring, with the reason recorded. Movers carry objects between two
// backends' memories without staging (GPUDirect Storage, GPU <-> the RAM
// arena). Tier backends implement replay/backend's contract and live in
// their own packages; this package never imports them: the caller builds
// them (replay/setup). Sharding splits a trace among the ranks of a
// multi-host run (shard.go); replay/search decides the probes (runs) of
// the users and capacity searches.
package replay
