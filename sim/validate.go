package sim

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// Limits of the reference's validate_args (kv_cache/workload.py). The
// validation_limits section of config.yaml does not change them, in the
// reference or here.
const (
	MaxUsers       = 100000
	MaxDuration    = 86400 * time.Second
	MaxGPUMemGB    = 65536
	MaxCPUMemGB    = 131072
	maxBytesPerTok = 1 << 30 // a sanity bound that keeps object sizes in an int64
	// MaxStorageGB bounds --storage-capacity-gb and --precondition-size-gb
	// (kvbench's rule; the reference has none): 16 PiB, far above any
	// drive or array a KV cache tier lies on. Above 2^33 GiB the tier's
	// bytes overflowed the int64 of the sidecar's tier_capacity_bytes
	// (1e30 wrote -9223372036854775808, a sidecar no tool reads), and a
	// precondition of 1e30 GiB never ended.
	MaxStorageGB = 1 << 24
)

// Validate checks c and reports every problem at once: the result joins
// one error per problem (errors.Join), each on one line naming the flag or
// config.yaml key, the value and the rule, as in
//
//	--num-users 0: must be between 1 and 100000
//	eviction.target_usage_ratio 1.5: must be greater than 0 and at most 1
//
// It applies every rule of the reference's validate_args, the choices of its
// argparse flags, the model check of its main, and kvbench's own rules; it
// returns nil when c is valid. Warnings reports what the reference only
// warns about. Validate reads the file system only to resolve symbolic
// links in CacheDir.
func (c *Config) Validate() error {
	var p validationProblems

	// kv-cache.py's flags (validate_args, argparse choices, main).
	if _, err := c.ModelConfig(); err != nil {
		p = append(p, err)
	}
	p.intRange("--num-users", c.NumUsers, 1, MaxUsers)
	if c.Duration < time.Second || c.Duration > MaxDuration {
		p.addf("--duration %s: must be between 1 and %d seconds", formatSeconds(c.Duration), int(MaxDuration/time.Second))
	}
	p.floatRange("--gpu-mem-gb", c.GPUMemGB, 0, MaxGPUMemGB)
	p.floatRange("--cpu-mem-gb", c.CPUMemGB, 0, MaxCPUMemGB)
	p.atLeast("--num-gpus", c.NumGPUs, 1)
	switch {
	case c.TensorParallel < 1:
		p.addf("--tensor-parallel %d: must be at least 1", c.TensorParallel)
	case c.TensorParallel > c.NumGPUs && c.NumGPUs >= 1:
		p.addf("--tensor-parallel %d: must not exceed --num-gpus %d", c.TensorParallel, c.NumGPUs)
	}
	p.atLeast("--rag-num-docs", c.RAGNumDocs, 0)
	p.atLeast("--max-conversations", c.MaxConversations, 1)
	p.atLeast("--max-concurrent-allocs", c.MaxConcurrentAllocs, 0)
	p.nonNegative("--request-rate", c.RequestRate)
	p.atLeast("--max-requests", c.MaxRequests, 0)
	p.nonNegative("--storage-capacity-gb", c.StorageCapacityGB)
	p.atMost("--storage-capacity-gb", c.StorageCapacityGB, MaxStorageGB, "16 PiB")
	if c.ObjectTier && c.StorageCapacityGB <= 0 {
		p.addf("--object-tier: Tier-3 takes what a bounded NVMe tier evicts: give --storage-capacity-gb (an unbounded NVMe tier evicts nothing)")
	}
	p.nonNegative("--precondition-size-gb", c.PreconditionSizeGB)
	p.atMost("--precondition-size-gb", c.PreconditionSizeGB, MaxStorageGB, "16 PiB")
	p.atLeast("--precondition-threads", c.PreconditionThreads, 0)
	p.oneOf("--nvme-accounting", c.NVMeAccounting, AccountingReference, AccountingExact)
	p.nonNegative("--trace-speedup", c.TraceSpeedup)
	p.atLeast("--replay-cycles", c.ReplayCycles, 0)
	p.floatRange("--target-saturation", c.TargetSaturation, 0, 1)
	if c.CacheDir != "" {
		if why := systemCacheDir(c.CacheDir); why != "" {
			p.addf("--cache-dir %s: %s", parsemsg.Arg(c.CacheDir), why)
		}
	}
	if c.PrefillOnly && c.DecodeOnly {
		p.addf("--prefill-only with --decode-only: mutually exclusive (a node is either prefill or decode)")
	}
	p.oneOf("--generation-mode", c.GenerationMode, "none", "fast", "realistic")
	p.oneOf("--performance-profile", c.PerformanceProfile, "latency", "throughput")
	p.oneOf("--autoscaler-mode", c.AutoscalerMode, "qos", "capacity")

	// kvbench's own flags.
	p.oneOf("--key-style", c.KeyStyle, "kvbench", "mlperf")
	if c.EpochBase.Unix() < 0 {
		p.addf("--epoch-base %d: must not be negative (Unix seconds)", c.EpochBase.Unix())
	}
	if c.RequestTraceTimeUnit != "" {
		p.oneOf("--request-trace-time-unit", c.RequestTraceTimeUnit, "s", "ms", "us", "ns")
		if c.RequestTrace == "" {
			p.addf("--request-trace-time-unit %s: needs --request-trace", parsemsg.Arg(c.RequestTraceTimeUnit))
		}
	}
	if c.Arrival != "" {
		p.oneOf("--arrival", c.Arrival, ArrivalFixed, ArrivalPoisson, ArrivalGamma)
		if c.UseBurstTrace && c.DatasetPath == "" {
			p.addf("--arrival %s: with --use-burst-trace the trace's timestamps are the arrivals (--arrival paces synthetic users, --dataset-path and untimed request traces)", parsemsg.Arg(c.Arrival))
		}
	}
	if c.ArrivalCV <= 0 || c.ArrivalCV > 10 || math.IsNaN(c.ArrivalCV) {
		p.addf("--arrival-cv %s: must be above 0 and at most 10 (the gamma gaps' coefficient of variation; 1 is Poisson's)", formatNumber(c.ArrivalCV))
	}
	if c.RequestTraceBlockTokens != 0 {
		if c.RequestTraceBlockTokens < 0 || c.RequestTraceBlockTokens > 1<<20 {
			p.addf("--request-trace-block-tokens %d: must be between 1 and 1048576 (tokens a hash id stands for; 0 is Mooncake's 512)", c.RequestTraceBlockTokens)
		}
		if c.RequestTrace == "" {
			p.addf("--request-trace-block-tokens %d: needs --request-trace", c.RequestTraceBlockTokens)
		}
	}
	if c.RequestTraceFormat != "" {
		p.oneOf("--request-trace-format", c.RequestTraceFormat, "mooncake", "azure", "burstgpt", "sharegpt")
		if c.RequestTrace == "" {
			p.addf("--request-trace-format %s: needs --request-trace", parsemsg.Arg(c.RequestTraceFormat))
		}
	}
	if c.RequestTrace != "" {
		if c.UseBurstTrace {
			p.addf("--request-trace %s: cannot be combined with --use-burst-trace (one workload source at a time)", parsemsg.Arg(c.RequestTrace))
		}
		if c.DatasetPath != "" {
			p.addf("--request-trace %s: cannot be combined with --dataset-path %s (one workload source at a time)", parsemsg.Arg(c.RequestTrace), parsemsg.Arg(c.DatasetPath))
		}
	}
	if c.UseBurstTrace && c.BurstTracePath == "" {
		p.addf("--use-burst-trace: needs --burst-trace-path (a file, directory or glob)")
	}

	// config.yaml's sections.
	c.validateYAMLValues(&p)

	return errors.Join(p...)
}

// validateYAMLValues checks the values that come from config.yaml (or
// their defaults), naming them by their key.
func (c *Config) validateYAMLValues(p *validationProblems) {
	e := c.Eviction
	p.ratio("eviction.target_usage_ratio", e.TargetUsageRatio)
	p.ratio("eviction.large_entry_limit_ratio", e.LargeEntryLimitRatio)
	p.atLeast("eviction.max_recursion_depth", e.MaxRecursionDepth, 0)
	p.atLeast("eviction.max_evictions_hard_cap", e.MaxEvictionsHardCap, 1)
	p.atLeast("eviction.max_evictions_min", e.MaxEvictionsMin, 0)

	for _, q := range c.QoS {
		key := "qos_profiles." + q.Name
		for _, t := range [...]struct {
			name string
			d    time.Duration
		}{{"target_latency_p95_ms", q.TargetP95}, {"target_latency_p99_ms", q.TargetP99}, {"target_latency_p999_ms", q.TargetP999}, {"target_latency_p9999_ms", q.TargetP9999}} {
			if t.d < 0 {
				p.addf("%s.%s %s: must not be negative", key, t.name, formatNumber(float64(t.d)/float64(time.Millisecond)))
			}
		}
	}
	d := c.QoSDistribution
	p.floatRange("qos_distribution.interactive_probability", d.InteractiveProbability, 0, 1)
	p.floatRange("qos_distribution.responsive_threshold", d.ResponsiveThreshold, 0, 1)
	if d.ResponsiveThreshold < d.InteractiveProbability {
		p.addf("qos_distribution.responsive_threshold %s: must not be below qos_distribution.interactive_probability %s (it is cumulative)",
			formatNumber(d.ResponsiveThreshold), formatNumber(d.InteractiveProbability))
	}

	if len(c.UserTemplates) == 0 {
		p.addf("user_templates: no user templates (want chatbot, coding and document)")
	}
	for _, u := range c.UserTemplates {
		key := "user_templates." + u.Name
		p.intPair(key+".context_range", u.ContextMin, u.ContextMax)
		if u.ContextMax > maxInputTokens {
			// Beyond, no model serves the context, and bytes per token x
			// tokens overflows an object's size at 1e14 tokens.
			p.addf("%s.context_range [%d, %d]: max must be at most %d (the largest context window offered)", key, u.ContextMin, u.ContextMax, maxInputTokens)
		}
		p.intPair(key+".generation_range", u.GenerationMin, u.GenerationMax)
		switch {
		case !(u.ThinkMin >= 0) || math.IsInf(u.ThinkMax, 0) || math.IsNaN(u.ThinkMax):
			p.addf("%s.think_time_range [%s, %s]: must be finite and not negative", key, formatNumber(u.ThinkMin), formatNumber(u.ThinkMax))
		case u.ThinkMin > u.ThinkMax:
			p.addf("%s.think_time_range [%s, %s]: min must not exceed max", key, formatNumber(u.ThinkMin), formatNumber(u.ThinkMax))
		}
	}

	r := c.RAG
	p.atLeast("rag.chunk_size_tokens", r.ChunkSizeTokens, 1)
	p.atLeast("rag.top_k_chunks", r.TopKChunks, 0)
	if r.MaxChunkBytes < 1 {
		p.addf("rag.max_chunk_bytes %d: must be at least 1", r.MaxChunkBytes)
	}
	p.floatRange("rag.request_probability", r.RequestProbability, 0, 1)
	p.oneOf("rag.retrieval_distribution", r.Distribution, "zipfian", "uniform", "random")
	p.intPairKeys("rag.small_model_doc_tokens_min", r.SmallDocTokensMin, "rag.small_model_doc_tokens_max", r.SmallDocTokensMax)
	p.intPairKeys("rag.large_model_doc_tokens_min", r.LargeDocTokensMin, "rag.large_model_doc_tokens_max", r.LargeDocTokensMax)
	p.atLeast("rag.max_documents", r.MaxDocuments, 0)

	// The reference divides by the batch size: 0 would crash it.
	p.atLeast("decode.batch_size", c.DecodeBatchSize, 1)
	p.atLeast("conversation.max_turns_per_conv", c.MaxTurns, 1)
	p.atLeast("conversation.max_conversations", c.ConversationStates, 1)
	p.floatRange("conversation.end_conversation_probability", c.EndConversationProbability, 0, 1)
	p.floatRange("prefix_cache.system_prompt_hit_probability", c.SystemPromptHitProbability, 0, 1)
}

// Warnings returns what the reference accepts with a warning, one line
// each, in a stable order; Validate does not report these. A caller prints
// them on stderr.
func (c *Config) Warnings() []string {
	var w []string
	if c.TensorParallel > 1 && c.TensorParallel <= c.NumGPUs && bits.OnesCount(uint(c.TensorParallel)) != 1 {
		w = append(w, fmt.Sprintf("--tensor-parallel %d: not a power of 2; uncommon for real deployments but allowed", c.TensorParallel))
	}
	if m, ok := c.Models[c.Model]; ok {
		switch m.DType {
		case "float32", "float16", "bfloat16", "int8":
		default:
			w = append(w, fmt.Sprintf("--model %s: dtype %s: unknown, 2 bytes per element assumed (as in the reference)", c.Model, parsemsg.Arg(m.DType)))
		}
	}
	if c.DatasetPath != "" && c.UseBurstTrace {
		w = append(w, fmt.Sprintf("--dataset-path %s: takes precedence over --use-burst-trace (as in the reference)", parsemsg.Arg(c.DatasetPath)))
	}
	if c.RequestRate > 0 && c.DatasetPath == "" && c.RequestTrace == "" && c.Arrival == "" {
		w = append(w, fmt.Sprintf("--request-rate %s: no effect without --dataset-path, --request-trace or --arrival (ShareGPT replay only, as in the reference, untimed request traces and arrival processes)", formatNumber(c.RequestRate)))
	}
	if most := 1 / minSpacing.Seconds(); c.RequestRate > most && (c.DatasetPath != "" || c.RequestTrace != "" || c.Arrival != "") {
		w = append(w, fmt.Sprintf("--request-rate %s: above %g requests/s, requests arrive every %g ms, kvtrace's fastest pace (as an unpaced trace's)",
			formatNumber(c.RequestRate), most, float64(minSpacing)/float64(time.Millisecond)))
	}
	// Synthetic users run for --duration at their own think times: the
	// options that pace and repeat a replayed trace change nothing then.
	replayed := c.DatasetPath != "" || c.UseBurstTrace || c.RequestTrace != ""
	if c.ReplayCycles != 0 && !replayed {
		w = append(w, fmt.Sprintf("--replay-cycles %d: no effect without --use-burst-trace, --dataset-path or --request-trace (passes over a replayed trace; synthetic users run for --duration)", c.ReplayCycles))
	}
	if c.TraceSpeedup != 1 && !replayed {
		w = append(w, fmt.Sprintf("--trace-speedup %s: no effect without --use-burst-trace, --dataset-path or --request-trace (the time scale of a replayed trace)", formatNumber(c.TraceSpeedup)))
	}
	// The autoscaler's options shape nothing without it (a capacity run
	// then writes the whole --duration), and its capacity mode reads no
	// target saturation.
	def := DefaultConfig()
	if !c.EnableAutoscaling && c.AutoscalerMode != def.AutoscalerMode {
		w = append(w, fmt.Sprintf("--autoscaler-mode %s: no effect without --enable-autoscaling (the run lasts --duration)", parsemsg.Arg(c.AutoscalerMode)))
	}
	if c.TargetSaturation != def.TargetSaturation && (!c.EnableAutoscaling || c.AutoscalerMode == "capacity") {
		w = append(w, fmt.Sprintf("--target-saturation %s: no effect without --enable-autoscaling in its qos mode (--autoscaler-mode capacity follows the throughput)", formatNumber(c.TargetSaturation)))
	}
	return w
}

// ModelConfig returns the model c.Model names in c.Models, or an error that
// lists the known keys when there is none, or says what is wrong with its
// geometry (a model from config.yaml can have any numbers).
func (c *Config) ModelConfig() (Model, error) {
	m, err := lookupModel(c.Models, c.Model)
	if err != nil {
		return Model{}, err
	}
	if why := m.problem(); why != "" {
		return Model{}, fmt.Errorf("--model %s: model_configs.%s", c.Model, why)
	}
	return m, nil
}

// problem says what makes m unusable, starting with the field's key, or ""
// when it is usable.
func (m *Model) problem() string {
	var why []string
	for _, f := range [...]struct {
		name string
		v    int
	}{{"num_layers", m.NumLayers}, {"hidden_dim", m.HiddenDim}, {"num_heads", m.NumHeads}, {"kv_heads", m.KVHeads},
		{"kv_dim_per_head", m.KVDimPerHead}, {"kv_lora_rank", m.KVLoraRank}, {"qk_rope_head_dim", m.QKRopeHeadDim}} {
		if f.v < 0 {
			why = append(why, fmt.Sprintf("%s %d: must not be negative", f.name, f.v))
		}
	}
	if m.NumLayers < 1 && m.NumLayers >= 0 {
		why = append(why, fmt.Sprintf("num_layers %d: must be at least 1", m.NumLayers))
	}
	// The reference computes MHA/GQA sizes for every attention type but
	// "mla"; its own comment names mha, gqa and mla.
	switch m.AttentionType {
	case "mla":
		if m.KVLoraRank+m.QKRopeHeadDim < 1 && m.KVLoraRank >= 0 && m.QKRopeHeadDim >= 0 {
			why = append(why, "kv_lora_rank + qk_rope_head_dim: must be at least 1 for mla attention")
		}
	case "mha", "gqa":
		if m.KVDimPerHead == 0 && m.NumHeads == 0 {
			why = append(why, "num_heads 0: must be at least 1 (the head dimension is hidden_dim / num_heads)")
		} else if m.KVDimPerHead == 0 && m.NumHeads > 0 && m.HiddenDim >= 0 && m.HiddenDim < m.NumHeads {
			why = append(why, fmt.Sprintf("hidden_dim %d: must be at least num_heads %d (the head dimension is hidden_dim / num_heads)", m.HiddenDim, m.NumHeads))
		}
		if m.KVHeads == 0 {
			why = append(why, "kv_heads 0: must be at least 1")
		}
	default:
		why = append(why, fmt.Sprintf("attention_type %s: must be mha, gqa or mla", parsemsg.Arg(m.AttentionType)))
	}
	if len(why) == 0 {
		if bpt := m.bytesPerTokenFloat(); !(bpt >= 1 && bpt <= maxBytesPerTok) {
			why = append(why, fmt.Sprintf("bytes per token %s: must be between 1 and %d", formatNumber(bpt), maxBytesPerTok))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return m.Key + "." + strings.Join(why, "; ")
}

// bytesPerTokenFloat is BytesPerToken in floating point, which cannot
// overflow, for the range check.
func (m *Model) bytesPerTokenFloat() float64 {
	bpe := float64(m.BytesPerElement())
	if m.AttentionType == "mla" {
		return float64(m.NumLayers) * (float64(m.KVLoraRank) + float64(m.QKRopeHeadDim)) * bpe
	}
	return float64(m.NumLayers) * float64(m.KVHeads) * float64(m.HeadDim()) * 2 * bpe
}

// systemCacheDir says why dir may not be a cache directory, or "" if it
// may. As in the reference the path is made absolute and its symbolic
// links are resolved (where they exist) first.
func systemCacheDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err.Error()
	}
	if why := underSystemDir(abs); why != "" {
		return why
	}
	if resolved := resolveExisting(abs); resolved != abs {
		if why := underSystemDir(resolved); why != "" {
			return why + " (it resolves to " + resolved + ")"
		}
	}
	return ""
}

// underSystemDir says why the clean absolute path p may not be a cache
// directory, or "" if it may.
func underSystemDir(p string) string {
	if p == string(filepath.Separator) {
		return "must not be the root directory /"
	}
	// The reference's FORBIDDEN_CACHE_PREFIXES (/etc, /bin, /sbin, /usr/bin,
	// /usr/sbin, /boot, /sys, /proc, /dev, /root), matched by path element
	// rather than by string prefix, and kvbench's own system directories
	// (design section 7), which add /, /usr and /lib.
	for _, d := range [...]string{"/etc", "/bin", "/sbin", "/usr", "/lib", "/lib64", "/boot", "/sys", "/proc", "/dev", "/root"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "must not be a system directory or lie under one (" + d + ")"
		}
	}
	return ""
}

// resolveExisting evaluates the symbolic links of the longest existing
// prefix of the clean absolute path p and appends the rest, like Python's
// Path.resolve(strict=False). It returns p when nothing resolves.
func resolveExisting(p string) string {
	rest := ""
	for dir := p; ; {
		if _, err := os.Lstat(dir); err == nil {
			if resolved, err := filepath.EvalSymlinks(dir); err == nil {
				return filepath.Join(resolved, rest)
			}
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// validationProblems collects Validate's findings, one error per problem.
type validationProblems []error

func (p *validationProblems) addf(format string, args ...any) {
	*p = append(*p, fmt.Errorf(format, args...))
}

func (p *validationProblems) intRange(name string, v, lo, hi int) {
	if v < lo || v > hi {
		p.addf("%s %d: must be between %d and %d", name, v, lo, hi)
	}
}

func (p *validationProblems) atLeast(name string, v, lo int) {
	if v < lo {
		if lo == 0 {
			p.addf("%s %d: must not be negative", name, v)
			return
		}
		p.addf("%s %d: must be at least %d", name, v, lo)
	}
}

func (p *validationProblems) floatRange(name string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) { // NaN fails too
		p.addf("%s %s: must be between %s and %s", name, formatNumber(v), formatNumber(lo), formatNumber(hi))
	}
}

// atMost reports a finite v above hi, which is what in words (nonNegative
// reports the rest).
func (p *validationProblems) atMost(name string, v, hi float64, what string) {
	if v > hi && !math.IsInf(v, 0) {
		p.addf("%s %s: must be at most %s (%s)", name, formatNumber(v), formatNumber(hi), what)
	}
}

func (p *validationProblems) nonNegative(name string, v float64) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		p.addf("%s %s: must be a finite number", name, formatNumber(v))
	case v < 0:
		p.addf("%s %s: must not be negative", name, formatNumber(v))
	}
}

func (p *validationProblems) ratio(name string, v float64) {
	if !(v > 0 && v <= 1) {
		p.addf("%s %s: must be greater than 0 and at most 1", name, formatNumber(v))
	}
}

func (p *validationProblems) oneOf(name, v string, choices ...string) {
	for _, c := range choices {
		if v == c {
			return
		}
	}
	p.addf("%s %s: must be one of %s", name, parsemsg.Arg(v), strings.Join(choices, ", "))
}

// intPair checks an inclusive [min, max] token range.
func (p *validationProblems) intPair(name string, lo, hi int) {
	switch {
	case lo < 1:
		p.addf("%s [%d, %d]: min must be at least 1", name, lo, hi)
	case lo > hi:
		p.addf("%s [%d, %d]: min must not exceed max", name, lo, hi)
	}
}

// intPairKeys is intPair for a range given as two keys.
func (p *validationProblems) intPairKeys(loName string, lo int, hiName string, hi int) {
	switch {
	case lo < 1:
		p.addf("%s %d: must be at least 1", loName, lo)
	case lo > hi:
		p.addf("%s %d: must not exceed %s %d", loName, lo, hiName, hi)
	}
}

// formatNumber renders v in the shortest form that reads back exactly: 16,
// 0.8, 1e+30.
func formatNumber(v float64) string {
	// A whole number below 1e21 is written whole, as it was typed
	// ("9223372036854775808", not "9.223372036854776e+18").
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatSeconds renders d as seconds: 0, 60, 0.5.
func formatSeconds(d time.Duration) string { return formatNumber(d.Seconds()) }
