// Package clitest holds checks of the tools' command lines and documents
// shared by their tests.
package clitest

import (
	"encoding/json"
	"strings"
	"testing"
)

// CheckDefaultsOnce fails t when a line of help's Options section shows a
// default twice, as a usage string that names its default beside pflag's
// own "(default ...)" does.
func CheckDefaultsOnce(t testing.TB, help string) {
	t.Helper()
	_, opts, ok := strings.Cut(help, "\nOptions:\n")
	if !ok {
		t.Errorf("help has no Options section:\n%s", help)
		return
	}
	for line := range strings.Lines(opts) {
		if strings.Count(line, "(default") > 1 {
			t.Errorf("a default shown twice: %s", strings.TrimSpace(line))
		}
	}
}

// dataKeyed are the objects of kvbench's documents whose keys are data
// (tier names, model names, group labels), not field names.
var dataKeyed = map[string]bool{"models": true, "tier_capacity_bytes": true, "peak_live_bytes": true,
	"moves": true, "medians": true, "ratios": true, "win_rate": true,
	"not_measured": true} // not_measured is keyed by the figures' paths

// NonSnakeKeys returns the paths of the object keys of the JSON document raw
// that are not lower_snake_case, the convention of every document kvbench
// writes; the keys of objects that map data to values are not checked.
func NonSnakeKeys(t testing.TB, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var bad []string
	var walk func(path, name string, v any)
	walk = func(path, name string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if !dataKeyed[name] && !isSnake(k) {
					bad = append(bad, path+"/"+k)
				}
				walk(path+"/"+k, k, e)
			}
		case []any:
			for _, e := range x {
				walk(path+"[]", name, e)
			}
		}
	}
	walk("", "", v)
	return bad
}

func isSnake(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
