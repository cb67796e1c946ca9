package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func runModelsArgs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main("kvtrace", append([]string{"models"}, args...), &out, &errb, run)
	return out.String(), errb.String(), code
}

func TestModelsGolden(t *testing.T) {
	stdout, stderr, code := runModelsArgs(t)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	golden := filepath.Join("testdata", "models.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestModelsGolden -update)", err)
	}
	if stdout != string(want) {
		t.Errorf("kvtrace models =\n%s\nwant (%s)\n%s", stdout, golden, want)
	}
}

// TestModelsJSON checks the JSON against the reference's table
// (docs/reference.md section 2).
func TestModelsJSON(t *testing.T) {
	stdout, stderr, code := runModelsArgs(t, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key   string
		bpt   float64
		large bool
	}{
		{"deepseek-v3", 70272, false},
		{"gpt-oss-120b", 73728, false},
		{"gpt-oss-20b", 49152, false},
		{"llama2-7b", 524288, false},
		{"llama3.1-70b-instruct", 327680, true},
		{"llama3.1-8b", 131072, false},
		{"mistral-7b", 131072, false},
		{"qwen3-32b", 262144, true},
		{"tiny-1b", 24576, false},
	}
	if len(got) != len(want) {
		t.Fatalf("%d models, want %d", len(got), len(want))
	}
	keys := []string{"key", "name", "default", "num_layers", "hidden_dim", "num_heads", "kv_heads", "head_dim", "dtype",
		"bytes_per_element", "attention_type", "kv_lora_rank", "qk_rope_head_dim", "bytes_per_token", "mib_per_1k_tokens", "large"}
	for i, w := range want {
		m := got[i]
		if len(m) != len(keys) {
			t.Errorf("%s: %d keys, want %d: %v", w.key, len(m), len(keys), m)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no key %q", w.key, k)
			}
		}
		if m["key"] != w.key || m["bytes_per_token"] != w.bpt || m["large"] != w.large {
			t.Errorf("model %d = %v, want key %s, bytes_per_token %v, large %v", i, m, w.key, w.bpt, w.large)
		}
		if m["default"] != (w.key == "llama3.1-8b") {
			t.Errorf("%s: default %v", w.key, m["default"])
		}
		if got, want := m["mib_per_1k_tokens"].(float64), w.bpt*1000/(1<<20); got != want {
			t.Errorf("%s: mib_per_1k_tokens %v, want %v", w.key, got, want)
		}
	}
	if ds := got[0]; ds["attention_type"] != "mla" || ds["kv_lora_rank"] != 512.0 || ds["qk_rope_head_dim"] != 64.0 {
		t.Errorf("deepseek-v3 = %v", ds)
	}
	if q := got[7]; q["head_dim"] != 128.0 {
		t.Errorf("qwen3-32b head_dim %v, want 128 (the override)", q["head_dim"])
	}
}

func TestModelsConfig(t *testing.T) {
	// The reference's config.yaml renames four models and changes no size.
	stdout, stderr, code := runModelsArgs(t, "--json", "--config", referenceConfigYAML)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []modelInfo
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 9 || got[0].Name != "Deepseek v3" || got[0].BytesPerToken != 70272 || got[7].Name != "Qwen 3 32B" {
		t.Errorf("models %+v", got)
	}

	path := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(path, []byte("model_configs:\n  big-mla:\n    name: Big MLA\n    num_layers: 100\n    attention_type: mla\n    kv_lora_rank: 1024\n    qk_rope_head_dim: 64\n    dtype: float32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = runModelsArgs(t, "--config", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(stdout, "big-mla ") || !strings.Contains(stdout, "Big MLA") || !strings.Contains(stdout, "mla 1024+64") || !strings.Contains(stdout, "435200") {
		t.Errorf("table lacks the new model:\n%s", stdout)
	}
}

func TestModelsErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("model_configs:\n  x:\n    layers: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"extra"}, `kvtrace: models: unexpected argument "extra" (want only options)` + "\n"},
		{[]string{"--config", bad}, "kvtrace: sim: " + bad + ":3:5: model_configs.x.layers: unknown key (want one of name, num_layers, hidden_dim, num_heads, kv_heads, dtype, kv_dim_per_head, attention_type, kv_lora_rank, qk_rope_head_dim)\n"},
		{[]string{"--config", bad + ".missing"}, "kvtrace: --config " + bad + ".missing: no such file or directory\n"},
		{[]string{"--jsn"}, "kvtrace: unknown flag: --jsn (did you mean --json?)\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, code := runModelsArgs(t, tt.args...)
			if code != cli.ExitUsage || stderr != tt.want || stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q, want 2 and %q", code, stdout, stderr, tt.want)
			}
		})
	}
	stdout, stderr, code := runModelsArgs(t, "--help")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage:") || !strings.Contains(stdout, "Examples:") {
		t.Errorf("--help: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}
