package sim

import "testing"

// TestBuiltinModels checks the nine built-in models against the
// reference's table (docs/reference.md section 2): bytes per token and
// whether RAG treats the model as large.
func TestBuiltinModels(t *testing.T) {
	tests := []struct {
		key           string
		bytesPerToken int64
		large         bool
	}{
		{"tiny-1b", 24576, false},
		{"mistral-7b", 131072, false},
		{"llama2-7b", 524288, false},
		{"llama3.1-8b", 131072, false},
		{"llama3.1-70b-instruct", 327680, true},
		{"deepseek-v3", 70272, false},
		{"qwen3-32b", 262144, true},
		{"gpt-oss-120b", 73728, false},
		{"gpt-oss-20b", 49152, false},
	}
	models := BuiltinModels()
	if len(models) != len(tests) {
		t.Errorf("BuiltinModels has %d models, want %d", len(models), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			m, ok := models[tt.key]
			if !ok {
				t.Fatalf("no built-in model %q", tt.key)
			}
			if m.Key != tt.key {
				t.Errorf("Key = %q, want %q", m.Key, tt.key)
			}
			if got := m.BytesPerToken(); got != tt.bytesPerToken {
				t.Errorf("BytesPerToken() = %d, want %d", got, tt.bytesPerToken)
			}
			if got := m.Large(); got != tt.large {
				t.Errorf("Large() = %v, want %v", got, tt.large)
			}
			if why := m.problem(); why != "" {
				t.Errorf("built-in model is invalid: %s", why)
			}
		})
	}
	if _, ok := models[DefaultModel]; !ok {
		t.Errorf("DefaultModel %q is not built in", DefaultModel)
	}
}

func TestBytesPerElement(t *testing.T) {
	for dtype, want := range map[string]int64{"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "fp8": 2, "": 2} {
		m := Model{DType: dtype}
		if got := m.BytesPerElement(); got != want {
			t.Errorf("BytesPerElement(%q) = %d, want %d", dtype, got, want)
		}
	}
}

// The reference's example: llama3.1-8b, 2048 tokens = 256 MiB.
func TestObjectSizeExample(t *testing.T) {
	m := BuiltinModels()["llama3.1-8b"]
	if got := m.BytesPerToken() * 2048; got != 268435456 {
		t.Errorf("2048 tokens of llama3.1-8b = %d bytes, want 268435456", got)
	}
}
