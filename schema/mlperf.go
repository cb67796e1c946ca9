package schema

// MLPerfOption is one of MLPerf Storage v3.0's CLOSED KV cache workload
// Options: its immutable per-client parameters (the benchmark's Rules.md
// 6.3.1, Table KVCache-1, as mlpstorage's WORKLOAD_PARAMS passes them to
// kv-cache.py). kvtrace's --mlperf-option sets them; kvreport's MLPerf
// aggregation recognises a trace made with them.
type MLPerfOption struct {
	Number              int
	Name                string
	Model               string
	Users               int // per client (MPI rank)
	DurationS           int
	GPUMemGB, CPUMemGB  float64
	MaxConcurrentAllocs int
	GenerationMode      string
}

// MLPerfSeed is the CLOSED division's base seed: rank R uses MLPerfSeed+R
// (Rules.md 6.3.2.1).
const MLPerfSeed = 42

// MLPerfOpenWorkload ends the note that kvtrace writes in a trace's
// sidecar (and on stderr) when options given beside --mlperf-option N
// change the Option's workload; kvreport's MLPerf aggregation finds such
// notes in the traces of a run's ranks and says the run is not CLOSED.
const MLPerfOpenWorkload = "an OPEN-division workload, not the CLOSED Option (Rules.md 6.6)"

// MLPerfOptions returns the three CLOSED Options, in order.
func MLPerfOptions() []MLPerfOption {
	return []MLPerfOption{
		{1, "Max Storage Stress", "llama3.1-8b", 200, 300, 0, 0, 16, "none"},
		{2, "Storage Throughput", "llama3.1-8b", 100, 300, 0, 4, 16, "none"},
		{3, "Large Model (70B)", "llama3.1-70b-instruct", 70, 300, 0, 0, 4, "none"},
	}
}
