package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// KeyError is an object key of a JSON document that CheckKeys refuses:
// one that names a field of the document's schema only in another case
// (Want is the schema's name), or one given twice in its object (Want is
// empty).
type KeyError struct {
	// Offset is the byte offset of the key's opening quote in the
	// document.
	Offset int64
	// Path is where the key is, in the document's names: "counts.Rows",
	// "tiers[2].read_ops".
	Path string
	// Key is the key as the document spells it; Want the schema's name
	// it stands for.
	Key, Want string
}

// Reason says what is wrong with the key, without its path.
func (e *KeyError) Reason() string {
	if e.Want != "" {
		return fmt.Sprintf("want %q: keys are matched exactly, in their case, as Python reads them", e.Want)
	}
	return "given twice in one object: want each key once"
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %q: %s", e.Path, e.Reason()) }

// CheckKeys refuses the keys of the JSON document raw that a decode into
// v (a pointer to the document's type, as json.Unmarshal takes) would
// take by encoding/json's leniency: a key that matches one of a struct's
// field names only when case is ignored ("Requests_Completed" for
// requests_completed), which encoding/json decodes into the field and
// Python (kv-cache.py, MLPerf's tools) does not, and a key given twice in
// one object, of which encoding/json keeps the last without a word. Keys
// that name no field are not refused: a reader ignores what it does not
// know. Values whose type decodes itself (json.Unmarshaler,
// encoding.TextUnmarshaler, json.RawMessage, interfaces) are checked for
// repeated keys alone. The first key refused is returned as a *KeyError;
// raw that is not JSON gives an error that is not one (decode it first).
func CheckKeys(raw []byte, v any) error {
	s := keyScanner{data: raw}
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s.space()
	if err := s.value(t); err != nil {
		return err
	}
	if s.space(); s.pos != len(s.data) {
		return s.bad()
	}
	return nil
}

// errNotJSON is CheckKeys' error for raw that is not one JSON value.
var errNotJSON = errors.New("schema: not a JSON value")

// keyScanner walks a JSON document beside the Go type it decodes into.
type keyScanner struct {
	data []byte
	pos  int
	// path holds the keys and indexes down to the value being read,
	// turned into text only for an error.
	path []pathStep
}

// structFields caches each struct type's JSON names and their types
// (fieldsOf), for the process: a type's fields never change, and a reader
// that checks each line of a file (reqtrace's Mooncake reader) would
// otherwise walk its type again for every line.
var structFields sync.Map // reflect.Type -> map[string]reflect.Type

type pathStep struct {
	key   []byte
	index int // -1 for a key
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value reads the value at s.pos, of Go type t (nil when it is not known).
func (s *keyScanner) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
		t = nil // its own decoder reads it
	}
	if s.pos >= len(s.data) {
		return s.bad()
	}
	switch s.data[s.pos] {
	case '{':
		return s.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		s.pos++
		s.space()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			return nil
		}
		for i := 0; ; i++ {
			s.path = append(s.path, pathStep{index: i})
			if err := s.value(elem); err != nil {
				return err
			}
			s.path = s.path[:len(s.path)-1]
			if done, err := s.next(']'); done || err != nil {
				return err
			}
		}
	case '"':
		_, err := s.str()
		return err
	}
	// A number or a literal: what follows it ends it.
	start := s.pos
	for s.pos < len(s.data) && !strings.ContainsRune(",]} \t\r\n", rune(s.data[s.pos])) {
		s.pos++
	}
	if s.pos == start {
		return s.bad()
	}
	return nil
}

// object reads the object at s.pos, of Go type t.
func (s *keyScanner) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	var elem reflect.Type
	isStruct := false
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields, isStruct = s.fieldsOf(t), true
		case reflect.Map:
			elem = t.Elem()
		}
	}
	s.pos++
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	// The keys seen: a list while the object is small, a set beyond.
	var few [16][]byte
	seen, many := few[:0], map[string]bool(nil)
	for {
		at := s.pos
		key, err := s.key()
		if err != nil {
			return err
		}
		if many == nil && len(seen) == len(few) {
			many = make(map[string]bool, 2*len(few))
			for _, k := range seen {
				many[string(k)] = true
			}
		}
		if many != nil && many[string(key)] || many == nil && slices.ContainsFunc(seen, func(k []byte) bool { return bytes.Equal(k, key) }) {
			return s.keyErr(at, key, "")
		}
		if many != nil {
			many[string(key)] = true
		} else {
			seen = append(seen, key)
		}
		ft, known := fields[string(key)]
		switch {
		case isStruct && !known:
			for name := range fields {
				if bytes.EqualFold([]byte(name), key) { // encoding/json's match
					return s.keyErr(at, key, name)
				}
			}
		case !isStruct:
			ft = elem
		}
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.bad()
		}
		s.pos++
		s.space()
		s.path = append(s.path, pathStep{key: key, index: -1})
		if err := s.value(ft); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		if done, err := s.next('}'); done || err != nil {
			return err
		}
	}
}

// next reads what follows a member or element: a comma (done is false,
// and s.pos is at the next one) or the closing bracket end.
func (s *keyScanner) next(end byte) (done bool, err error) {
	s.space()
	if s.pos >= len(s.data) {
		return false, s.bad()
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		s.space()
		return false, nil
	case end:
		s.pos++
		return true, nil
	}
	return false, s.bad()
}

// key reads the string at s.pos and returns it as encoding/json decodes
// it (escapes resolved, invalid UTF-8 replaced): the document's own bytes
// when it has neither.
func (s *keyScanner) key() ([]byte, error) {
	start := s.pos
	plain, err := s.str()
	if err != nil {
		return nil, err
	}
	text := s.data[start:s.pos]
	if plain {
		return text[1 : len(text)-1], nil
	}
	var v string
	if err := json.Unmarshal(text, &v); err != nil {
		return nil, s.bad()
	}
	return []byte(v), nil
}

// str skips the string at s.pos; plain says it has no escape and no byte
// outside ASCII.
func (s *keyScanner) str() (plain bool, err error) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return false, s.bad()
	}
	plain = true
	for s.pos++; s.pos < len(s.data); s.pos++ {
		switch c := s.data[s.pos]; {
		case c == '\\':
			plain = false
			s.pos++
		case c >= 0x80:
			plain = false
		case c == '"':
			s.pos++
			return plain, nil
		}
	}
	return false, s.bad()
}

func (s *keyScanner) space() {
	for s.pos < len(s.data) && strings.IndexByte(" \t\r\n", s.data[s.pos]) >= 0 {
		s.pos++
	}
}

func (s *keyScanner) bad() error { return fmt.Errorf("%w (offset %d)", errNotJSON, s.pos) }

// keyErr is the KeyError of key, at offset at in the object s.path
// leads to.
func (s *keyScanner) keyErr(at int, key []byte, want string) error {
	var b strings.Builder
	for _, p := range append(s.path, pathStep{key: key, index: -1}) {
		switch {
		case p.index >= 0:
			b.WriteString("[" + strconv.Itoa(p.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + string(p.key))
		default:
			b.Write(p.key)
		}
	}
	return &KeyError{Offset: int64(at), Path: b.String(), Key: string(key), Want: want}
}

// fieldsOf returns the JSON names of struct type t's fields, with their
// types, by encoding/json's rules: a tag's name, else the field's; "-"
// left out; an untagged embedded struct's fields promoted unless a
// shallower field has the name; two at one depth, neither alone tagged,
// dropped.
func (s *keyScanner) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := structFields.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	level := []reflect.Type{t}
	visited := map[reflect.Type]bool{}
	type found struct {
		typ    reflect.Type
		tagged bool
		n      int // fields of the name at this depth
	}
	for len(level) > 0 {
		here := map[string]*found{}
		var next []reflect.Type
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := range st.NumField() {
				sf := st.Field(i)
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, ft)
					continue
				}
				tagged := name != ""
				if !tagged {
					name = sf.Name
				}
				if _, shallower := out[name]; shallower {
					continue
				}
				switch f := here[name]; {
				case f == nil:
					here[name] = &found{sf.Type, tagged, 1}
				case tagged && !f.tagged:
					*f = found{sf.Type, true, 1}
				case tagged == f.tagged:
					f.n++
				}
			}
		}
		for name, f := range here {
			if f.n == 1 {
				out[name] = f.typ
			} else {
				out[name] = nil // ambiguous: encoding/json leaves it out; a key of it is known, not decoded
			}
		}
		level = next
	}
	structFields.Store(t, out)
	return out
}
