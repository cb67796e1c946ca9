// Package parsemsg owns the one-line form of the input parsers' errors: the
// trace codec (trace) and the request-trace readers (sim/reqtrace) render
// their ParseErrors with it, "pkg: file:line: part: "value": sentinel:
// detail", shorten the offending value the same way, and wrap a failure of
// the underlying reader alike. It uses the standard library only.
package parsemsg

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
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

// Printable is s with each character that would break a line, a table
// or a terminal escaped as Go writes it in a quoted string ("\n", "\t",
// "\x1b", "\u202e"): control characters, line and paragraph separators,
// bidirectional overrides and the other runes strconv.IsPrint refuses
// (the space aside), and bytes that are not UTF-8. Start names a file
// with it, so that a file named with a newline cannot split a message
// ("trace: a\nb.csv:2: ..." stays one line). It is the one rule for text
// a tool shows and did not write: every tool's error lines (cli's
// printError), option values, and kvreport's documents and paths.
func Printable(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || (r != ' ' && !strconv.IsPrint(r)) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r != ' ' && !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// Arg returns s, a value typed on a command line (an option's, an
// argument), as a message names it: as typed when it reads unambiguously,
// and as a Go string literal when it is empty or holds a space, a quote,
// a rune that is not printable or a byte that is not UTF-8, so that "--layout "": ..." shows what was
// given and a newline typed in a value cannot start a line of its own.
func Arg(s string) string {
	if s == "" {
		return `""`
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == utf8.RuneError || r == '"' || r == '\'' || r == '`'
	}) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// Message builds one error line: a position, then parts, each after ": ".
// Its zero value is not usable; start one with Start.
type Message struct {
	b []byte
}

// Start begins a message with prefix and the position: "prefix: file:line"
// (file Printable), or "prefix: " + unnamed + line when file is ""
// (unnamed is the word that stands for a missing file name, "line " or "").
func Start(prefix, file, unnamed string, line int) *Message {
	b := make([]byte, 0, 128)
	b = append(b, prefix...)
	b = append(b, ": "...)
	if file != "" {
		b = append(b, Printable(file)...)
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
