// Package parsemsg owns the one-line form of the input parsers' errors: the
// trace codec (trace) and the request-trace readers (sim/reqtrace) render
// their ParseErrors with it, "pkg: file:line: part: "value": sentinel:
// detail", shorten the offending value the same way, and wrap a failure of
// the underlying reader alike. It uses the standard library only.
package parsemsg

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxValue is how many bytes of an offending value a message keeps.
const MaxValue = 64

// Shorten returns s for an error message: whole when it is at most MaxValue
// bytes, else cut to at most MaxValue bytes on a rune boundary and followed
// by "...". A cut never splits a UTF-8 sequence, so a valid value stays
// valid; invalid bytes stay as they are, for the quoting to show.
func Shorten[T ~string | ~[]byte](s T) string {
	if len(s) <= MaxValue {
		return string(s)
	}
	n := MaxValue
	for n > MaxValue-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return string(s[:n]) + "..."
}

// Message builds one error line: a position, then parts, each after ": ".
// Its zero value is not usable; start one with Start.
type Message struct {
	b []byte
}

// Start begins a message with prefix and the position: "prefix: file:line",
// or "prefix: " + unnamed + line when file is "" (unnamed is the word that
// stands for a missing file name, "line " or "").
func Start(prefix, file, unnamed string, line int) *Message {
	b := make([]byte, 0, 128)
	b = append(b, prefix...)
	b = append(b, ": "...)
	if file != "" {
		b = append(b, file...)
		b = append(b, ':')
	} else {
		b = append(b, unnamed...)
	}
	b = strconv.AppendInt(b, int64(line), 10)
	return &Message{b: b}
}

// Col appends ":col" to a message's position, making it "file:line:col";
// a col below 1 (not known) is left out. It follows Start.
func (m *Message) Col(col int) *Message {
	if col > 0 {
		m.b = append(m.b, ':')
		m.b = strconv.AppendInt(m.b, int64(col), 10)
	}
	return m
}

// Part appends ": " and s; an empty s is left out.
func (m *Message) Part(s string) *Message {
	if s != "" {
		m.b = append(m.b, ": "...)
		m.b = append(m.b, s...)
	}
	return m
}

// Quote appends ": " and s as a Go string literal, so that control
// characters and invalid UTF-8 cannot break the line; an empty s is
// written as "".
func (m *Message) Quote(s string) *Message {
	m.b = append(m.b, ": "...)
	m.b = strconv.AppendQuote(m.b, s)
	return m
}

// String returns the message.
func (m *Message) String() string { return string(m.b) }

// ReadError wraps err, a failure of the reader under a parser (not
// malformed input, so not a ParseError), as "prefix: file:line: read: err",
// or "prefix: line N: read: err" when file is "".
func ReadError(prefix, file string, line int, err error) error {
	return fmt.Errorf("%s: read: %w", Start(prefix, file, "line ", line), err)
}
