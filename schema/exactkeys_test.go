package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/schema"
)

type keysInner struct {
	X int `json:"x"`
}

type keysBase struct {
	Base   int `json:"base"`
	Shadow int `json:"shadow"`
}

// keysDoc has a field of each kind CheckKeys walks.
type keysDoc struct {
	keysBase
	Name    string                 `json:"name"`
	Shadow  string                 `json:"shadow"` // hides keysBase's
	Sub     *struct{ P95 float64 } `json:"sub"`    // untagged: its JSON name is "P95"
	Inner   []keysInner            `json:"inner"`
	Tags    map[string]keysInner   `json:"tags"`
	Raw     json.RawMessage        `json:"raw"`
	Any     any                    `json:"any"`
	When    time.Time              `json:"when"`
	Skipped int                    `json:"-"`
	private int
}

func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		doc        string
		path, want string // "" for no error; want "" for a repeated key
	}{
		{`{"name":"a","inner":[{"x":1}],"tags":{"A":{"x":2},"a":{"x":3}},"base":1,"shadow":"s"}`, "", ""},
		{`{"unknown":1,"Unknown":2,"future":{"a":[1,{"b":2}]}}`, "", ""}, // not the schema's: ignored
		{`{"sub":{"P95":1}}`, "", ""},
		{`[1, "x", {"a": 1}]`, "", ""},
		{`{"Name":"a"}`, "Name", "name"},
		{`{"NAME":"a"}`, "NAME", "name"},
		{`{"name":"a","Name":"b"}`, "Name", "name"},
		{`{"\u004eame":"a"}`, "Name", "name"},
		{`{"base":1,"BASE":2}`, "BASE", "base"}, // promoted from the embedded struct
		{`{"Shadow":"s"}`, "Shadow", "shadow"},  // the outer field's name
		{`{"sub":{"p95":1}}`, "sub.p95", "P95"}, // an untagged field's name is its Go name
		{`{"inner":[{"x":1},{"X":2}]}`, "inner[1].X", "x"},
		{`{"tags":{"k":{"X":2}}}`, "tags.k.X", "x"}, // a map's values
		{`{"name":"a","name":"b"}`, "name", ""},
		{`{"tags":{"k":{},"k":{}}}`, "tags.k", ""},
		{`{"raw":{"a":1,"a":2}}`, "raw.a", ""}, // repeated keys anywhere
		{`{"any":[{"a":1,"a":2}]}`, "any[0].a", ""},
		{`{"x":{"a":1,"\u0061":2}}`, "x.a", ""},             // the same key, escaped
		{"{\"x\":{\"\xff\":1,\"\xfe\":2}}", "x.\ufffd", ""}, // both read as U+FFFD
		{`{"Skipped":1,"skipped":2,"private":3}`, "", ""},   // no field takes them
	} {
		err := schema.CheckKeys([]byte(tc.doc), &keysDoc{})
		if tc.path == "" {
			if err != nil {
				t.Errorf("CheckKeys(%s) = %v, want nil", tc.doc, err)
			}
			continue
		}
		var ke *schema.KeyError
		if !errors.As(err, &ke) || ke.Path != tc.path || ke.Want != tc.want {
			t.Errorf("CheckKeys(%s) = %v, want key %q refused (want %q)", tc.doc, err, tc.path, tc.want)
			continue
		}
		if q := tc.doc[ke.Offset]; q != '"' {
			t.Errorf("CheckKeys(%s): offset %d is %q, not the key's opening quote", tc.doc, ke.Offset, q)
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%q", tc.path)) || strings.Contains(msg, "\n") {
			t.Errorf("CheckKeys(%s): error %q does not name the key on one line", tc.doc, msg)
		}
	}
	// A large object: its keys are kept in a set past the first few.
	var big strings.Builder
	big.WriteString(`{"any":{`)
	for i := range 40 {
		fmt.Fprintf(&big, `"k%d":%d,`, i, i)
	}
	for _, tc := range []struct{ last, path string }{{`"k40":0}}`, ""}, {`"k3":0}}`, "any.k3"}, {`"k39":0}}`, "any.k39"}} {
		err := schema.CheckKeys([]byte(big.String()+tc.last), &keysDoc{})
		var ke *schema.KeyError
		if tc.path == "" && err != nil || tc.path != "" && (!errors.As(err, &ke) || ke.Path != tc.path) {
			t.Errorf("40 keys, then %s: %v, want %q refused", tc.last, err, tc.path)
		}
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `[1,`, `"abc`, `{"a":1} x`, `{1:2}`} {
		if err := schema.CheckKeys([]byte(bad), &keysDoc{}); err == nil || errors.As(err, new(*schema.KeyError)) {
			t.Errorf("CheckKeys(%q) = %v, want an error that the input is not JSON", bad, err)
		}
	}
}

// keysSchema is keysDoc's shape for refKeys, written out by hand: each
// struct's field names, with the shape of each field's value (nil: any
// value, checked for repeated keys only); mapOf marks a map.
type keysSchema struct {
	fields map[string]*keysSchema
	mapOf  *keysSchema
	elem   *keysSchema
}

var keysDocSchema = func() *keysSchema {
	inner := &keysSchema{fields: map[string]*keysSchema{"x": nil}}
	return &keysSchema{fields: map[string]*keysSchema{
		"base": nil, "shadow": nil, "name": nil, "raw": nil, "any": nil, "when": nil,
		"sub":   {fields: map[string]*keysSchema{"P95": nil}},
		"inner": {elem: inner},
		"tags":  {mapOf: inner},
	}}
}()

// refKeys is CheckKeys written with encoding/json's tokenizer, for
// FuzzCheckKeys: the path and wanted name of the first key refused (found).
func refKeys(dec *json.Decoder, s *keysSchema, path string) (found bool, bad, want string, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, "", "", err
	}
	switch tok {
	case json.Delim('['):
		var elem *keysSchema
		if s != nil {
			elem = s.elem
		}
		for i := 0; dec.More(); i++ {
			if found, bad, want, err := refKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i)); found || err != nil {
				return found, bad, want, err
			}
		}
		_, err = dec.Token()
		return false, "", "", err
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return false, "", "", err
			}
			key := k.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return true, at, "", nil
			}
			seen[key] = true
			var next *keysSchema
			if s != nil && s.fields != nil {
				sub, ok := s.fields[key]
				if !ok {
					for name := range s.fields {
						if strings.EqualFold(name, key) {
							return true, at, name, nil
						}
					}
				}
				next = sub
			} else if s != nil {
				next = s.mapOf
			}
			if found, bad, want, err := refKeys(dec, next, at); found || err != nil {
				return found, bad, want, err
			}
		}
		_, err = dec.Token()
		return false, "", "", err
	}
	return false, "", "", nil
}

// FuzzCheckKeys: on any input CheckKeys returns; on one JSON value it
// refuses the first key refKeys refuses, and no other.
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{
		`{"name":"a","inner":[{"x":1}],"tags":{"A":{"x":2}}}`, `{"Name":1}`, `{"name":1,"name":2}`, `{"sub":{"p95":1}}`,
		`{"inner":[{"x":1},{"X":2}]}`, `{"raw":{"a":1,"a":2}}`, `{"tags":{"k":{"X":1}}}`, `{"\u004eame":"a"}`, "{\"\xff\":1,\"\xfe\":2}",
		`[]`, `{}`, `null`, `{"a":[1,2,{"b":{"c":[]}}]}`, ` {"shadow" : "x" } `, `{"a":1}{"b":2}`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := schema.CheckKeys(raw, &keysDoc{})
		if !json.Valid(raw) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		found, bad, want, rerr := refKeys(dec, keysDocSchema, "")
		if rerr != nil && rerr != io.EOF {
			t.Fatalf("refKeys(%q): %v", raw, rerr)
		}
		var ke *schema.KeyError
		switch {
		case !found && err != nil:
			t.Fatalf("CheckKeys(%q) = %v, want nil", raw, err)
		case found && (!errors.As(err, &ke) || ke.Path != bad || ke.Want != want):
			t.Fatalf("CheckKeys(%q) = %v, want key %q refused (want %q)", raw, err, bad, want)
		}
	})
}
