package reqtrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// sharedData is the project's shared data directory, relative to this
// package: tests on the full traces skip when a clone lacks it.
const sharedData = "../../../shared/data"

// sharedFile returns the path of a file under shared/data, or skips.
func sharedFile(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(sharedData, rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("full trace %s is not here (a clone without ../shared/data): %v", rel, err)
	}
	return p
}

// fixture returns the contents of testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll reads every request of r, failing the test on an error other
// than io.EOF. Each Request gets its own HashIDs.
func readAll(t testing.TB, r Reader) []Request {
	t.Helper()
	var out []Request
	for {
		var req Request
		err := r.Next(&req)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("after %d requests: %v", len(out), err)
		}
		out = append(out, req)
	}
}

// readAllErr reads r until an error and returns the requests before it and
// the error (io.EOF at the end).
func readAllErr(r Reader) ([]Request, error) {
	var out []Request
	for {
		var req Request
		if err := r.Next(&req); err != nil {
			return out, err
		}
		out = append(out, req)
	}
}

// newReader is NewReader of a string, failing the test on an error.
func newReader(t testing.TB, s string, f Format, opt Options) Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader([]byte(s)), f, opt)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

// wantParseError checks that err is a *ParseError at line wrapping want,
// about column when column is not "-".
func wantParseError(t testing.TB, err error, line int, column string, want error) *ParseError {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T), want a *ParseError", err, err)
	}
	if !errors.Is(err, want) {
		t.Errorf("error %v, want it to wrap %v", err, want)
	}
	if pe.Line != line {
		t.Errorf("error %v: line %d, want %d", err, pe.Line, line)
	}
	if column != "-" && pe.Column != column {
		t.Errorf("error %v: column %q, want %q", err, pe.Column, column)
	}
	return pe
}

// checkErrorClass is the property every fuzz test keeps: a Reader ends in
// io.EOF or a *ParseError, never in anything else.
func checkErrorClass(t testing.TB, err error) {
	t.Helper()
	if err == nil || err == io.EOF {
		return
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is neither io.EOF nor a *ParseError", err, err)
	}
	if pe.Err == nil {
		t.Fatalf("error %v wraps no sentinel", err)
	}
	if msg := err.Error(); bytes.ContainsAny([]byte(msg), "\n") {
		t.Fatalf("error message spans lines: %q", msg)
	}
}
