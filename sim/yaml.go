package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// YAMLError is a problem in a config file: the file, the line and column
// (1-based; 0 when unknown), the dotted key path and what is wrong:
//
//	sim: config.yaml:12:3: eviction.target_usage_rato: unknown key (want one of max_recursion_depth, ...)
type YAMLError struct {
	File   string
	Line   int
	Column int
	Key    string // dotted path such as "eviction.target_usage_ratio"; "" for the document
	Err    error
}

// Error returns "sim: FILE:LINE:COLUMN: KEY: problem".
func (e *YAMLError) Error() string {
	var b strings.Builder
	b.WriteString("sim: ")
	b.WriteString(parsemsg.Printable(e.File)) // a newline in it must not split the line
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString("invalid")
	}
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *YAMLError) Unwrap() error { return e.Err }

// LoadYAML reads a config file in the shape of the reference's config.yaml
// (kv-cache.py --config) from r and applies it to c; name is the file's
// name for messages. As in the reference:
//
//   - model_configs entries are merged over c.Models: a new key adds a model
//     (with the reference's defaults for fields it omits: 32 layers, hidden
//     dimension 4096, 32 heads, 8 KV heads, float16, mha), an existing key
//     overrides the fields given;
//   - user_templates, qos_profiles, qos_distribution, eviction, rag,
//     decode.batch_size, conversation.max_turns_per_conv and
//     max_conversations, and prefix_cache.system_prompt_hit_probability
//     override c's values field by field. (kv-cache.py reads qos_profiles
//     too late for its own use: its queue priorities and SLA checks keep
//     the built-in profiles, imported before --config rebinds them; the
//     shipped config.yaml has the same values. kvtrace applies them.);
//   - every other key of the reference's schema is type-checked and not
//     used: generation_timing, gpu_backend, autoscaler, sharegpt,
//     saturation_detection, validation_limits,
//     prefix_cache.min_prefix_length and max_prefix_entries,
//     conversation.end_conversation_probability. Each
//     one present is recorded in c.NoEffect, as "config.yaml
//     generation_timing: validated, not used (as in the reference)".
//
// The schema is strict: an unknown key, a value of the wrong type (a bool
// or a string for a number, a float for an integer, a range that is not
// two numbers), a duplicate key, or more than one document is an error.
// Every problem is reported at once (errors.Join of *YAMLError, one per
// line, naming the file, line, column and key path); a YAML syntax error is
// reported alone, as the YAML library words it, after the file name. An
// empty file changes nothing. On error c is left unchanged. LoadYAML checks types, not
// ranges: call c.Validate afterwards.
func LoadYAML(r io.Reader, name string, c *Config) (err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("sim: %s: %w", name, err)
	}
	// A defect in the YAML library must not take the tool down with a
	// panic on a bad file: it is reported as an error of the file.
	defer func() {
		if v := recover(); v != nil {
			err = &YAMLError{File: name, Err: fmt.Errorf("cannot parse: %v", v)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file, as yaml.safe_load(f) or {}
		}
		return fmt.Errorf("sim: %s: %w", name, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return &YAMLError{File: name, Line: extra.Line, Column: extra.Column, Err: errors.New("more than one YAML document (want one)")}
	case !errors.Is(err, io.EOF):
		return fmt.Errorf("sim: %s: %w", name, err)
	}

	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	l := &yamlLoader{name: name}
	root = l.deref(root, "")
	if root == nil {
		return errors.Join(l.errs...)
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil
	}
	nc := cloneConfig(c)
	l.section(nc, root, "", yamlSchema(), false)
	if len(l.errs) > 0 {
		return errors.Join(l.errs...)
	}
	nc.NoEffect = append(nc.NoEffect, l.notes...)
	*c = *nc
	return nil
}

// cloneConfig copies c deeply enough that LoadYAML can change the copy
// without touching c: its maps and slices are copied.
func cloneConfig(c *Config) *Config {
	nc := *c
	nc.Models = make(map[string]Model, len(c.Models))
	for k, m := range c.Models {
		nc.Models[k] = m
	}
	nc.UserTemplates = slices.Clone(c.UserTemplates)
	nc.NoEffect = slices.Clone(c.NoEffect)
	return &nc
}

// yamlKind is the type a key's value must have.
type yamlKind int

const (
	yamlSection     yamlKind = iota + 1 // a mapping of known keys
	yamlModels                          // model_configs: a mapping of model keys
	yamlInt                             // an integer
	yamlNumber                          // an integer or a float
	yamlString                          // a string
	yamlIntRange                        // [min, max] of integers
	yamlNumberRange                     // [min, max] of numbers
)

// String names the type for messages: "an integer", "a list of two numbers
// [min, max]".
func (k yamlKind) String() string {
	switch k {
	case yamlSection:
		return "a mapping"
	case yamlModels:
		return "a mapping of model keys"
	case yamlInt:
		return "an integer"
	case yamlNumber:
		return "a number"
	case yamlString:
		return "a string"
	case yamlIntRange:
		return "a list of two integers [min, max]"
	case yamlNumberRange:
		return "a list of two numbers [min, max]"
	}
	return "a value"
}

// yamlValue is a checked scalar or range.
type yamlValue struct {
	i  int
	f  float64
	s  string
	ri [2]int
	rf [2]float64
}

// yamlKey is one key of the schema.
type yamlKey struct {
	name string
	kind yamlKind
	keys []yamlKey // of a yamlSection
	// set applies a value; nil means the key is validated and not used.
	set func(c *Config, v yamlValue) error
	// unused says why a key (or a whole section) is not used; it is
	// recorded in Config.NoEffect when the key is present.
	unused string
}

const (
	notUsedRef    = "validated, not used (as in the reference)"
	notUsedRealIO = "validated, not used (real-I/O only in the reference)"
	// The reference's autoscaler reads min_users and max_users, which
	// bound only the user counts it reports (kvtrace takes the defaults,
	// 1 and 10000), and hard-codes its factors.
	notUsedScaler = "validated, not used (kvtrace's autoscaler takes min_users 1 and max_users 10000, which bound only the user counts it reports; the reference hard-codes the rest)"
)

// yamlSchema returns the reference's ConfigLoader.VALID_SCHEMA with what
// each key does here.
func yamlSchema() []yamlKey {
	templates := make([]yamlKey, 0, 3)
	for _, t := range [...]string{"chatbot", "coding", "document"} {
		templates = append(templates, yamlKey{name: t, kind: yamlSection, keys: []yamlKey{
			{name: "context_range", kind: yamlIntRange, set: func(c *Config, v yamlValue) error {
				u := yamlTemplate(c, t)
				u.ContextMin, u.ContextMax = v.ri[0], v.ri[1]
				return nil
			}},
			{name: "generation_range", kind: yamlIntRange, set: func(c *Config, v yamlValue) error {
				u := yamlTemplate(c, t)
				u.GenerationMin, u.GenerationMax = v.ri[0], v.ri[1]
				return nil
			}},
			{name: "think_time_range", kind: yamlNumberRange, set: func(c *Config, v yamlValue) error {
				u := yamlTemplate(c, t)
				u.ThinkMin, u.ThinkMax = v.rf[0], v.rf[1]
				return nil
			}},
		}})
	}

	qos := make([]yamlKey, 0, numQoSLevels)
	for level, name := range [numQoSLevels]string{QoSInteractive: "interactive", QoSResponsive: "responsive", QoSBatch: "batch"} {
		target := func(key string, field func(q *QoSProfile) *time.Duration) yamlKey {
			return yamlKey{name: key, kind: yamlNumber, set: func(c *Config, v yamlValue) error {
				d, err := millis(v.f)
				if err != nil {
					return err
				}
				*field(&c.QoS[level]) = d
				return nil
			}}
		}
		qos = append(qos, yamlKey{name: name, kind: yamlSection, keys: []yamlKey{
			target("target_latency_p95_ms", func(q *QoSProfile) *time.Duration { return &q.TargetP95 }),
			target("target_latency_p99_ms", func(q *QoSProfile) *time.Duration { return &q.TargetP99 }),
			target("target_latency_p999_ms", func(q *QoSProfile) *time.Duration { return &q.TargetP999 }),
			target("target_latency_p9999_ms", func(q *QoSProfile) *time.Duration { return &q.TargetP9999 }),
			{name: "priority", kind: yamlInt, set: func(c *Config, v yamlValue) error { c.QoS[level].Priority = v.i; return nil }},
		}})
	}

	intKey := func(name string, p func(c *Config) *int) yamlKey {
		return yamlKey{name: name, kind: yamlInt, set: func(c *Config, v yamlValue) error { *p(c) = v.i; return nil }}
	}
	numKey := func(name string, p func(c *Config) *float64) yamlKey {
		return yamlKey{name: name, kind: yamlNumber, set: func(c *Config, v yamlValue) error { *p(c) = v.f; return nil }}
	}
	unused := func(name string, kind yamlKind, why string) yamlKey {
		return yamlKey{name: name, kind: kind, unused: why}
	}
	numbers := func(kind yamlKind, names ...string) []yamlKey {
		keys := make([]yamlKey, len(names))
		for i, n := range names {
			keys[i] = yamlKey{name: n, kind: kind}
		}
		return keys
	}

	return []yamlKey{
		{name: "model_configs", kind: yamlModels},
		{name: "user_templates", kind: yamlSection, keys: templates},
		{name: "generation_timing", kind: yamlSection, unused: notUsedRef,
			keys: numbers(yamlNumber, "none", "fast", "realistic")},
		{name: "qos_profiles", kind: yamlSection, keys: qos},
		{name: "qos_distribution", kind: yamlSection, keys: []yamlKey{
			numKey("interactive_probability", func(c *Config) *float64 { return &c.QoSDistribution.InteractiveProbability }),
			numKey("responsive_threshold", func(c *Config) *float64 { return &c.QoSDistribution.ResponsiveThreshold }),
		}},
		{name: "eviction", kind: yamlSection, keys: []yamlKey{
			intKey("max_recursion_depth", func(c *Config) *int { return &c.Eviction.MaxRecursionDepth }),
			numKey("target_usage_ratio", func(c *Config) *float64 { return &c.Eviction.TargetUsageRatio }),
			numKey("large_entry_limit_ratio", func(c *Config) *float64 { return &c.Eviction.LargeEntryLimitRatio }),
			intKey("max_evictions_hard_cap", func(c *Config) *int { return &c.Eviction.MaxEvictionsHardCap }),
			intKey("max_evictions_min", func(c *Config) *int { return &c.Eviction.MaxEvictionsMin }),
		}},
		{name: "gpu_backend", kind: yamlSection, unused: notUsedRealIO, keys: []yamlKey{
			{name: "memory_fraction", kind: yamlNumber},
			{name: "max_eviction_attempts", kind: yamlInt},
			{name: "free_memory_threshold", kind: yamlNumber},
		}},
		{name: "prefix_cache", kind: yamlSection, keys: []yamlKey{
			unused("min_prefix_length", yamlInt, notUsedRef),
			unused("max_prefix_entries", yamlInt, notUsedRef),
			numKey("system_prompt_hit_probability", func(c *Config) *float64 { return &c.SystemPromptHitProbability }),
		}},
		{name: "rag", kind: yamlSection, keys: []yamlKey{
			intKey("chunk_size_tokens", func(c *Config) *int { return &c.RAG.ChunkSizeTokens }),
			intKey("top_k_chunks", func(c *Config) *int { return &c.RAG.TopKChunks }),
			{name: "max_chunk_bytes", kind: yamlInt, set: func(c *Config, v yamlValue) error { c.RAG.MaxChunkBytes = int64(v.i); return nil }},
			numKey("request_probability", func(c *Config) *float64 { return &c.RAG.RequestProbability }),
			// section handles an unknown distribution: the reference
			// warns and uses zipfian, so it is a note, not an error.
			{name: "retrieval_distribution", kind: yamlString, set: func(c *Config, v yamlValue) error { c.RAG.Distribution = v.s; return nil }},
			intKey("max_documents", func(c *Config) *int { return &c.RAG.MaxDocuments }),
			intKey("large_model_doc_tokens_min", func(c *Config) *int { return &c.RAG.LargeDocTokensMin }),
			intKey("large_model_doc_tokens_max", func(c *Config) *int { return &c.RAG.LargeDocTokensMax }),
			intKey("small_model_doc_tokens_min", func(c *Config) *int { return &c.RAG.SmallDocTokensMin }),
			intKey("small_model_doc_tokens_max", func(c *Config) *int { return &c.RAG.SmallDocTokensMax }),
		}},
		{name: "conversation", kind: yamlSection, keys: []yamlKey{
			// The reference forgets the least recently used conversation
			// state beyond this many.
			intKey("max_conversations", func(c *Config) *int { return &c.ConversationStates }),
			intKey("max_turns_per_conv", func(c *Config) *int { return &c.MaxTurns }),
			// The reference hard-codes a 20 % end probability.
			unused("end_conversation_probability", yamlNumber, notUsedRef),
		}},
		{name: "autoscaler", kind: yamlSection, unused: notUsedScaler, keys: []yamlKey{
			{name: "min_users", kind: yamlInt},
			{name: "max_users", kind: yamlInt},
			{name: "scale_up_factor", kind: yamlNumber},
			{name: "scale_down_factor", kind: yamlNumber},
			{name: "consecutive_samples_required", kind: yamlInt},
		}},
		{name: "decode", kind: yamlSection, keys: []yamlKey{
			intKey("batch_size", func(c *Config) *int { return &c.DecodeBatchSize }),
		}},
		{name: "sharegpt", kind: yamlSection, unused: notUsedRef,
			keys: numbers(yamlInt, "max_context_tokens", "max_generation_tokens", "chars_per_token_estimate")},
		{name: "saturation_detection", kind: yamlSection, unused: notUsedRealIO, keys: []yamlKey{
			{name: "read_latency_p95_threshold_ms", kind: yamlNumber},
			{name: "write_latency_p95_threshold_ms", kind: yamlNumber},
			{name: "queue_depth_threshold", kind: yamlInt},
			{name: "history_window_size", kind: yamlInt},
		}},
		{name: "validation_limits", kind: yamlSection, unused: notUsedRef,
			keys: numbers(yamlInt, "max_users", "max_duration_seconds", "max_gpu_memory_gb", "max_cpu_memory_gb")},
	}
}

// modelSchema is the keys of a model_configs entry, applied to the model
// key in c.Models.
func modelSchema(key string) []yamlKey {
	field := func(name string, kind yamlKind, apply func(m *Model, v yamlValue)) yamlKey {
		return yamlKey{name: name, kind: kind, set: func(c *Config, v yamlValue) error {
			m := c.Models[key]
			apply(&m, v)
			c.Models[key] = m
			return nil
		}}
	}
	return []yamlKey{
		field("name", yamlString, func(m *Model, v yamlValue) { m.Name = v.s }),
		field("num_layers", yamlInt, func(m *Model, v yamlValue) { m.NumLayers = v.i }),
		field("hidden_dim", yamlInt, func(m *Model, v yamlValue) { m.HiddenDim = v.i }),
		field("num_heads", yamlInt, func(m *Model, v yamlValue) { m.NumHeads = v.i }),
		field("kv_heads", yamlInt, func(m *Model, v yamlValue) { m.KVHeads = v.i }),
		field("dtype", yamlString, func(m *Model, v yamlValue) { m.DType = v.s }),
		field("kv_dim_per_head", yamlInt, func(m *Model, v yamlValue) { m.KVDimPerHead = v.i }),
		field("attention_type", yamlString, func(m *Model, v yamlValue) { m.AttentionType = v.s }),
		field("kv_lora_rank", yamlInt, func(m *Model, v yamlValue) { m.KVLoraRank = v.i }),
		field("qk_rope_head_dim", yamlInt, func(m *Model, v yamlValue) { m.QKRopeHeadDim = v.i }),
	}
}

// yamlTemplate returns the user template named name in c, adding it when
// c has none by that name.
func yamlTemplate(c *Config, name string) *UserTemplate {
	for i := range c.UserTemplates {
		if c.UserTemplates[i].Name == name {
			return &c.UserTemplates[i]
		}
	}
	c.UserTemplates = append(c.UserTemplates, UserTemplate{Name: name})
	return &c.UserTemplates[len(c.UserTemplates)-1]
}

// millis converts a number of milliseconds to a duration.
func millis(ms float64) (time.Duration, error) {
	if math.Abs(ms) > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, fmt.Errorf("%s: out of range (milliseconds)", formatNumber(ms))
	}
	return time.Duration(math.Round(ms * float64(time.Millisecond))), nil
}

// yamlLoader walks a document, applying values and collecting problems.
type yamlLoader struct {
	name  string
	errs  []error
	notes []string
	// work counts mapping entries visited, aliases and merges included, so
	// that a document of nested aliases cannot make the walk exponential.
	work int
}

// maxYAMLWork bounds yamlLoader.work: far above any real config file.
const maxYAMLWork = 1 << 16

func (l *yamlLoader) fail(n *yaml.Node, key string, err error) {
	e := &YAMLError{File: l.name, Key: key, Err: err}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	l.errs = append(l.errs, e)
}

func (l *yamlLoader) failf(n *yaml.Node, key, format string, args ...any) {
	l.fail(n, key, fmt.Errorf(format, args...))
}

func (l *yamlLoader) note(key, why string) {
	l.notes = append(l.notes, l.name+" "+key+": "+why)
}

// deref follows aliases; it returns nil (after reporting) for a broken one.
func (l *yamlLoader) deref(n *yaml.Node, key string) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 || n.Alias == nil {
			l.failf(n, key, "unresolvable alias")
			return nil
		}
		n = n.Alias
	}
	return n
}

// yamlPair is a key and its value in a mapping.
type yamlPair struct {
	key   string
	kn, v *yaml.Node
}

// pairs returns the entries of mapping n in order, with merge keys (<<)
// expanded (keys given explicitly win, as in PyYAML), reporting duplicate
// and non-scalar keys.
func (l *yamlLoader) pairs(n *yaml.Node, path string, depth int) []yamlPair {
	var out, merged []yamlPair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if l.work++; l.work == maxYAMLWork {
			l.failf(kn, path, "too many keys through aliases and merges (more than %d)", maxYAMLWork)
		}
		if l.work >= maxYAMLWork {
			return nil
		}
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merged = append(merged, l.merge(vn, path, depth)...)
			continue
		}
		if kn.Kind != yaml.ScalarNode {
			l.failf(kn, path, "keys must be strings")
			continue
		}
		child := joinKey(path, kn.Value)
		if first, ok := seen[kn.Value]; ok {
			l.failf(kn, child, "duplicate key (first at line %d)", first.Line)
			continue
		}
		seen[kn.Value] = kn
		out = append(out, yamlPair{key: kn.Value, kn: kn, v: vn})
	}
	for _, p := range merged {
		if _, ok := seen[p.key]; !ok {
			seen[p.key] = p.kn
			out = append(out, p)
		}
	}
	return out
}

// merge returns the pairs a merge key's value brings: a mapping, or a
// list of mappings (earlier ones win).
func (l *yamlLoader) merge(v *yaml.Node, path string, depth int) []yamlPair {
	if depth > 10 {
		l.failf(v, path, "merge keys nested too deeply")
		return nil
	}
	v = l.deref(v, path)
	if v == nil {
		return nil
	}
	switch v.Kind {
	case yaml.MappingNode:
		return l.pairs(v, path, depth+1)
	case yaml.SequenceNode:
		var out []yamlPair
		seen := map[string]bool{}
		for _, item := range v.Content {
			item = l.deref(item, path)
			if item == nil {
				continue
			}
			if item.Kind != yaml.MappingNode {
				l.failf(item, path, "a merge key (<<) must refer to mappings")
				continue
			}
			for _, p := range l.pairs(item, path, depth+1) {
				if !seen[p.key] {
					seen[p.key] = true
					out = append(out, p)
				}
			}
		}
		return out
	}
	l.failf(v, path, "a merge key (<<) must refer to a mapping")
	return nil
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// section checks mapping n against keys and applies its values to c;
// quiet suppresses notes (the section's own note covers its keys).
func (l *yamlLoader) section(c *Config, n *yaml.Node, path string, keys []yamlKey, quiet bool) {
	n = l.deref(n, path)
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		if path == "" {
			l.failf(n, path, "the document must be a mapping, got %s", describe(n))
		} else {
			l.failf(n, path, "must be a mapping, got %s", describe(n))
		}
		return
	}
	for _, p := range l.pairs(n, path, 0) {
		child := joinKey(path, p.key)
		i := slices.IndexFunc(keys, func(k yamlKey) bool { return k.name == p.key })
		if i < 0 {
			names := make([]string, len(keys))
			for j, k := range keys {
				names[j] = k.name
			}
			l.failf(p.kn, child, "unknown key (want one of %s)", strings.Join(names, ", "))
			continue
		}
		k := keys[i]
		switch k.kind {
		case yamlSection:
			if k.unused != "" && !quiet {
				l.note(child, k.unused)
			}
			l.section(c, p.v, child, k.keys, quiet || k.unused != "")
		case yamlModels:
			l.models(c, p.v, child)
		default:
			v, ok := l.value(p.v, child, k.kind)
			if !ok {
				continue
			}
			switch {
			case child == "rag.retrieval_distribution" && !slices.Contains([]string{"zipfian", "uniform", "random"}, v.s):
				c.RAG.Distribution = "zipfian"
				l.note(child, fmt.Sprintf("%s: unknown, zipfian used (as in the reference)", parsemsg.Arg(v.s)))
			case k.set != nil:
				if err := k.set(c, v); err != nil {
					l.fail(p.v, child, err)
				}
			case !quiet && k.unused != "":
				l.note(child, k.unused)
			}
		}
	}
}

// models merges model_configs entries over c.Models.
func (l *yamlLoader) models(c *Config, n *yaml.Node, path string) {
	n = l.deref(n, path)
	if n == nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		l.failf(n, path, "must be a mapping of model keys, got %s", describe(n))
		return
	}
	for _, p := range l.pairs(n, path, 0) {
		child := joinKey(path, p.key)
		v := l.deref(p.v, child)
		if v == nil {
			continue
		}
		if _, ok := c.Models[p.key]; !ok {
			// The reference's defaults for a model config.yaml adds.
			c.Models[p.key] = Model{Key: p.key, Name: p.key, NumLayers: 32, HiddenDim: 4096, NumHeads: 32, KVHeads: 8, DType: "float16", AttentionType: "mha"}
		}
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
			continue // an empty entry: the reference keeps the defaults
		}
		l.section(c, v, child, modelSchema(p.key), true)
	}
}

// value checks that n has the type kind asks for and returns it.
func (l *yamlLoader) value(n *yaml.Node, key string, kind yamlKind) (yamlValue, bool) {
	n = l.deref(n, key)
	if n == nil {
		return yamlValue{}, false
	}
	var v yamlValue
	switch kind {
	case yamlInt:
		i, err := l.integer(n)
		if err != nil {
			l.fail(n, key, err)
			return v, false
		}
		v.i = i
	case yamlNumber:
		f, err := l.number(n)
		if err != nil {
			l.fail(n, key, err)
			return v, false
		}
		v.f = f
	case yamlString:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			l.failf(n, key, "must be a string, got %s", describe(n))
			return v, false
		}
		v.s = n.Value
	case yamlIntRange, yamlNumberRange:
		if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
			l.failf(n, key, "must be %s, got %s", kind, describe(n))
			return v, false
		}
		for i, item := range n.Content {
			item = l.deref(item, key)
			if item == nil {
				return v, false
			}
			var err error
			if kind == yamlIntRange {
				v.ri[i], err = l.integer(item)
			} else {
				v.rf[i], err = l.number(item)
			}
			if err != nil {
				l.fail(item, fmt.Sprintf("%s[%d]", key, i), err)
				return v, false
			}
		}
	}
	return v, true
}

func (l *yamlLoader) integer(n *yaml.Node) (int, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return 0, fmt.Errorf("must be an integer, got %s", describe(n))
	}
	var i int64
	if err := n.Decode(&i); err != nil || int64(int(i)) != i {
		return 0, fmt.Errorf("%s: integer out of range", parsemsg.Arg(n.Value))
	}
	return int(i), nil
}

func (l *yamlLoader) number(n *yaml.Node) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		return 0, fmt.Errorf("must be a number, got %s", describe(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		return 0, fmt.Errorf("%s: not a number", parsemsg.Arg(n.Value))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: must be a finite number", parsemsg.Arg(n.Value))
	}
	return f, nil
}

// describe names a node's type and value for messages: "float 10.5",
// "string \"x\"", "null", "a list", "a mapping".
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return fmt.Sprintf("a list of %d", len(n.Content))
	case yaml.ScalarNode:
		switch t := n.ShortTag(); t {
		case "!!null":
			return "null"
		case "!!str":
			return "string " + strconv.Quote(parsemsg.Shorten(n.Value))
		case "!!int", "!!float", "!!bool":
			return strings.TrimPrefix(t, "!!") + " " + parsemsg.Shorten(n.Value)
		default:
			return t + " " + strconv.Quote(parsemsg.Shorten(n.Value))
		}
	}
	return "an unsupported node"
}
