package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// loadString loads src over DefaultConfig.
func loadString(t testing.TB, src string) (Config, error) {
	t.Helper()
	c := DefaultConfig()
	err := LoadYAML(strings.NewReader(src), "config.yaml", &c)
	return c, err
}

// TestLoadYAMLReferenceConfig loads the reference's config.yaml: as the
// reference says, nothing changes but four models' display names, and the
// keys the reference does not use are recorded.
func TestLoadYAMLReferenceConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadString(t, string(src))
	if err != nil {
		t.Fatalf("LoadYAML: %v", err)
	}
	wantNotes := []string{
		"config.yaml generation_timing: validated, not used (as in the reference)",
		"config.yaml gpu_backend: validated, not used (real-I/O only in the reference)",
		"config.yaml prefix_cache.min_prefix_length: validated, not used (as in the reference)",
		"config.yaml prefix_cache.max_prefix_entries: validated, not used (as in the reference)",
		"config.yaml conversation.end_conversation_probability: validated, not used (as in the reference)",
		"config.yaml autoscaler: validated, not used (kvtrace's autoscaler takes min_users 1 and max_users 10000, which bound only the user counts it reports; the reference hard-codes the rest)",
		"config.yaml sharegpt: validated, not used (as in the reference)",
		"config.yaml saturation_detection: validated, not used (real-I/O only in the reference)",
		"config.yaml validation_limits: validated, not used (as in the reference)",
	}
	if !slices.Equal(got.NoEffect, wantNotes) {
		t.Errorf("NoEffect =\n%s\nwant\n%s", strings.Join(got.NoEffect, "\n"), strings.Join(wantNotes, "\n"))
	}
	want := DefaultConfig()
	for key, name := range map[string]string{
		"deepseek-v3":  "Deepseek v3",
		"qwen3-32b":    "Qwen 3 32B",
		"gpt-oss-120b": "GPT-OSS 120B (5.1B active)",
		"gpt-oss-20b":  "GPT-OSS 20B (3.6B active)",
	} {
		m := want.Models[key]
		m.Name = name
		want.Models[key] = m
	}
	got.NoEffect = nil
	if !reflect.DeepEqual(got, want) {
		for key, m := range got.Models {
			if m != want.Models[key] {
				t.Errorf("model %s = %+v, want %+v", key, m, want.Models[key])
			}
		}
		t.Errorf("config after loading the reference's config.yaml differs from the defaults:\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestLoadYAMLOverrides(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		want  func(c *Config)
		notes []string
	}{
		{"empty", "", func(*Config) {}, nil},
		{"comments only", "# nothing\n", func(*Config) {}, nil},
		{"null document", "~\n", func(*Config) {}, nil},
		{"empty mapping", "{}\n", func(*Config) {}, nil},
		{"new model with the reference's defaults", "model_configs:\n  my-model:\n    num_layers: 40\n", func(c *Config) {
			c.Models["my-model"] = Model{Key: "my-model", Name: "my-model", NumLayers: 40, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, DType: "float16", AttentionType: "mha"}
		}, nil},
		{"new model, empty entry", "model_configs:\n  bare:\n", func(c *Config) {
			c.Models["bare"] = Model{Key: "bare", Name: "bare", NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, DType: "float16", AttentionType: "mha"}
		}, nil},
		{"new model, every field", `model_configs:
  kimi:
    name: Kimi
    num_layers: 61
    hidden_dim: 7168
    num_heads: 64
    kv_heads: 64
    dtype: bfloat16
    kv_dim_per_head: 0
    attention_type: mla
    kv_lora_rank: 512
    qk_rope_head_dim: 64
`, func(c *Config) {
			c.Models["kimi"] = Model{Key: "kimi", Name: "Kimi", NumLayers: 61, HiddenDim: 7168, NumHeads: 64, KVHeads: 64, DType: "bfloat16", AttentionType: "mla", KVLoraRank: 512, QKRopeHeadDim: 64}
		}, nil},
		{"override a field of a built-in", "model_configs:\n  llama3.1-8b:\n    dtype: float32\n", func(c *Config) {
			m := c.Models["llama3.1-8b"]
			m.DType = "float32"
			c.Models["llama3.1-8b"] = m
		}, nil},
		{"eviction", "eviction:\n  target_usage_ratio: 0.7\n  max_evictions_hard_cap: 100\n  large_entry_limit_ratio: 1\n", func(c *Config) {
			c.Eviction.TargetUsageRatio, c.Eviction.MaxEvictionsHardCap, c.Eviction.LargeEntryLimitRatio = 0.7, 100, 1
		}, nil},
		{"qos profiles", "qos_profiles:\n  interactive:\n    target_latency_p95_ms: 12.5\n    priority: 9\n  batch:\n    target_latency_p9999_ms: 60000\n", func(c *Config) {
			c.QoS[QoSInteractive].TargetP95 = 12500 * time.Microsecond
			c.QoS[QoSInteractive].Priority = 9
			c.QoS[QoSBatch].TargetP9999 = time.Minute
		}, nil},
		{"qos distribution", "qos_distribution:\n  interactive_probability: 0\n  responsive_threshold: 1\n", func(c *Config) {
			c.QoSDistribution = QoSDistribution{InteractiveProbability: 0, ResponsiveThreshold: 1}
		}, nil},
		{"user templates", "user_templates:\n  coding:\n    context_range: [1000, 2000]\n    think_time_range: [0, 3]\n", func(c *Config) {
			c.UserTemplates[1].ContextMin, c.UserTemplates[1].ContextMax = 1000, 2000
			c.UserTemplates[1].ThinkMin, c.UserTemplates[1].ThinkMax = 0, 3
		}, nil},
		{"rag", "rag:\n  chunk_size_tokens: 256\n  top_k_chunks: 3\n  max_chunk_bytes: 1048576\n  request_probability: 0.5\n  retrieval_distribution: uniform\n  max_documents: 7\n  large_model_doc_tokens_min: 10\n  large_model_doc_tokens_max: 20\n  small_model_doc_tokens_min: 30\n  small_model_doc_tokens_max: 40\n", func(c *Config) {
			c.RAG = RAGConfig{ChunkSizeTokens: 256, TopKChunks: 3, MaxChunkBytes: 1 << 20, RequestProbability: 0.5, Distribution: "uniform", MaxDocuments: 7,
				LargeDocTokensMin: 10, LargeDocTokensMax: 20, SmallDocTokensMin: 30, SmallDocTokensMax: 40}
		}, nil},
		{"unknown distribution is zipfian", "rag:\n  retrieval_distribution: gaussian\n", func(c *Config) { c.RAG.Distribution = "zipfian" },
			[]string{"config.yaml rag.retrieval_distribution: gaussian: unknown, zipfian used (as in the reference)"}},
		{"decode, conversation, prefix cache", "decode:\n  batch_size: 8\nconversation:\n  max_turns_per_conv: 5\nprefix_cache:\n  system_prompt_hit_probability: 1\n", func(c *Config) {
			c.DecodeBatchSize, c.MaxTurns, c.SystemPromptHitProbability = 8, 5, 1
		}, nil},
		{"unused keys are noted", "conversation:\n  end_conversation_probability: 0.5\ngeneration_timing: {}\n", func(*Config) {},
			[]string{"config.yaml conversation.end_conversation_probability: validated, not used (as in the reference)", "config.yaml generation_timing: validated, not used (as in the reference)"}},
		{"anchors and merge keys", `qos_profiles:
  interactive: &fast
    target_latency_p95_ms: 10
    priority: 5
  responsive:
    <<: *fast
    priority: 4
`, func(c *Config) {
			c.QoS[QoSInteractive].TargetP95, c.QoS[QoSInteractive].Priority = 10*time.Millisecond, 5
			c.QoS[QoSResponsive].TargetP95, c.QoS[QoSResponsive].Priority = 10*time.Millisecond, 4
		}, nil},
		{"integers in other notations", "decode:\n  batch_size: 0x10\neviction:\n  max_evictions_min: 1_000\n", func(c *Config) {
			c.DecodeBatchSize, c.Eviction.MaxEvictionsMin = 16, 1000
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadString(t, tt.src)
			if err != nil {
				t.Fatalf("LoadYAML: %v", err)
			}
			want := DefaultConfig()
			tt.want(&want)
			want.NoEffect = tt.notes
			if len(got.NoEffect) == 0 {
				got.NoEffect = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// Flags and earlier notes survive a load: LoadYAML appends to NoEffect
// and changes only what the file names.
func TestLoadYAMLKeepsOtherFields(t *testing.T) {
	c := DefaultConfig()
	c.NumUsers = 7
	c.NoEffect = []string{"earlier"}
	if err := LoadYAML(strings.NewReader("sharegpt: {}\ndecode: {batch_size: 4}\n"), "x.yaml", &c); err != nil {
		t.Fatal(err)
	}
	if c.NumUsers != 7 || c.DecodeBatchSize != 4 {
		t.Errorf("NumUsers %d DecodeBatchSize %d", c.NumUsers, c.DecodeBatchSize)
	}
	if want := []string{"earlier", "x.yaml sharegpt: validated, not used (as in the reference)"}; !slices.Equal(c.NoEffect, want) {
		t.Errorf("NoEffect = %q, want %q", c.NoEffect, want)
	}
}

func TestLoadYAMLErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // the whole message
	}{
		{"unknown top-level key", "evictions:\n  target_usage_ratio: 0.5\n",
			"sim: config.yaml:1:1: evictions: unknown key (want one of model_configs, user_templates, generation_timing, qos_profiles, qos_distribution, eviction, gpu_backend, prefix_cache, rag, conversation, autoscaler, decode, sharegpt, saturation_detection, validation_limits)"},
		{"unknown nested key", "eviction:\n  max_recursion_depth: 3\n  target_usage_rato: 0.5\n",
			"sim: config.yaml:3:3: eviction.target_usage_rato: unknown key (want one of max_recursion_depth, target_usage_ratio, large_entry_limit_ratio, max_evictions_hard_cap, max_evictions_min)"},
		{"unknown key in an unused section", "gpu_backend:\n  memory_fractions: 0.5\n",
			"sim: config.yaml:2:3: gpu_backend.memory_fractions: unknown key (want one of memory_fraction, max_eviction_attempts, free_memory_threshold)"},
		{"unknown user template", "user_templates:\n  agent:\n    context_range: [1, 2]\n",
			"sim: config.yaml:2:3: user_templates.agent: unknown key (want one of chatbot, coding, document)"},
		{"unknown qos level", "qos_profiles:\n  realtime: {priority: 4}\n",
			"sim: config.yaml:2:3: qos_profiles.realtime: unknown key (want one of interactive, responsive, batch)"},
		{"unknown model field", "model_configs:\n  foo:\n    layers: 3\n",
			"sim: config.yaml:3:5: model_configs.foo.layers: unknown key (want one of name, num_layers, hidden_dim, num_heads, kv_heads, dtype, kv_dim_per_head, attention_type, kv_lora_rank, qk_rope_head_dim)"},
		{"float for an integer", "eviction:\n  max_recursion_depth: 10.5\n",
			"sim: config.yaml:2:24: eviction.max_recursion_depth: must be an integer, got float 10.5"},
		{"bool for a number", "rag:\n  request_probability: true\n",
			"sim: config.yaml:2:24: rag.request_probability: must be a number, got bool true"},
		{"string for a number", "decode:\n  batch_size: \"32\"\n",
			"sim: config.yaml:2:15: decode.batch_size: must be an integer, got string \"32\""},
		{"number for a string", "rag:\n  retrieval_distribution: 1\n",
			"sim: config.yaml:2:27: rag.retrieval_distribution: must be a string, got int 1"},
		{"null value", "decode:\n  batch_size:\n",
			"sim: config.yaml:2:14: decode.batch_size: must be an integer, got null"},
		{"infinite", "qos_distribution:\n  interactive_probability: .inf\n",
			"sim: config.yaml:2:28: qos_distribution.interactive_probability: .inf: must be a finite number"},
		{"integer out of range", "decode:\n  batch_size: 99999999999999999999\n",
			"sim: config.yaml:2:15: decode.batch_size: must be an integer, got float 99999999999999999999"},
		{"range of three", "user_templates:\n  chatbot:\n    context_range: [1, 2, 3]\n",
			"sim: config.yaml:3:20: user_templates.chatbot.context_range: must be a list of two integers [min, max], got a list of 3"},
		{"range with a float", "user_templates:\n  chatbot:\n    context_range: [1, 2.5]\n",
			"sim: config.yaml:3:24: user_templates.chatbot.context_range[1]: must be an integer, got float 2.5"},
		{"range not a list", "user_templates:\n  chatbot:\n    think_time_range: 0.5\n",
			"sim: config.yaml:3:23: user_templates.chatbot.think_time_range: must be a list of two numbers [min, max], got float 0.5"},
		{"null section", "eviction:\n",
			"sim: config.yaml:1:10: eviction: must be a mapping, got null"},
		{"model_configs not a mapping", "model_configs: [a, b]\n",
			"sim: config.yaml:1:16: model_configs: must be a mapping of model keys, got a list of 2"},
		{"model entry not a mapping", "model_configs:\n  foo: 3\n",
			"sim: config.yaml:2:8: model_configs.foo: must be a mapping, got int 3"},
		{"document not a mapping", "- a\n- b\n",
			"sim: config.yaml:1:1: the document must be a mapping, got a list of 2"},
		// A file that is no config.yaml at all (a trace given to --config)
		// parses as one long string: the message quotes its start, not the
		// whole file.
		{"document a csv file", "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS,User,Tokens\n" +
			strings.Repeat("0.470917,Write,883556352,Tier-1,conv_user_0000_0000_turn_1,Prefill,1,batch,1,66\n", 100),
			"sim: config.yaml:1:1: the document must be a mapping, got string \"Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS...\""},
		{"long string for a number", "decode:\n  batch_size: " + strings.Repeat("9x", 100) + "\n",
			"sim: config.yaml:2:15: decode.batch_size: must be an integer, got string \"" + strings.Repeat("9x", 32) + "...\""},
		{"duplicate key", "decode:\n  batch_size: 1\n  batch_size: 2\n",
			"sim: config.yaml:3:3: decode.batch_size: duplicate key (first at line 2)"},
		{"two documents", "decode: {batch_size: 1}\n---\ndecode: {batch_size: 2}\n",
			"sim: config.yaml:2:1: more than one YAML document (want one)"},
		{"syntax", "decode:\n  batch_size: [1\n",
			"sim: config.yaml: yaml: line 1: did not find expected ',' or ']'"},
		{"qos milliseconds out of range", "qos_profiles:\n  batch:\n    target_latency_p95_ms: 1e300\n",
			"sim: config.yaml:3:28: qos_profiles.batch.target_latency_p95_ms: 1e+300: out of range (milliseconds)"},
		{"every problem at once", "decode:\n  batch_size: x\nrag:\n  top_k_chunks: 1.5\nfoo: 1\n",
			"sim: config.yaml:2:15: decode.batch_size: must be an integer, got string \"x\"\n" +
				"sim: config.yaml:4:17: rag.top_k_chunks: must be an integer, got float 1.5\n" +
				"sim: config.yaml:5:1: foo: unknown key (want one of model_configs, user_templates, generation_timing, qos_profiles, qos_distribution, eviction, gpu_backend, prefix_cache, rag, conversation, autoscaler, decode, sharegpt, saturation_detection, validation_limits)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.NoEffect = []string{"before"}
			before := cloneConfig(&c)
			err := LoadYAML(strings.NewReader(tt.src), "config.yaml", &c)
			if err == nil {
				t.Fatalf("LoadYAML succeeded, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("LoadYAML error\n%s\nwant\n%s", err, tt.want)
			}
			if !reflect.DeepEqual(&c, before) {
				t.Errorf("LoadYAML changed the config on error")
			}
		})
	}
}

func TestYAMLErrorType(t *testing.T) {
	_, err := loadString(t, "decode:\n  batch_size: x\n")
	var ye *YAMLError
	if !errors.As(err, &ye) {
		t.Fatalf("error %v is not a *YAMLError", err)
	}
	if ye.File != "config.yaml" || ye.Line != 2 || ye.Column != 15 || ye.Key != "decode.batch_size" || ye.Unwrap() == nil {
		t.Errorf("YAMLError = %+v", ye)
	}
}

// TestYAMLErrorNamesFileOnOneLine: a config file named with a newline
// is named escaped: it split the message, its second line naming no file.
func TestYAMLErrorNamesFileOnOneLine(t *testing.T) {
	e := &YAMLError{File: "dir/c\nd.yaml", Line: 1, Column: 1, Key: "bogus_key", Err: errors.New("unknown key")}
	if got, want := e.Error(), `sim: dir/c\nd.yaml:1:1: bogus_key: unknown key`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestLoadYAMLReaders(t *testing.T) {
	src := "decode:\n  batch_size: 4\n"
	c := DefaultConfig()
	if err := LoadYAML(iotest.OneByteReader(strings.NewReader(src)), "x.yaml", &c); err != nil || c.DecodeBatchSize != 4 {
		t.Errorf("one byte at a time: %v, batch size %d", err, c.DecodeBatchSize)
	}
	boom := errors.New("boom")
	c = DefaultConfig()
	err := LoadYAML(iotest.TimeoutReader(iotest.DataErrReader(&errReader{data: []byte(src), err: boom})), "x.yaml", &c)
	if !errors.Is(err, boom) && !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("error mid-stream: %v", err)
	}
	err = LoadYAML(iotest.ErrReader(boom), "x.yaml", &c)
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "sim: x.yaml: ") {
		t.Errorf("read error: %v", err)
	}
	if c.DecodeBatchSize != DefaultConfig().DecodeBatchSize {
		t.Error("a failed read changed the config")
	}
}

// errReader returns data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// An alias bomb (merge keys of merge keys, 10 wide and 9 deep) must end
// quickly in an error, never take exponential time.
func TestLoadYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0: &a0 {priority: 1}\n")
	for i := 1; i < 10; i++ {
		b.WriteString("x" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " {<<: [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + strconv.Itoa(i-1))
		}
		b.WriteString("]}\n")
	}
	b.WriteString("qos_profiles:\n  batch:\n    <<: *a9\n")
	start := time.Now()
	_, err := loadString(t, b.String())
	if err == nil || !strings.Contains(err.Error(), "qos_profiles.batch: too many keys through aliases and merges") {
		t.Errorf("LoadYAML error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("LoadYAML took %v", d)
	}
}

func FuzzLoadYAML(f *testing.F) {
	if src, err := os.ReadFile(filepath.Join("testdata", "config.yaml")); err == nil {
		f.Add(src)
	}
	for _, s := range []string{
		"", "~", "{}", "- a", "decode: {batch_size: 4}", "eviction:\n  target_usage_ratio: .nan\n",
		"model_configs:\n  m:\n    num_layers: 0\n", "qos_profiles:\n  batch: &b {priority: 1}\n  interactive: {<<: *b}\n",
		"a: &a [*a]", "user_templates: {chatbot: {context_range: [1, 2]}}", "x: !!binary aGk=",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := DefaultConfig()
		before := cloneConfig(&c)
		err := LoadYAML(bytes.NewReader(data), "f.yaml", &c)
		if err != nil {
			if !reflect.DeepEqual(&c, before) {
				t.Fatalf("LoadYAML(%q) failed with %v and changed the config", data, err)
			}
			if !strings.HasPrefix(err.Error(), "sim: f.yaml") {
				t.Fatalf("LoadYAML(%q) error %q does not name the file", data, err)
			}
			return
		}
		_ = c.Validate()
		_ = c.Warnings()
		_, _ = c.ModelConfig()
	})
}
