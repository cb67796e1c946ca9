package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
)

// ParseError is the error of a document that is not valid JSON, whose
// value has the wrong type for its field, or whose key is not exactly its
// schema's or is given twice (schema.CheckKeys). It names the file, the
// line and the column (1-based, in characters) where the problem is, and
// the field in JSON's names, never a Go type's.
type ParseError struct {
	File         string
	Line, Column int
	// Field is the dotted JSON path of the value ("summary.ops"); empty
	// for a syntax error or the document itself.
	Field string
	// Msg says what is wrong ("got a string, want a number").
	Msg string
	// Err is the encoding/json error (or io.ErrUnexpectedEOF).
	Err error
}

func (e *ParseError) Error() string {
	s := fmt.Sprintf("%s:%d:%d: ", e.File, e.Line, e.Column)
	if e.Field != "" {
		s += fmt.Sprintf("field %q: ", e.Field)
	}
	return s + e.Msg
}

// Unwrap returns the encoding/json error.
func (e *ParseError) Unwrap() error { return e.Err }

// jsonError turns err, from decoding the document that starts at byte
// base of data (the whole input of file), into a *ParseError placed in
// data when it is a syntax error, a type error, a key refused
// (schema.CheckKeys) or a truncation; other errors (a field's own
// decoder's, such as a time's) name the file only.
func jsonError(file string, data []byte, base int, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var key *schema.KeyError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read up to and including the bad one.
		pe := at(file, data, base+int(syn.Offset)-1)
		pe.Msg, pe.Err = syn.Error(), err
		if strings.HasPrefix(pe.Msg, "unexpected end of JSON input") {
			pe.Msg = "unexpected end of input: the document is cut short"
		}
		return pe
	case errors.As(err, &typ):
		pe := at(file, data, valueStart(data, base+int(typ.Offset)))
		pe.Field, pe.Msg, pe.Err = typ.Field, "got "+gotJSON(typ.Value)+", want "+wantJSON(typ.Type, typ.Value), err
		return pe
	case errors.As(err, &key):
		pe := at(file, data, base+int(key.Offset))
		pe.Field, pe.Msg, pe.Err = key.Path, key.Reason(), err
		return pe
	case errors.Is(err, io.ErrUnexpectedEOF):
		pe := at(file, data, len(data))
		pe.Msg, pe.Err = "unexpected end of input: the document is cut short", err
		return pe
	}
	if pe := timeError(file, data, base); pe != nil {
		pe.Err = err
		return pe
	}
	return fmt.Errorf("%s: %w", file, err)
}

// timeFields are the fields of a result document that hold times, whose
// decoder's errors say neither where nor which field.
var timeFields = []string{"started", "start_at"}

// timeError finds the first time field of the document at base of data
// that is not a time, and places it; nil when none is found.
func timeError(file string, data []byte, base int) *ParseError {
	dec := json.NewDecoder(bytes.NewReader(data[base:]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		// Matched as encoding/json matches a key to a field: exactly,
		// else in any case ("stArted" is the started field).
		if k, _ := key.(string); slices.ContainsFunc(timeFields, func(f string) bool { return strings.EqualFold(f, k) }) {
			var t time.Time
			if json.Unmarshal(v, &t) != nil {
				pe := at(file, data, base+int(dec.InputOffset())-len(v))
				got := kindOf(v)
				if v[0] == '"' {
					got = string(v)
					if len(got) > 40 {
						got = strings.ToValidUTF8(got[:37], "") + "..."
					}
					got = parsemsg.Printable(got) // JSON holds U+202E, U+2028 as they are
				}
				pe.Field, pe.Msg = k, "got "+got+", want a time such as \"2026-01-09T12:00:00Z\" (RFC 3339)"
				return pe
			}
		}
	}
	return nil
}

// kindOf names the kind of a JSON value, as gotJSON does.
func kindOf(v []byte) string {
	switch v[0] {
	case '"':
		return gotJSON("string")
	case '{':
		return gotJSON("object")
	case '[':
		return gotJSON("array")
	case 't', 'f':
		return gotJSON("bool")
	case 'n':
		return "null"
	}
	return gotJSON("number")
}

// at returns a ParseError placing byte off of data (clamped to it).
func at(file string, data []byte, off int) *ParseError {
	off = max(0, min(off, len(data)))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:off], '\n')+1:off])
	return &ParseError{File: file, Line: line, Column: col}
}

// valueStart finds where the value that encoding/json reports by the
// offset just after it (a literal) or just after its opening bracket
// starts.
func valueStart(data []byte, end int) int {
	end = min(end, len(data))
	if end <= 0 {
		return 0
	}
	switch c := data[end-1]; {
	case c == '[' || c == '{':
		return end - 1
	case c == '"':
		// The opening quote is the first one back not escaped by an odd
		// run of backslashes.
		for i := end - 2; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			n := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				n++
			}
			if n%2 == 0 {
				return i
			}
		}
		return 0
	}
	i := end
	for i > 0 && strings.IndexByte("+-.0123456789eEtruefalsn", data[i-1]) >= 0 {
		i--
	}
	return i
}

// gotJSON names the JSON value encoding/json reports ("string", "number",
// "number 1.5", "object", "array", "bool").
func gotJSON(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "object":
		return "an object"
	case "array":
		return "an array"
	}
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	return v
}

// wantJSON names the JSON value a Go type holds; got is what it was
// given, to say why a number did not fit.
func wantJSON(t reflect.Type, got string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another value"
	}
	number, isNumber := strings.CutPrefix(got, "number ")
	whole := isNumber && !strings.ContainsAny(number, ".eE")
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if whole {
			bits := t.Bits()
			return fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
		}
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if whole {
			return "an integer from 0 to " + strconv.FormatUint(^uint64(0)>>(64-t.Bits()), 10)
		}
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another value"
}
