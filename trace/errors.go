package trace

import (
	"errors"
	"strconv"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// The classes of malformed input. A *ParseError wraps exactly one of them.
var (
	// ErrBadHeader: the header row is missing, names a column twice, or
	// lacks required columns (the message names them).
	ErrBadHeader = errors.New("bad header")
	// ErrFieldCount: a row has more or fewer fields than the header.
	ErrFieldCount = errors.New("wrong number of fields")
	// ErrBadNumber: a Timestamp, Object_Size_Bytes or Request field is not
	// a decimal number the format allows, or overflows.
	ErrBadNumber = errors.New("not a valid number")
	// ErrBadEnum: an Operation, Tier, Phase or QoS field is not one of the
	// format's values.
	ErrBadEnum = errors.New("not a valid value")
	// ErrNegativeSize: Object_Size_Bytes is negative.
	ErrNegativeSize = errors.New("negative size")
	// ErrSizeTooLarge: Object_Size_Bytes is above the Reader's MaxSize.
	ErrSizeTooLarge = errors.New("size too large")
	// ErrBadKey: a Key is empty or holds whitespace, control characters,
	// quotes or invalid UTF-8.
	ErrBadKey = errors.New("bad key")
	// ErrQuoted: a field holds a double quote; the format never quotes.
	ErrQuoted = errors.New("quoted field")
	// ErrLineTooLong: a line is longer than MaxLineBytes.
	ErrLineTooLong = errors.New("line too long")
	// ErrTruncated: the zstd stream ends inside a frame.
	ErrTruncated = errors.New("truncated zstd stream")
	// ErrCorrupt: the zstd stream is not valid zstd.
	ErrCorrupt = errors.New("corrupt zstd stream")
)

// MaxLineBytes bounds the length of one line, so that no input can make a
// Reader buffer without limit.
const MaxLineBytes = 64 << 10

// ParseError is a malformed input: where it is and what was wrong. It
// unwraps to one of the sentinel errors of this package.
type ParseError struct {
	File   string // the input's name; "-" for stdin, "" if unnamed
	Line   int    // 1-based line number; the header is line 1
	Column int    // 1-based field number; 0 when the error is not about a field
	Name   string // the column's header name, when known
	Value  string // the offending text, shortened to at most 64 bytes
	// Offset, for ErrTruncated and ErrCorrupt, is how many bytes of the
	// compressed stream the decoder had read when it found the problem:
	// the end of the block it could not decode (damage that decodes, to
	// wrong text, is found later: by the frame's checksum, at its end),
	// or the stream's length when it is cut short; 0 otherwise. Line is
	// then the first line not read whole.
	Offset int64
	Err    error  // the sentinel error
	Detail string // what was expected, for the message
}

// Error renders e on one line, for example
// `trace: run.csv.zst:1042: column 3 (Object_Size_Bytes): "12a": not a valid number: want a non-negative integer`
// or `trace: run.csv.zst:1042: corrupt zstd stream: at byte 77154 of the compressed stream: ...`.
func (e *ParseError) Error() string {
	m := parsemsg.Start("trace", e.File, "", e.Line)
	if e.Column > 0 {
		col := "column " + strconv.Itoa(e.Column)
		if e.Name != "" {
			col += " (" + e.Name + ")"
		}
		m.Part(col)
	}
	if e.Value != "" || e.Column > 0 {
		m.Quote(e.Value)
	}
	m.Part(e.Err.Error())
	if e.Offset > 0 {
		m.Part("at byte " + strconv.FormatInt(e.Offset, 10) + " of the compressed stream")
	}
	return m.Part(e.Detail).String()
}

// Unwrap returns the sentinel error.
func (e *ParseError) Unwrap() error { return e.Err }
