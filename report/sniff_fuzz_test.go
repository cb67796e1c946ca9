package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzSniffFormat: for a JSON object whose member names differ even
// ignoring case (so that encoding/json reads each once), the format
// SniffFormat finds is the one a full decode finds, a string "format"
// member or ""; for anything that is not an object it is ""; and it is
// the same read a byte at a time.
func FuzzSniffFormat(f *testing.F) {
	for _, s := range []string{
		`{"format":"kvbench-search","format_version":2}`, `{"format_version":2,"format":"kvbench-result"}`, `{"a":{"format":"x"},"format":"y"}`,
		`{"format":3}`, `{"format":null}`, `{"\u0066ormat":"esc"}`, `{}`, `[]`, `"format"`, ``, `{"format":"a"`, `{"a":[1,{"b":2}],"format":"z"}`,
		`{"Format":"kvbench-search"}`, ` {"format" : "spaced"} `, `{"format":"a\u0000b"}`, `{"format":"a","format":"b"}`, `{"format":"a","FORMAT":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := SniffFormat(bytes.NewReader(raw))
		if again := SniffFormat(iotest.OneByteReader(bytes.NewReader(raw))); again != got {
			t.Fatalf("SniffFormat(%q) = %q, a byte at a time %q", raw, got, again)
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			if got != "" {
				t.Fatalf("SniffFormat(%q) = %q from what is not an object", raw, got)
			}
			return
		}
		if !json.Valid(raw) {
			return // it reads no further than the member, so may find it
		}
		// The object's member names, as written (a map would fold
		// duplicates into one).
		keys := json.NewDecoder(bytes.NewReader(raw))
		if _, err := keys.Token(); err != nil {
			t.Fatal(err)
		}
		folded := map[string]bool{}
		for keys.More() {
			k, err := keys.Token()
			if err != nil {
				t.Fatalf("%q: valid, but %v", raw, err)
			}
			name := strings.ToLower(k.(string))
			if folded[name] {
				// Two members of one name: SniffFormat takes the first
				// "format", encoding/json the last (and ignores case).
				return
			}
			folded[name] = true
			var skip json.RawMessage
			if err := keys.Decode(&skip); err != nil {
				t.Fatalf("%q: valid, but %v", raw, err)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var all map[string]any
		_ = dec.Decode(&all)
		want, _ := all["format"].(string)
		if got != want {
			t.Fatalf("SniffFormat(%q) = %q, a decode finds %q", raw, got, want)
		}
	})
}
