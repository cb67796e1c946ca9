package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goTypeWords are what an error that names a Go type shows.
var goTypeWords = []string{"Go struct", "Go value", "int64", "float64", "schema.", "struct {", "UnmarshalJSON", "json: cannot", "json: invalid"}

// TestLoadErrorsPlaceTheProblem: a malformed document's error names the
// file, the line and the column of the problem, and the field in JSON's
// names, never a Go type.
func TestLoadErrorsPlaceTheProblem(t *testing.T) {
	good, err := os.ReadFile(goldenInputs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, doc, want string
		format          bool // wraps ErrFormat
	}{
		{"syntax error", "{\"format\": \"kvbench-result\",\n  \"rank\": 1,}\n", "a.json:2:13: invalid character '}' looking for beginning of object key string", false},
		{"wrong type", "{\"format\": \"kvbench-result\", \"format_version\": 2,\n  \"summary\": {\n    \"total_requests\": \"12\"}}", `a.json:3:23: field "summary.total_requests": got a string, want an integer`, false},
		{"wrong type in the probe", `{"format": 2}`, `a.json:1:12: field "format": got a number, want a string`, false},
		{"fraction for an integer", "{\"format\": \"kvbench-result\", \"format_version\": 2, \"rank\": 1.5}", `a.json:1:59: field "rank": got 1.5, want an integer`, false},
		{"integer out of range", "{\"format\": \"kvbench-result\", \"format_version\": 2, \"rank\": 99999999999999999999}", `a.json:1:59: field "rank": got 99999999999999999999, want an integer from -9223372036854775808 to 9223372036854775807`, false},
		{"array for an object", "{\"format\": \"kvbench-result\", \"format_version\": 2,\n\"summary\": [1, 2]}", `a.json:2:12: field "summary": got an array, want an object`, false},
		{"string with quotes for an array", "{\"format\": \"kvbench-result\", \"format_version\": 2,\n\"cells\": \"a \\\"b\\\" c\"}", `a.json:2:10: field "cells": got a string, want an array`, false},
		{"wrong type in an array", "{\"format\": \"kvbench-result\", \"format_version\": 2,\n\"cells\": [{}, {\"ops\": true}]}", `a.json:2:23: field "cells.ops": got true or false, want an integer`, false},
		{"not a time", "{\"format\": \"kvbench-result\", \"format_version\": 2,\n\t\"started\": \"yesterday\"}", `a.json:2:13: field "started": got "yesterday", want a time`, false},
		{"truncated", string(good[:len(good)/2]), "a.json:", false},
		{"truncated in a line", "{\"format\": \"kvbench-result\",\n  \"rank\": 1", "a.json:2:12: unexpected end of input: the document is cut short", false},
		{"empty file", "", "a.json: unknown document format: empty input", true},
		{"blank file", "\n\n  \n", "a.json: unknown document format: empty input", true},
		{"not JSON at all", "rank,ranks\n0,2\n", "a.json:1:1: invalid character 'r' looking for beginning of value", false},
		{"not an object", "\n[1, 2]", "a.json:2:1: got an array, want an object", true},
		{"the second document", string(good) + "\n{\"format\": \"kvbench-result\", \"format_version\": 2, \"wall_s\": \"1\"}", `field "wall_s": got a string, want a number`, false},
		{"reference document", `{"requests_completed": 1, "summary": {"total_requests": "x"}}`, `a.json:1:57: field "summary.total_requests": got a string, want an integer (a kv-cache.py --output document)`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.json")
			if err := os.WriteFile(path, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load([]string{path}, nil, LoadOptions{})
			if err == nil {
				t.Fatal("loaded")
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			if !strings.HasPrefix(msg, "report: a.json") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q, want %q", msg, tt.want)
			}
			for _, w := range goTypeWords {
				if strings.Contains(msg, w) {
					t.Errorf("error %q names a Go type (%q)", msg, w)
				}
			}
			if errors.Is(err, ErrFormat) != tt.format {
				t.Errorf("errors.Is(err, ErrFormat) = %v", !tt.format)
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("error on several lines: %q", msg)
			}
		})
	}
	// The line and column of the truncated document are its end.
	_, err = decodeStream("a.json", bytes.NewReader(good[:len(good)/2]))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("truncated: %v, want a *ParseError", err)
	}
	half := good[:len(good)/2]
	if line := 1 + bytes.Count(half, []byte("\n")); pe.Line != line || pe.Column != len(half)-bytes.LastIndexByte(half, '\n') {
		t.Errorf("truncated: %d:%d, want line %d", pe.Line, pe.Column, line)
	}
}

// FuzzDecodeStream: whatever the input, loading it never panics, loads at
// least one document or fails with one line naming the file, placed in
// the input when it is a *ParseError and naming no Go type; and a document
// loaded decodes the same from its own bytes.
//
// Its input is a result document changed by a patch, or the whole input
// (fuzzDoc): given whole documents of 13 to 40 kB, it made 24 executions
// in 10 s.
func FuzzDecodeStream(f *testing.F) {
	bases := fuzzBases(f, goldenInputs...)
	for i, b := range bases {
		f.Add(uint8(i), uint32(0), []byte(`{}`))
		f.Add(uint8(i), cutAt(len(b.raw)/3), []byte(nil))
	}
	f.Add(uint8(0), uint32(0), []byte(`{"rank": "0", "cells": [{}]}`))
	whole := uint8(len(bases))
	for _, s := range []string{"", "{}", "[]", "null", `{"format":"kvbench-result","format_version":2,"rank":"0"}`,
		`{"format":"kvbench-result","format_version":2,"started":7}`, `{"summary":{},"requests_completed":"x"}`, "\xff\xfe", "{\"a\":\n\"\\u00e9\xe9"} {
		f.Add(whole, uint32(0), []byte(s))
	}
	f.Fuzz(func(t *testing.T, base uint8, at uint32, patch []byte) {
		data := fuzzDoc(bases, base, at, patch)
		docs, err := decodeStream("f.json", bytes.NewReader(data))
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "report: f.json") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q", msg)
			}
			for _, w := range goTypeWords {
				if strings.Contains(msg, w) {
					t.Fatalf("error %q names a Go type (%q)", msg, w)
				}
			}
			var pe *ParseError
			if errors.As(err, &pe) && (pe.Line < 1 || pe.Line > 1+bytes.Count(data, []byte("\n")) || pe.Column < 1 || pe.Column > len(data)+1) {
				t.Fatalf("error %q: %d:%d outside the input", msg, pe.Line, pe.Column)
			}
			return
		}
		if len(docs) == 0 {
			t.Fatal("no document and no error")
		}
		if len(docs) == 1 && json.Valid(data) {
			if _, err := Decode("f.json", bytes.TrimSpace(data)); err != nil {
				t.Fatalf("decodes in a stream, not alone: %v", err)
			}
		}
	})
}
