// Package sim owns kvtrace's engine: the deterministic discrete-event
// simulation of an LLM serving system's KV cache (models, users, multi-turn
// conversations, prefix and RAG reuse, QoS, the GPU/CPU/NVMe tiers with
// waterfall LRU eviction, tensor-parallel sharding and capacity limits) in
// virtual time. It emits schema.Record values to a sink the caller wires in
// (a trace.Writer, in kvtrace); it never imports trace, replay or report,
// never reads the wall clock and never uses a global random source.
package sim
