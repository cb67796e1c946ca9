package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// SnakeCaseKeys returns the JSON document raw with every object key that is
// a Go identifier in mixed case (TierMap, GPUMemGB, NumGPUs, QoS) renamed in
// lower_snake_case (tier_map, gpu_mem_gb, num_gpus, qos), the convention of
// result documents (format version 2). Keys that are data, not field names
// (tier names such as Tier-0, model names such as llama3.1-8b, keys already
// in lower case), are kept. Numbers keep their text. raw is returned as it
// is when it is empty or not valid JSON.
func SnakeCaseKeys(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	out, err := json.Marshal(snakeValue(v))
	if err != nil {
		return raw
	}
	return out
}

func snakeValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[SnakeCase(k)] = snakeValue(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = snakeValue(x[i])
		}
	}
	return v
}

// mixedAcronyms are the words of field names that the word split below
// would cut apart.
var mixedAcronyms = strings.NewReplacer("QoS", "Qos", "GPUs", "Gpus", "CPUs", "Cpus")

// SnakeCase renames a Go identifier in mixed case in lower_snake_case:
// a word starts at an upper-case letter after a lower-case letter or a
// digit, or at the last upper-case letter of a run followed by a lower-case
// one (GPUMemGB: gpu_mem_gb; TargetP95: target_p95). Other strings, those
// not starting with an upper-case letter or holding anything but letters
// and digits, are returned unchanged.
func SnakeCase(s string) string {
	if s == "" || !unicode.IsUpper(rune(s[0])) || strings.ContainsFunc(s, func(r rune) bool {
		return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		return s
	}
	r := []rune(mixedAcronyms.Replace(s))
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			if unicode.IsLower(prev) || unicode.IsDigit(prev) ||
				unicode.IsUpper(prev) && i+1 < len(r) && unicode.IsLower(r[i+1]) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
