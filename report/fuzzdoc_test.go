package report

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// Fuzz targets whose inputs are whole documents of kilobytes (a kvreplay
// result is 13 to 40 kB) fuzz them through a small input instead: a
// document taken whole from testdata (a base), changed by a patch. Given
// the whole document, the fuzzer made each input that found new coverage
// a document of kilobytes, then minimized it a byte at a time for up to
// -fuzzminimizetime (60 s) each, counting none of those executions: go
// test -fuzz FuzzAggregateDocument -fuzztime 15s made 13 executions in
// 15 s, FuzzDecodeStream 24 in 10 s.

// fuzzBase is a whole document a fuzz target changes: its bytes, and its
// JSON decoded (numbers kept as written).
type fuzzBase struct {
	raw  []byte
	tree any
}

// fuzzBases reads the documents at paths as fuzz bases.
func fuzzBases(tb testing.TB, paths ...string) []fuzzBase {
	tb.Helper()
	var out []fuzzBase
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var tree any
		if err := d.Decode(&tree); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		out = append(out, fuzzBase{raw: raw, tree: tree})
	}
	return out
}

// fuzzDoc is the document of a fuzz input (base, at, patch): base, modulo
// one more than the bases, picks a base changed by patch (with), or, the
// last value, says patch is the whole document (a stream of several too).
func fuzzDoc(bases []fuzzBase, base uint8, at uint32, patch []byte) []byte {
	if b := int(base) % (len(bases) + 1); b < len(bases) {
		return bases[b].with(at, patch)
	}
	return patch
}

// with is the document changed by patch: merged into it as RFC 7386 says
// when patch is a JSON object ({"errors": {"count": 2}} reaches a nested
// member, {"cells": null} removes one); else, at's low bit clear, patch
// is inserted into its bytes at at/2 (modulo their length: a document
// damaged), and set, its bytes are cut there and patch appended (a
// document cut short, or ending in garbage). {} is the document as it is.
func (b fuzzBase) with(at uint32, patch []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(patch))
	d.UseNumber()
	var p map[string]any
	if d.Decode(&p) == nil && p != nil && !d.More() {
		if len(p) == 0 {
			return b.raw
		}
		if out, err := json.Marshal(mergePatch(b.tree, p)); err == nil {
			return out
		}
	}
	i := int(at/2) % (len(b.raw) + 1)
	if at&1 == 1 {
		return slices.Concat(b.raw[:i], patch)
	}
	return slices.Concat(b.raw[:i], patch, b.raw[i:])
}

// cutAt is fuzzBase.with's at that cuts a document at byte i.
func cutAt(i int) uint32 { return uint32(i)<<1 | 1 }

// mergePatch is target with patch merged in as RFC 7386 says (a null
// member removes one, an object merges into one, anything else replaces
// it), target left as it was: only the objects on the patch's paths are
// copied.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, _ := target.(map[string]any)
	out := make(map[string]any, len(t)+len(p))
	maps.Copy(out, t)
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// TestFuzzDoc: the fuzz inputs' documents are what they say: RFC 7386's
// examples (its Appendix A) merge as it gives them, the target untouched;
// a patch that is not an object is inserted, or appended to a document
// cut; the last base value is the patch itself.
func TestFuzzDoc(t *testing.T) {
	for _, tt := range []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"n":1.50}`, `{"m":2}`, `{"m":2,"n":1.50}`},
	} {
		var target, patch any
		for _, x := range []struct {
			s string
			v *any
		}{{tt.target, &target}, {tt.patch, &patch}} {
			d := json.NewDecoder(bytes.NewReader([]byte(x.s)))
			d.UseNumber()
			if err := d.Decode(x.v); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := json.Marshal(target)
		got, err := json.Marshal(mergePatch(target, patch))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s merged with %s: %s %v, want %s", tt.target, tt.patch, got, err, tt.want)
		}
		if after, _ := json.Marshal(target); !bytes.Equal(before, after) {
			t.Errorf("%s merged with %s: the target became %s", tt.target, tt.patch, after)
		}
	}
	b := fuzzBase{raw: []byte(`{"a":1}`), tree: map[string]any{"a": json.Number("1")}}
	bases := []fuzzBase{b}
	for _, tt := range []struct {
		base  uint8
		at    uint32
		patch string
		want  string
	}{
		{0, 0, `{}`, `{"a":1}`},
		{0, 0, `{"b":2}`, `{"a":1,"b":2}`},
		{2, 0, `{"b":2}`, `{"a":1,"b":2}`}, // base modulo 2
		{0, 2 * 4, `x`, `{"a"x:1}`},
		{0, cutAt(4), `x`, `{"a"x`},
		{0, cutAt(4), ``, `{"a"`},
		{0, 2 * 100, `]`, `{"a"]:1}`},             // at/2 modulo the length + 1: 100 % 8 = 4
		{0, 2 * 7, ` `, `{"a":1} `},               // at the end
		{1, cutAt(3), `[1]`, `[1]`},               // the patch itself
		{3, 0, `{"b":2}`, `{"b":2}`},              // the patch itself
		{0, 0, `{"b":2} {}`, `{"b":2} {}{"a":1}`}, // two values: not an object, inserted
	} {
		if got := fuzzDoc(bases, tt.base, tt.at, []byte(tt.patch)); string(got) != tt.want {
			t.Errorf("base %d at %d patch %q: %q, want %q", tt.base, tt.at, tt.patch, got, tt.want)
		}
	}
}
