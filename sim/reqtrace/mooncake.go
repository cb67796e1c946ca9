package reqtrace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/parsemsg"
	"github.com/kvbench/kvbench/schema"
)

// The Mooncake trace's field names (kvcache-ai/Mooncake FAST25-release).
const (
	mooncakeTimestamp = "timestamp"
	mooncakeInput     = "input_length"
	mooncakeOutput    = "output_length"
	mooncakeHashIDs   = "hash_ids"
)

// mooncake reads a Mooncake JSONL trace: one object a line with timestamp
// (Mooncake's milliseconds, or another unit: timeUnits), input_length,
// output_length and hash_ids, at least one id for any input and no more
// ids than tokens (HashBlocks says what sizes they were found to have).
// Other fields are ignored, blank lines skipped. Keys are matched
// exactly, as Mooncake's Python tools read them (keyError).
type mooncake struct {
	base
	br   *bufio.Reader
	buf  []byte
	line int
	t0   int64 // first request's timestamp, ns
	// unit is the timestamps' unit, found from the first (timeUnits).
	unit     time.Duration
	unitName string
	forced   string // Options.TimeUnit
	blocks   HashBlocks
	lead     int // bytes of space before the line's record
}

var _ Reader = (*mooncake)(nil)

func newMooncake(b base, br *bufio.Reader) *mooncake { return &mooncake{base: b, br: br} }

func (m *mooncake) format() Format { return FormatMooncake }

// mooncakeLine is one line, its fields kept raw so that each can be checked
// and named in an error.
type mooncakeLine struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	InputLength  json.RawMessage `json:"input_length"`
	OutputLength json.RawMessage `json:"output_length"`
	HashIDs      json.RawMessage `json:"hash_ids"`
}

// Next implements Reader.
func (m *mooncake) Next(req *Request) error {
	if m.err != nil {
		return m.err
	}
	for {
		line, err := m.readLine()
		if err != nil {
			return m.fail(err)
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		// TrimSpace cut the leading spaces off the front: an error's
		// column counts them.
		m.lead = len(line) - len(bytes.TrimLeftFunc(line, unicode.IsSpace))
		return m.parse(trimmed, req)
	}
}

// readLine returns the next line, without its end, valid until the next
// call.
func (m *mooncake) readLine() ([]byte, error) {
	m.line++
	m.buf = m.buf[:0]
	for {
		frag, err := m.br.ReadSlice('\n')
		if len(m.buf)+len(frag) > MaxLineBytes+2 { // +2 for CRLF
			return nil, &ParseError{File: m.name, Line: m.line, Err: ErrTooLong, Detail: "a line is limited to " + strconv.Itoa(MaxLineBytes) + " bytes"}
		}
		switch {
		case err == nil && len(m.buf) == 0:
			return frag, nil
		case err == nil:
			return append(m.buf, frag...), nil
		case err == bufio.ErrBufferFull:
			m.buf = append(m.buf, frag...)
		case err == io.EOF:
			m.buf = append(m.buf, frag...)
			if len(m.buf) == 0 {
				return nil, io.EOF
			}
			return m.buf, nil
		default:
			return nil, parsemsg.ReadError("reqtrace", m.name, m.line, err)
		}
	}
}

func (m *mooncake) parse(line []byte, req *Request) error {
	var v mooncakeLine
	if err := json.Unmarshal(line, &v); err != nil {
		return m.fail(m.jsonError(line, err))
	}
	if err := schema.CheckKeys(line, &v); err != nil {
		return m.fail(keyError(m.name, m.line, err))
	}
	ts, err := m.timestamp(v.Timestamp)
	if err != nil {
		return m.fail(err)
	}
	in, err := m.length(mooncakeInput, v.InputLength)
	if err != nil {
		return m.fail(err)
	}
	out, err := m.length(mooncakeOutput, v.OutputLength)
	if err != nil {
		return m.fail(err)
	}
	if v.HashIDs == nil {
		return m.fail(m.missing(mooncakeHashIDs))
	}
	ids, ok := parseIDs(v.HashIDs, req.HashIDs[:0])
	if !ok {
		return m.fail(&ParseError{File: m.name, Line: m.line, Column: mooncakeHashIDs, Value: parsemsg.Shorten(v.HashIDs), Err: ErrBadNumber, Detail: "want an array of integers"})
	}
	n := len(ids)
	if n == 0 && in > 0 || n > in {
		detail := "input_length " + strconv.Itoa(in) + " needs at least one hash id"
		if n > in {
			detail = "more hash ids than the " + strconv.Itoa(in) + " tokens of input_length"
		}
		return m.fail(&ParseError{File: m.name, Line: m.line, Column: mooncakeHashIDs, Value: strconv.Itoa(n) + " ids", Err: ErrInconsistent, Detail: detail})
	}
	bt := 0
	if n > 0 && m.blocks.add(in, n) {
		bt = m.blocks.Tokens
	}
	if !m.haveFirst {
		m.haveFirst = true
		m.t0 = ts
	}
	*req = Request{Arrival: m.arrival(time.Duration(ts-m.t0), m.line), Stamp: time.Duration(ts), InputTokens: in, OutputTokens: out, HashIDs: ids, BlockTokens: bt}
	return nil
}

func (m *mooncake) missing(field string) error {
	return &ParseError{File: m.name, Line: m.line, Column: field, Err: ErrMissingField, Detail: "want timestamp, input_length, output_length and hash_ids"}
}

func (m *mooncake) jsonError(line []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// The only typed target is the line's object itself.
		return &ParseError{File: m.name, Line: m.line, Col: m.lead + 1, Value: parsemsg.Shorten(line), Err: ErrBadJSON, Detail: "want an object, got " + te.Value}
	}
	pe := &ParseError{File: m.name, Line: m.line, Value: parsemsg.Shorten(line), Err: ErrBadJSON, Detail: err.Error()}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// se.Offset bytes were read: the last of them is the one in
		// error, or, where the line ended early, the end.
		at := int(se.Offset)
		if at >= len(line) && strings.HasPrefix(se.Error(), "unexpected end") {
			at = len(line) + 1
		}
		pe.Col, pe.Value = m.lead+at, excerpt(line, at-1)
	}
	return pe
}

// excerpt is the text of line from a little before byte i, where an error
// is, shortened (parsemsg.Shorten), and led by "..." where it does not
// start the line: a long line's first bytes do not show where it went
// wrong.
func excerpt(line []byte, i int) string {
	const before = 24
	start := min(max(i-before, 0), len(line))
	for start > 0 && start < len(line) && !utf8.RuneStart(line[start]) {
		start--
	}
	if start == 0 {
		return parsemsg.Shorten(line)
	}
	return "..." + parsemsg.Shorten(line[start:])
}

// A Mooncake-style trace's timestamps come in the unit and encoding its
// producer chose: Mooncake's own are milliseconds from the trace's start,
// as JSON numbers; others write Unix times in s, ms, us or ns, as numbers
// or as strings ("1753694362340138614"). The unit is found from the first
// timestamp's magnitude: from 1e17 nanoseconds, from 1e14 microseconds,
// from 1e11 milliseconds, from 1e9 seconds (each a Unix time after 2001),
// and below 1e9 milliseconds from the start (Mooncake's). Every later
// timestamp is read in that unit; TimeUnit says which it was.
var timeUnits = []struct {
	from float64
	unit time.Duration
	name string
}{
	{1e17, time.Nanosecond, "ns (Unix time)"},
	{1e14, time.Microsecond, "us (Unix time)"},
	{1e11, time.Millisecond, "ms (Unix time)"},
	{1e9, time.Second, "s (Unix time)"},
	{0, time.Millisecond, "ms from the start"},
}

// maxTimestampNs bounds a timestamp in nanoseconds so that the difference
// of two fits a time.Duration.
const maxTimestampNs = math.MaxInt64 / 2

// timestamp parses a timestamp, a JSON number or a string holding one,
// an integer or a finite decimal, into nanoseconds.
func (m *mooncake) timestamp(raw json.RawMessage) (int64, error) {
	if raw == nil {
		return 0, m.missing(mooncakeTimestamp)
	}
	bad := func(detail string) error {
		return &ParseError{File: m.name, Line: m.line, Column: mooncakeTimestamp, Value: parsemsg.Shorten(raw), Err: ErrBadNumber, Detail: detail}
	}
	num := []byte(raw)
	if len(num) >= 2 && num[0] == '"' {
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return 0, bad("want a number, or a string holding one")
		}
		num = []byte(strings.TrimSpace(str))
	}
	if !isJSONNumber(num) {
		return 0, bad("want a number, or a string holding one (s, ms, us or ns)")
	}
	s := string(num)
	i, ierr := strconv.ParseInt(s, 10, 64)
	f, ferr := strconv.ParseFloat(s, 64)
	if ierr != nil && ferr != nil || math.IsInf(f, 0) {
		return 0, bad("want a finite number")
	}
	if m.unit == 0 && m.forced != "" {
		m.unit = map[string]time.Duration{"s": time.Second, "ms": time.Millisecond, "us": time.Microsecond, "ns": time.Nanosecond}[m.forced]
		m.unitName = m.forced + " (--request-trace-time-unit)"
	}
	if m.unit == 0 {
		for _, u := range timeUnits {
			if math.Abs(f) >= u.from {
				m.unit, m.unitName = u.unit, u.name
				break
			}
		}
	}
	if ierr == nil {
		if i > maxTimestampNs/int64(m.unit) || i < -maxTimestampNs/int64(m.unit) {
			return 0, bad("out of range in " + m.unitName)
		}
		return i * int64(m.unit), nil
	}
	ns := f * float64(m.unit)
	if math.Abs(ns) > maxTimestampNs {
		return 0, bad("out of range in " + m.unitName)
	}
	return int64(math.Round(ns)), nil
}

// TimeUnit says how the timestamps were read ("" before the first).
func (m *mooncake) TimeUnit() string { return m.unitName }

// length parses a non-negative integer token count.
func (m *mooncake) length(field string, raw json.RawMessage) (int, error) {
	if raw == nil {
		return 0, m.missing(field)
	}
	n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize)
	if err != nil || n < 0 {
		return 0, &ParseError{File: m.name, Line: m.line, Column: field, Value: parsemsg.Shorten(raw), Err: ErrBadNumber, Detail: "want a non-negative integer"}
	}
	return int(n), nil
}

// isJSONNumber reports whether raw, a valid JSON value, is a number.
func isJSONNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// parseIDs parses raw, a valid JSON value, as an array of int64, appending
// to ids. Splitting at commas is exact here: a piece parses as an integer
// only if it holds no string, array or object.
func parseIDs(raw []byte, ids []int64) ([]int64, bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return ids, false
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(body) == 0 {
		return ids, true
	}
	for len(body) > 0 {
		piece := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			piece, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(piece)), 10, 64)
		if err != nil {
			return ids, false
		}
		ids = append(ids, n)
	}
	return ids, true
}

// line returns the line of the last request read.
func (m *mooncake) lastLine() int { return m.line }
