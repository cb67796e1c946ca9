package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// Model describes a transformer's KV cache geometry, in the shape of the
// reference's ModelConfig (kv_cache/models.py) and of config.yaml's
// model_configs entries.
type Model struct {
	Key       string `json:"key"`
	Name      string `json:"name"`
	NumLayers int    `json:"num_layers"`
	HiddenDim int    `json:"hidden_dim"`
	NumHeads  int    `json:"num_heads"`
	KVHeads   int    `json:"kv_heads"`
	DType     string `json:"dtype"`
	// KVDimPerHead overrides HiddenDim/NumHeads as the head dimension when
	// positive (qwen3, gpt-oss).
	KVDimPerHead int `json:"kv_dim_per_head,omitempty"`
	// AttentionType is "mha" (MHA and GQA) or "mla" (multi-head latent
	// attention, deepseek-v3).
	AttentionType string `json:"attention_type"`
	KVLoraRank    int    `json:"kv_lora_rank,omitempty"`
	QKRopeHeadDim int    `json:"qk_rope_head_dim,omitempty"`
}

// BytesPerElement returns the size of one element of the model's dtype:
// float32 4, float16 and bfloat16 2, int8 1, anything else 2 (the
// reference's rule).
func (m *Model) BytesPerElement() int64 {
	switch m.DType {
	case "float32":
		return 4
	case "int8":
		return 1
	}
	return 2
}

// HeadDim returns the head dimension: KVDimPerHead when positive, else
// HiddenDim / NumHeads.
func (m *Model) HeadDim() int64 {
	if m.KVDimPerHead > 0 {
		return int64(m.KVDimPerHead)
	}
	if m.NumHeads <= 0 {
		return 0
	}
	return int64(m.HiddenDim / m.NumHeads)
}

// BytesPerToken is the KV cache size of one token for the whole model (all
// tensor-parallel ranks), exactly as the reference computes it:
// MHA/GQA layers x kv_heads x head_dim x 2 (K and V) x bytes per element;
// MLA layers x (kv_lora_rank + qk_rope_head_dim) x bytes per element.
func (m *Model) BytesPerToken() int64 {
	if m.AttentionType == "mla" {
		return int64(m.NumLayers) * int64(m.KVLoraRank+m.QKRopeHeadDim) * m.BytesPerElement()
	}
	return int64(m.NumLayers) * int64(m.KVHeads) * m.HeadDim() * 2 * m.BytesPerElement()
}

// Large reports whether the reference treats the model as large for RAG
// document sizes: hidden_dim >= 8192 or num_layers >= 64.
func (m *Model) Large() bool { return m.HiddenDim >= 8192 || m.NumLayers >= 64 }

// BuiltinBytesPerToken returns each built-in model's KV bytes per token,
// by key: the table kvreplay --model reads for a trace without a sidecar.
func BuiltinBytesPerToken() map[string]int64 {
	m := map[string]int64{}
	for name, model := range BuiltinModels() {
		m[name] = model.BytesPerToken()
	}
	return m
}

// BuiltinModels returns the nine models the reference knows without a
// config file, by key (reference section 2).
func BuiltinModels() map[string]Model {
	ms := []Model{
		{Key: "tiny-1b", Name: "Tiny 1B", NumLayers: 12, HiddenDim: 1024, NumHeads: 8, KVHeads: 4, DType: "float16", AttentionType: "mha"},
		{Key: "mistral-7b", Name: "Mistral 7B", NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, DType: "float16", AttentionType: "mha"},
		{Key: "llama2-7b", Name: "Llama 2 7B", NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 32, DType: "float16", AttentionType: "mha"},
		{Key: "llama3.1-8b", Name: "Llama 3.1 8B", NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, DType: "float16", AttentionType: "mha"},
		{Key: "llama3.1-70b-instruct", Name: "Llama 3.1 70B Instruct", NumLayers: 80, HiddenDim: 8192, NumHeads: 64, KVHeads: 8, DType: "float16", AttentionType: "mha"},
		{Key: "deepseek-v3", Name: "DeepSeek V3", NumLayers: 61, HiddenDim: 7168, NumHeads: 128, KVHeads: 128, DType: "float16", AttentionType: "mla", KVLoraRank: 512, QKRopeHeadDim: 64},
		{Key: "qwen3-32b", Name: "Qwen3 32B", NumLayers: 64, HiddenDim: 5120, NumHeads: 64, KVHeads: 8, DType: "float16", AttentionType: "mha", KVDimPerHead: 128},
		{Key: "gpt-oss-120b", Name: "GPT OSS 120B (MoE)", NumLayers: 36, HiddenDim: 2880, NumHeads: 64, KVHeads: 8, DType: "float16", AttentionType: "mha", KVDimPerHead: 64},
		{Key: "gpt-oss-20b", Name: "GPT OSS 20B (MoE)", NumLayers: 24, HiddenDim: 2880, NumHeads: 64, KVHeads: 8, DType: "float16", AttentionType: "mha", KVDimPerHead: 64},
	}
	out := make(map[string]Model, len(ms))
	for _, m := range ms {
		out[m.Key] = m
	}
	return out
}

// DefaultModel is the reference's default --model.
const DefaultModel = "llama3.1-8b"

// modelKeys returns the keys of models, sorted.
func modelKeys(models map[string]Model) []string {
	keys := make([]string, 0, len(models))
	for k := range models {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lookupModel finds key in models, with an error listing the known keys.
func lookupModel(models map[string]Model, key string) (Model, error) {
	m, ok := models[key]
	if !ok {
		return Model{}, fmt.Errorf("--model %s: unknown model (want one of %s)", parsemsg.Arg(key), strings.Join(modelKeys(models), ", "))
	}
	return m, nil
}
