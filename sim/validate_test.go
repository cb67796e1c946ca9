package sim

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidateDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("DefaultConfig().Warnings() = %q", w)
	}
	for key := range c.Models {
		c.Model = key
		if err := c.Validate(); err != nil {
			t.Errorf("--model %s: %v", key, err)
		}
	}
}

// TestValidateRules checks each rule alone: the configuration is invalid
// and the one message names the flag or key, the value and the rule.
func TestValidateRules(t *testing.T) {
	tests := []struct {
		name string
		set  func(c *Config)
		want string
	}{
		// kv-cache.py's validate_args, argparse choices and main.
		{"unknown model", func(c *Config) { c.Model = "llama4" }, "--model llama4: unknown model (want one of deepseek-v3, gpt-oss-120b, gpt-oss-20b, llama2-7b, llama3.1-70b-instruct, llama3.1-8b, mistral-7b, qwen3-32b, tiny-1b)"},
		{"users zero", func(c *Config) { c.NumUsers = 0 }, "--num-users 0: must be between 1 and 100000"},
		{"users negative", func(c *Config) { c.NumUsers = -3 }, "--num-users -3: must be between 1 and 100000"},
		{"users too many", func(c *Config) { c.NumUsers = 100001 }, "--num-users 100001: must be between 1 and 100000"},
		{"duration zero", func(c *Config) { c.Duration = 0 }, "--duration 0: must be between 1 and 86400 seconds"},
		{"duration too short", func(c *Config) { c.Duration = 500 * time.Millisecond }, "--duration 0.5: must be between 1 and 86400 seconds"},
		{"duration too long", func(c *Config) { c.Duration = 86401 * time.Second }, "--duration 86401: must be between 1 and 86400 seconds"},
		{"gpu negative", func(c *Config) { c.GPUMemGB = -1 }, "--gpu-mem-gb -1: must be between 0 and 65536"},
		{"gpu too big", func(c *Config) { c.GPUMemGB = 65537 }, "--gpu-mem-gb 65537: must be between 0 and 65536"},
		{"gpu NaN", func(c *Config) { c.GPUMemGB = math.NaN() }, "--gpu-mem-gb NaN: must be between 0 and 65536"},
		{"cpu negative", func(c *Config) { c.CPUMemGB = -0.5 }, "--cpu-mem-gb -0.5: must be between 0 and 131072"},
		{"cpu too big", func(c *Config) { c.CPUMemGB = 131073 }, "--cpu-mem-gb 131073: must be between 0 and 131072"},
		{"gpus zero", func(c *Config) { c.NumGPUs = 0; c.TensorParallel = 1 }, "--num-gpus 0: must be at least 1"},
		{"tp zero", func(c *Config) { c.TensorParallel = 0 }, "--tensor-parallel 0: must be at least 1"},
		{"tp above gpus", func(c *Config) { c.NumGPUs = 4; c.TensorParallel = 8 }, "--tensor-parallel 8: must not exceed --num-gpus 4"},
		{"rag docs negative", func(c *Config) { c.RAGNumDocs = -1 }, "--rag-num-docs -1: must not be negative"},
		{"conversations zero", func(c *Config) { c.MaxConversations = 0 }, "--max-conversations 0: must be at least 1"},
		{"allocs negative", func(c *Config) { c.MaxConcurrentAllocs = -1 }, "--max-concurrent-allocs -1: must not be negative"},
		{"rate negative", func(c *Config) { c.RequestRate = -2 }, "--request-rate -2: must not be negative"},
		{"rate infinite", func(c *Config) { c.RequestRate = math.Inf(1) }, "--request-rate +Inf: must be a finite number"},
		{"max requests negative", func(c *Config) { c.MaxRequests = -1 }, "--max-requests -1: must not be negative"},
		{"storage negative", func(c *Config) { c.StorageCapacityGB = -10 }, "--storage-capacity-gb -10: must not be negative"},
		{"object tier without a bounded NVMe tier", func(c *Config) { c.ObjectTier = true }, "--object-tier: Tier-3 takes what a bounded NVMe tier evicts: give --storage-capacity-gb (an unbounded NVMe tier evicts nothing)"},
		{"precondition size negative", func(c *Config) { c.PreconditionSizeGB = -1 }, "--precondition-size-gb -1: must not be negative"},
		{"precondition size huge", func(c *Config) { c.PreconditionSizeGB = 1e30 }, "--precondition-size-gb 1e+30: must be at most 16777216 (16 PiB)"},
		{"storage huge", func(c *Config) { c.StorageCapacityGB = 1 << 33 }, "--storage-capacity-gb 8589934592: must be at most 16777216 (16 PiB)"},
		{"storage infinite", func(c *Config) { c.StorageCapacityGB = math.Inf(1) }, "--storage-capacity-gb +Inf: must be a finite number"},
		{"precondition threads negative", func(c *Config) { c.PreconditionThreads = -4 }, "--precondition-threads -4: must not be negative"},
		{"speedup negative", func(c *Config) { c.TraceSpeedup = -1 }, "--trace-speedup -1: must not be negative"},
		{"cycles negative", func(c *Config) { c.ReplayCycles = -1 }, "--replay-cycles -1: must not be negative"},
		{"saturation above 1", func(c *Config) { c.TargetSaturation = 1.5 }, "--target-saturation 1.5: must be between 0 and 1"},
		{"saturation negative", func(c *Config) { c.TargetSaturation = -0.1 }, "--target-saturation -0.1: must be between 0 and 1"},
		{"cache dir etc", func(c *Config) { c.CacheDir = "/etc/kv" }, "--cache-dir /etc/kv: must not be a system directory or lie under one (/etc)"},
		{"cache dir root home", func(c *Config) { c.CacheDir = "/root/cache" }, "--cache-dir /root/cache: must not be a system directory or lie under one (/root)"},
		{"cache dir usr bin", func(c *Config) { c.CacheDir = "/usr/bin" }, "--cache-dir /usr/bin: must not be a system directory or lie under one (/usr)"},
		{"cache dir dotdot", func(c *Config) { c.CacheDir = "/tmp/../proc/x" }, "--cache-dir /tmp/../proc/x: must not be a system directory or lie under one (/proc)"},
		{"cache dir root", func(c *Config) { c.CacheDir = "/" }, "--cache-dir /: must not be the root directory /"},
		{"prefill and decode", func(c *Config) { c.PrefillOnly, c.DecodeOnly = true, true }, "--prefill-only with --decode-only: mutually exclusive (a node is either prefill or decode)"},
		{"generation mode", func(c *Config) { c.GenerationMode = "slow" }, "--generation-mode slow: must be one of none, fast, realistic"},
		{"performance profile", func(c *Config) { c.PerformanceProfile = "fast" }, "--performance-profile fast: must be one of latency, throughput"},
		{"autoscaler mode", func(c *Config) { c.AutoscalerMode = "" }, `--autoscaler-mode "": must be one of qos, capacity`},

		// kvbench's own.
		{"key style", func(c *Config) { c.KeyStyle = "s3" }, "--key-style s3: must be one of kvbench, mlperf"},
		{"epoch base", func(c *Config) { c.EpochBase = time.Unix(-1, 0) }, "--epoch-base -1: must not be negative (Unix seconds)"},
		{"request trace format", func(c *Config) { c.RequestTrace, c.RequestTraceFormat = "t.csv", "splitwise" }, "--request-trace-format splitwise: must be one of mooncake, azure, burstgpt, sharegpt"},
		{"request trace format alone", func(c *Config) { c.RequestTraceFormat = "azure" }, "--request-trace-format azure: needs --request-trace"},
		{"request trace with burst", func(c *Config) { c.RequestTrace, c.UseBurstTrace = "t.jsonl", true }, "--request-trace t.jsonl: cannot be combined with --use-burst-trace (one workload source at a time)"},
		{"request trace with dataset", func(c *Config) { c.RequestTrace, c.DatasetPath = "t.jsonl", "sg.json" }, "--request-trace t.jsonl: cannot be combined with --dataset-path sg.json (one workload source at a time)"},
		{"burst without path", func(c *Config) { c.UseBurstTrace, c.BurstTracePath = true, "" }, "--use-burst-trace: needs --burst-trace-path (a file, directory or glob)"},

		// config.yaml values.
		{"target usage zero", func(c *Config) { c.Eviction.TargetUsageRatio = 0 }, "eviction.target_usage_ratio 0: must be greater than 0 and at most 1"},
		{"target usage above 1", func(c *Config) { c.Eviction.TargetUsageRatio = 1.2 }, "eviction.target_usage_ratio 1.2: must be greater than 0 and at most 1"},
		{"large entry ratio", func(c *Config) { c.Eviction.LargeEntryLimitRatio = -0.5 }, "eviction.large_entry_limit_ratio -0.5: must be greater than 0 and at most 1"},
		{"recursion depth", func(c *Config) { c.Eviction.MaxRecursionDepth = -1 }, "eviction.max_recursion_depth -1: must not be negative"},
		{"hard cap", func(c *Config) { c.Eviction.MaxEvictionsHardCap = 0 }, "eviction.max_evictions_hard_cap 0: must be at least 1"},
		{"evictions min", func(c *Config) { c.Eviction.MaxEvictionsMin = -1 }, "eviction.max_evictions_min -1: must not be negative"},
		{"qos target", func(c *Config) { c.QoS[QoSBatch].TargetP99 = -time.Millisecond }, "qos_profiles.batch.target_latency_p99_ms -1: must not be negative"},
		{"qos interactive probability", func(c *Config) {
			c.QoSDistribution.InteractiveProbability = 1.5
			c.QoSDistribution.ResponsiveThreshold = 1.5
		}, "qos_distribution.interactive_probability 1.5: must be between 0 and 1\nqos_distribution.responsive_threshold 1.5: must be between 0 and 1"},
		{"qos threshold below", func(c *Config) { c.QoSDistribution.ResponsiveThreshold = 0.1 }, "qos_distribution.responsive_threshold 0.1: must not be below qos_distribution.interactive_probability 0.15 (it is cumulative)"},
		{"no templates", func(c *Config) { c.UserTemplates = nil }, "user_templates: no user templates (want chatbot, coding and document)"},
		{"template min above max", func(c *Config) { c.UserTemplates[1].ContextMin = 30000 }, "user_templates.coding.context_range [30000, 25000]: min must not exceed max"},
		{"template huge context", func(c *Config) { c.UserTemplates[0].ContextMax = 1e14 }, "user_templates.chatbot.context_range [512, 100000000000000]: max must be at most 10485760 (the largest context window offered)"},
		{"template zero generation", func(c *Config) { c.UserTemplates[0].GenerationMin = 0 }, "user_templates.chatbot.generation_range [0, 200]: min must be at least 1"},
		{"template think", func(c *Config) { c.UserTemplates[2].ThinkMin = 2 }, "user_templates.document.think_time_range [2, 1.5]: min must not exceed max"},
		{"template think negative", func(c *Config) { c.UserTemplates[2].ThinkMin = -1 }, "user_templates.document.think_time_range [-1, 1.5]: must be finite and not negative"},
		{"rag chunk", func(c *Config) { c.RAG.ChunkSizeTokens = 0 }, "rag.chunk_size_tokens 0: must be at least 1"},
		{"rag top k", func(c *Config) { c.RAG.TopKChunks = -1 }, "rag.top_k_chunks -1: must not be negative"},
		{"rag chunk bytes", func(c *Config) { c.RAG.MaxChunkBytes = 0 }, "rag.max_chunk_bytes 0: must be at least 1"},
		{"rag probability", func(c *Config) { c.RAG.RequestProbability = 2 }, "rag.request_probability 2: must be between 0 and 1"},
		{"rag distribution", func(c *Config) { c.RAG.Distribution = "normal" }, "rag.retrieval_distribution normal: must be one of zipfian, uniform, random"},
		{"rag small docs", func(c *Config) { c.RAG.SmallDocTokensMin = 20000 }, "rag.small_model_doc_tokens_min 20000: must not exceed rag.small_model_doc_tokens_max 12000"},
		{"rag large docs", func(c *Config) { c.RAG.LargeDocTokensMin = 0 }, "rag.large_model_doc_tokens_min 0: must be at least 1"},
		{"rag max documents", func(c *Config) { c.RAG.MaxDocuments = -1 }, "rag.max_documents -1: must not be negative"},
		{"decode batch", func(c *Config) { c.DecodeBatchSize = 0 }, "decode.batch_size 0: must be at least 1"},
		{"max turns", func(c *Config) { c.MaxTurns = 0 }, "conversation.max_turns_per_conv 0: must be at least 1"},
		{"end probability", func(c *Config) { c.EndConversationProbability = 1.1 }, "conversation.end_conversation_probability 1.1: must be between 0 and 1"},
		{"prefix probability", func(c *Config) { c.SystemPromptHitProbability = -0.2 }, "prefix_cache.system_prompt_hit_probability -0.2: must be between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.set(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Validate() =\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

// TestValidateReportsEveryProblem checks that several problems come back
// together, one per line, in a joined error whose parts are reachable.
func TestValidateReportsEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.NumUsers = 0
	c.Duration = 0
	c.Model = "nope"
	c.GenerationMode = "warp"
	c.PrefillOnly, c.DecodeOnly = true, true
	c.Eviction.TargetUsageRatio = 2
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{"--model nope:", "--num-users 0:", "--duration 0:", "--prefill-only with --decode-only:", "--generation-mode warp:", "eviction.target_usage_ratio 2:"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no line starts with %q in\n%s", want, err)
		}
	}
	if len(lines) != 6 {
		t.Errorf("%d lines, want 6:\n%s", len(lines), err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 6 {
		t.Errorf("error is not a join of 6 errors: %#v", err)
	}
}

func TestValidateCacheDir(t *testing.T) {
	dir := t.TempDir()
	c := DefaultConfig()
	c.CacheDir = filepath.Join(dir, "cache", "not-yet")
	if err := c.Validate(); err != nil {
		t.Errorf("a cache dir under a temporary dir: %v", err)
	}
	c.CacheDir = "relative/cache"
	if err := c.Validate(); err != nil {
		t.Errorf("a relative cache dir: %v", err)
	}
	link := filepath.Join(dir, "etc-link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Skipf("cannot make a symbolic link: %v", err)
	}
	c.CacheDir = filepath.Join(link, "kv")
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "(/etc) (it resolves to /etc/kv)") {
		t.Errorf("a link to /etc: %v", err)
	}
	// Lexically under a system directory's name but not under it.
	c.CacheDir = "/etcetera/kv"
	if err := c.Validate(); err != nil {
		t.Errorf("/etcetera: %v", err)
	}
}

func TestValidateModelGeometry(t *testing.T) {
	tests := []struct {
		name string
		m    Model
		want string
	}{
		{"no layers", Model{NumLayers: 0, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, AttentionType: "mha"}, "--model m: model_configs.m.num_layers 0: must be at least 1"},
		{"no heads", Model{NumLayers: 32, HiddenDim: 4096, NumHeads: 0, KVHeads: 8, AttentionType: "mha"}, "--model m: model_configs.m.num_heads 0: must be at least 1 (the head dimension is hidden_dim / num_heads)"},
		{"hidden below heads", Model{NumLayers: 32, HiddenDim: 16, NumHeads: 32, KVHeads: 8, AttentionType: "gqa"}, "--model m: model_configs.m.hidden_dim 16: must be at least num_heads 32 (the head dimension is hidden_dim / num_heads)"},
		{"no kv heads", Model{NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 0, AttentionType: "mha"}, "--model m: model_configs.m.kv_heads 0: must be at least 1"},
		{"negative", Model{NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: -8, AttentionType: "mha"}, "--model m: model_configs.m.kv_heads -8: must not be negative"},
		{"attention", Model{NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, AttentionType: "MLA"}, `--model m: model_configs.m.attention_type MLA: must be mha, gqa or mla`},
		{"mla without latent", Model{NumLayers: 61, AttentionType: "mla"}, "--model m: model_configs.m.kv_lora_rank + qk_rope_head_dim: must be at least 1 for mla attention"},
		{"huge", Model{NumLayers: 1 << 20, HiddenDim: 1 << 20, NumHeads: 1, KVHeads: 1 << 20, AttentionType: "mha", DType: "float32"}, "--model m: model_configs.m.bytes per token 9223372036854775808: must be between 1 and 1073741824"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.m.Key = "m"
			c.Models["m"], c.Model = tt.m, "m"
			_, err := c.ModelConfig()
			if err == nil || err.Error() != tt.want {
				t.Errorf("ModelConfig() error %v, want %q", err, tt.want)
			}
			if verr := c.Validate(); verr == nil || !strings.Contains(verr.Error(), tt.want) {
				t.Errorf("Validate() = %v, want it to hold %q", verr, tt.want)
			}
		})
	}
	c := DefaultConfig()
	m, err := c.ModelConfig()
	if err != nil || m.Key != DefaultModel || m.BytesPerToken() != 131072 {
		t.Errorf("ModelConfig() = %+v, %v", m, err)
	}
	c.Models = nil
	if _, err := c.ModelConfig(); err == nil {
		t.Error("ModelConfig() with no models succeeded")
	}
}

func TestWarnings(t *testing.T) {
	tests := []struct {
		name string
		set  func(c *Config)
		want []string
	}{
		{"tp power of two", func(c *Config) { c.NumGPUs, c.TensorParallel = 8, 8 }, nil},
		{"tp not a power of two", func(c *Config) { c.NumGPUs, c.TensorParallel = 8, 6 }, []string{"--tensor-parallel 6: not a power of 2; uncommon for real deployments but allowed"}},
		// Above --num-gpus is an error, not also a warning (the reference's elif).
		{"tp invalid", func(c *Config) { c.NumGPUs, c.TensorParallel = 2, 3 }, nil},
		{"dtype", func(c *Config) {
			m := c.Models["tiny-1b"]
			m.DType = "fp8"
			c.Models["tiny-1b"], c.Model = m, "tiny-1b"
		}, []string{`--model tiny-1b: dtype fp8: unknown, 2 bytes per element assumed (as in the reference)`}},
		{"dataset and burst", func(c *Config) { c.DatasetPath, c.UseBurstTrace = "sg.json", true }, []string{"--dataset-path sg.json: takes precedence over --use-burst-trace (as in the reference)"}},
		{"request rate", func(c *Config) { c.RequestRate = 5 }, []string{"--request-rate 5: no effect without --dataset-path, --request-trace or --arrival (ShareGPT replay only, as in the reference, untimed request traces and arrival processes)"}},
		{"request rate with dataset", func(c *Config) { c.RequestRate, c.DatasetPath = 5, "sg.json" }, nil},
		// The autoscaler's options without it, or a qos target in
		// capacity mode, change nothing: said, not ignored.
		{"autoscaler mode alone", func(c *Config) { c.AutoscalerMode = "capacity" }, []string{"--autoscaler-mode capacity: no effect without --enable-autoscaling (the run lasts --duration)"}},
		{"target saturation alone", func(c *Config) { c.TargetSaturation = 0.5 }, []string{"--target-saturation 0.5: no effect without --enable-autoscaling in its qos mode (--autoscaler-mode capacity follows the throughput)"}},
		{"target saturation in capacity mode", func(c *Config) { c.EnableAutoscaling, c.AutoscalerMode, c.TargetSaturation = true, "capacity", 0.5 },
			[]string{"--target-saturation 0.5: no effect without --enable-autoscaling in its qos mode (--autoscaler-mode capacity follows the throughput)"}},
		{"autoscaler qos with target", func(c *Config) { c.EnableAutoscaling, c.TargetSaturation = true, 0.5 }, nil},
		{"autoscaler capacity", func(c *Config) { c.EnableAutoscaling, c.AutoscalerMode = true, "capacity" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.set(&c)
			if got := c.Warnings(); !slices.Equal(got, tt.want) {
				t.Errorf("Warnings() = %q, want %q", got, tt.want)
			}
		})
	}
	c := DefaultConfig()
	c.NumGPUs, c.TensorParallel = 8, 6
	if err := c.Validate(); err != nil {
		t.Errorf("a non-power-of-2 TP is only a warning, Validate() = %v", err)
	}
}
