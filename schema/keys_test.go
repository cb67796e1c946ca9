package schema_test

import (
	"testing"

	"github.com/kvbench/kvbench/schema"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"TierMap": "tier_map", "BlockSize": "block_size", "QueueDepth": "queue_depth", "Seed": "seed",
		"GPUMemGB": "gpu_mem_gb", "CPUMemGB": "cpu_mem_gb", "NumGPUs": "num_gpus", "QoS": "qos",
		"QoSDistribution": "qos_distribution", "RAGNumDocs": "rag_num_docs", "EnableRAG": "enable_rag",
		"TopKChunks": "top_k_chunks", "TargetP95": "target_p95", "TargetP9999": "target_p9999",
		"StorageCapacityGB": "storage_capacity_gb", "RAG": "rag", "Name": "name",
		// Data and names already in the convention are kept.
		"Tier-0": "Tier-0", "llama3.1-8b": "llama3.1-8b", "kv_heads": "kv_heads", "": "",
	} {
		if got := schema.SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnakeCaseKeys(t *testing.T) {
	in := `{"TierMap":["","ram","nvme"],"BlockSize":1048576,"Seed":18446744073709551615,"dir":"/x",` +
		`"Models":{"llama3.1-8b":{"KVHeads":8}},"Peak":{"Tier-0":1},"List":[{"QoS":"batch"}]}`
	want := `{"block_size":1048576,"dir":"/x","list":[{"qos":"batch"}],"models":{"llama3.1-8b":{"kv_heads":8}},` +
		`"peak":{"Tier-0":1},"seed":18446744073709551615,"tier_map":["","ram","nvme"]}`
	if got := string(schema.SnakeCaseKeys([]byte(in))); got != want {
		t.Errorf("SnakeCaseKeys:\n got %s\nwant %s", got, want)
	}
	for _, raw := range []string{"", "not json", "null", "3"} {
		if got := string(schema.SnakeCaseKeys([]byte(raw))); got != raw {
			t.Errorf("SnakeCaseKeys(%q) = %q", raw, got)
		}
	}
}
