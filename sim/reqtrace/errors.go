package reqtrace

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The classes of malformed input. A *ParseError wraps exactly one of them;
// test for them with errors.Is.
var (
	// ErrUnknownFormat: Detect (or a Reader given FormatAuto) does not
	// recognise the input, or ParseFormat does not know the name.
	ErrUnknownFormat = errors.New("unknown format")
	// ErrBadHeader: a CSV header row is missing or lacks a required column
	// (the message names it).
	ErrBadHeader = errors.New("bad header")
	// ErrFieldCount: an Azure row has more or fewer fields than the header.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrBadCSV: a row is not valid CSV (a misplaced quote).
	ErrBadCSV = errors.New("malformed csv")
	// ErrBadNumber: a token count, timestamp or hash id is not a number the
	// format allows, is negative where it must not be, or is out of range.
	ErrBadNumber = errors.New("not a valid number")
	// ErrBadTime: an Azure TIMESTAMP is not a date and time the format
	// allows, or is too far from the first row's.
	ErrBadTime = errors.New("not a valid time")
	// ErrBadJSON: a Mooncake line or the ShareGPT document is not valid
	// JSON, or a value has the wrong JSON type.
	ErrBadJSON = errors.New("malformed json")
	// ErrMissingField: a Mooncake line lacks one of its four fields.
	ErrMissingField = errors.New("missing field")
	// ErrInconsistent: a Mooncake line's hash_ids do not cover its
	// input_length in 512-token blocks.
	ErrInconsistent = errors.New("inconsistent record")
	// ErrTooLong: a line is longer than MaxLineBytes, or a ShareGPT
	// conversation longer than MaxConversationBytes.
	ErrTooLong = errors.New("too long")
	// ErrNotPair: a ShareGPT turn pair is not a human turn followed by a gpt
	// turn. Such pairs are skipped, not returned (see Skipper).
	ErrNotPair = errors.New("not a human/gpt pair")
)

// MaxLineBytes bounds one line of a CSV or JSONL trace, so that no input can
// make a Reader buffer without limit.
const MaxLineBytes = 1 << 20

// MaxConversationBytes bounds one element of a ShareGPT array.
const MaxConversationBytes = 64 << 20

// ParseError is malformed input: where it is and what was wrong. It unwraps
// to one of the sentinel errors of this package.
type ParseError struct {
	File   string // the input's name (Options.Name); "" if unnamed
	Line   int    // 1-based line number; a CSV header is line 1
	Column string // the CSV column or JSON field; "" when not about one
	Value  string // the offending text, shortened to at most 64 bytes; "" for none or an empty field
	Err    error  // the sentinel error
	Detail string // what was expected, for the message
}

// Error renders e on one line, for example
// `reqtrace: b.csv:22: Request tokens: "12a": not a valid number: want a non-negative integer`.
func (e *ParseError) Error() string {
	b := make([]byte, 0, 128)
	b = append(b, "reqtrace: "...)
	if e.File != "" {
		b = append(b, e.File...)
		b = append(b, ':')
	} else {
		b = append(b, "line "...)
	}
	b = strconv.AppendInt(b, int64(e.Line), 10)
	if e.Column != "" {
		b = append(b, ": "...)
		b = append(b, e.Column...)
	}
	if e.Value != "" {
		b = append(b, ": "...)
		b = strconv.AppendQuote(b, e.Value)
	}
	b = append(b, ": "...)
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	} else {
		b = append(b, "error"...)
	}
	if e.Detail != "" {
		b = append(b, ": "...)
		b = append(b, e.Detail...)
	}
	return string(b)
}

// Unwrap returns the sentinel error.
func (e *ParseError) Unwrap() error { return e.Err }

const maxErrValue = 64

// shorten cuts s to at most maxErrValue bytes, on a rune boundary, for an
// error message.
func shorten(s string) string {
	if len(s) <= maxErrValue {
		return s
	}
	n := maxErrValue
	for n > maxErrValue-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// errTracker remembers the last error its reader returned other than
// io.EOF, so that a decoding error can be told from an I/O error: csv and
// json return the reader's errors as they are.
type errTracker struct {
	r   interface{ Read([]byte) (int, error) }
	err error
}

func (t *errTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !isEOF(err) {
		t.err = err
	}
	return n, err
}

// ioError wraps a failure of the underlying reader, which is not malformed
// input and so not a *ParseError.
func ioError(file string, line int, err error) error {
	if file == "" {
		return fmt.Errorf("reqtrace: line %d: read: %w", line, err)
	}
	return fmt.Errorf("reqtrace: %s:%d: read: %w", file, line, err)
}
