package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/iotest"
)

// FuzzSniffFormat: for a JSON object, the format SniffFormat finds is
// the one a full decode (into a struct, as Decode and LoadSearches
// decode) finds: the last member named "format" in any case, when it is
// a string, else ""; a member named twice is no exception (SniffFormat
// took the first, the decode the last: {"format":"a","format":"b"}
// sniffed as a, decoded as b). For anything that is not an object it is
// ""; and it is the same read a byte at a time.
func FuzzSniffFormat(f *testing.F) {
	for _, s := range []string{
		`{"format":"kvbench-search","format_version":2}`, `{"format_version":2,"format":"kvbench-result"}`, `{"a":{"format":"x"},"format":"y"}`,
		`{"format":3}`, `{"format":null}`, `{"\u0066ormat":"esc"}`, `{}`, `[]`, `"format"`, ``, `{"format":"a"`, `{"a":[1,{"b":2}],"format":"z"}`,
		`{"Format":"kvbench-search"}`, ` {"format" : "spaced"} `, `{"format":"a\u0000b"}`, `{"format":"a","format":"b"}`, `{"format":"a","FORMAT":"b"}`,
		`{"format":"a","format":null}`, `{"FoRmAt":"kvbench-search","format_version":2,"format":"kvbench-result"}`,
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
		// The object alone, as a decoder reads the first of a stream.
		var obj json.RawMessage
		if json.NewDecoder(bytes.NewReader(raw)).Decode(&obj) != nil {
			return // cut short or not JSON: it reads no further than the members it finds
		}
		// As the documents' own Format string decodes: a null member
		// leaves it as it was.
		var probe struct {
			Format string `json:"format"`
		}
		if err := json.Unmarshal(obj, &probe); err != nil {
			// A "format" that is not a string: the decode refuses
			// the document; SniffFormat finds none unless the last is
			// one.
			return
		}
		if want := probe.Format; got != want {
			t.Fatalf("SniffFormat(%q) = %q, a decode finds %q", raw, got, want)
		}
	})
}
