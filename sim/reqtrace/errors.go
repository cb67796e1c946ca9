package reqtrace

import (
	"errors"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
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
	// JSON, a value has the wrong JSON type, or a key names a field only
	// in another case, or is given twice (keyError).
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
	File string // the input's name (Options.Name); "" if unnamed
	Line int    // 1-based line number; a CSV header is line 1
	// Col is the 1-based byte column on Line where the input stops being
	// JSON or CSV (a syntax error), for a line too long to search by
	// eye; 0 for an error about a field, which Column names.
	Col    int
	Column string // the CSV column or JSON field; "" when not about one
	Value  string // the offending text, shortened to at most 64 bytes; "" for none or an empty field
	Err    error  // the sentinel error
	Detail string // what was expected, for the message
}

// Error renders e on one line, for example
// `reqtrace: b.csv:22: Request tokens: "12a": not a valid number: want a non-negative integer`,
// or with a column, `reqtrace: m.jsonl:2:72: "[1, x]}": malformed json: invalid character 'x' ...`.
func (e *ParseError) Error() string {
	m := parsemsg.Start("reqtrace", e.File, "line ", e.Line).Col(e.Col).Part(e.Column)
	if e.Value != "" {
		m.Quote(e.Value)
	}
	sentinel := "error"
	if e.Err != nil {
		sentinel = e.Err.Error()
	}
	return m.Part(sentinel).Part(e.Detail).String()
}

// Unwrap returns the sentinel error.
func (e *ParseError) Unwrap() error { return e.Err }

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

// keyError is the ParseError of a key schema.CheckKeys refused at line of
// file: one that names a field only in another case ("Input_Length"),
// which encoding/json would read into it and Python's json, as the
// reference and Mooncake's tools read these files, would not, or a key
// given twice. Either would make the workload differ from theirs.
func keyError(file string, line int, err error) error {
	var ke *schema.KeyError
	if errors.As(err, &ke) {
		return &ParseError{File: file, Line: line, Column: ke.Path, Value: ke.Key, Err: ErrBadJSON, Detail: ke.Reason()}
	}
	return &ParseError{File: file, Line: line, Err: ErrBadJSON, Detail: err.Error()}
}
