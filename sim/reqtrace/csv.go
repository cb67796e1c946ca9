package reqtrace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// errBudget is what budget returns when a record runs past MaxLineBytes.
var errBudget = errors.New("record too long")

// budget limits how much csv.Reader can read for one record: encoding/csv
// buffers a whole record, whatever its length, so the reader under it runs
// dry after MaxLineBytes until reset, which csvTable does before each
// record. csv.Reader's own buffer reads ahead by at most 4 KiB, so the
// bound is MaxLineBytes give or take that.
type budget struct {
	r io.Reader
	n int
}

func (b *budget) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBudget
	}
	if len(p) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= n
	return n, err
}

// crLines passes br through with each carriage return that does not start
// a CRLF made a line feed: Python's csv module, as kv-cache.py reads a
// BurstGPT file, ends a row at a lone CR (old Mac line endings), where
// encoding/csv keeps it in the field, so that a file of such lines was
// one header row and no requests.
type crLines struct{ br *bufio.Reader }

func (c *crLines) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	for i := 0; i < n; i++ {
		if p[i] != '\r' {
			continue
		}
		if i+1 < n {
			if p[i+1] != '\n' {
				p[i] = '\n'
			}
		} else if next, perr := c.br.Peek(1); perr != nil || next[0] != '\n' {
			p[i] = '\n'
		}
	}
	return n, err
}

// csvTable is a CSV input read one record at a time, with columns found by
// header name.
type csvTable struct {
	*base
	cr      *csv.Reader
	bud     *budget
	header  []string
	columns map[string]int // header name -> field index; the last wins, as in Python's csv.DictReader
	line    int            // line of the last record read
}

func newCSVTable(b *base, r io.Reader, lazyQuotes bool) *csvTable {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	bud := &budget{r: &crLines{br: br}}
	cr := csv.NewReader(bud)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = lazyQuotes
	cr.ReuseRecord = true
	return &csvTable{base: b, cr: cr, bud: bud}
}

// read returns the next record. Errors other than a *csv.ParseError (a row
// that is not CSV, returned as a *ParseError with ErrBadCSV, after which
// reading may go on) are final: io.EOF, a too-long row, an I/O error.
func (t *csvTable) read() ([]string, error) {
	t.bud.n = MaxLineBytes
	rec, err := t.cr.Read()
	if err != nil {
		var ce *csv.ParseError
		switch {
		case err == io.EOF:
			return nil, io.EOF
		case err == errBudget:
			return nil, &ParseError{File: t.name, Line: t.line + 1, Err: ErrTooLong, Detail: "a row is limited to " + strconv.Itoa(MaxLineBytes) + " bytes"}
		case t.isIO(err):
			return nil, parsemsg.ReadError("reqtrace", t.name, t.line+1, err)
		case errors.As(err, &ce):
			t.line = ce.Line
			pe := &ParseError{File: t.name, Line: ce.StartLine, Err: ErrBadCSV, Detail: ce.Err.Error()}
			if ce.Line == ce.StartLine {
				// Where on the line; a quoted field left open runs on to
				// where the reader gave up, and its line is the one to see.
				pe.Col = ce.Column
			}
			return nil, pe
		}
		return nil, parsemsg.ReadError("reqtrace", t.name, t.line+1, err)
	}
	t.line, _ = t.cr.FieldPos(0)
	return rec, nil
}

// readHeader reads the header row and indexes its names, trimmed of spaces.
func (t *csvTable) readHeader() error {
	rec, err := t.read()
	if err != nil {
		if err == io.EOF {
			return &ParseError{File: t.name, Line: 1, Err: ErrBadHeader, Detail: "empty input, want a header row"}
		}
		return err
	}
	t.header = make([]string, len(rec))
	t.columns = make(map[string]int, len(rec))
	for i, name := range rec {
		name = strings.TrimSpace(name)
		t.header[i] = name
		t.columns[name] = i
	}
	return nil
}

// column returns the index of the column named name, or -1.
func (t *csvTable) column(name string) int {
	if i, ok := t.columns[name]; ok {
		return i
	}
	return -1
}

// missing returns the ErrBadHeader error for required columns absent from
// the header.
func (t *csvTable) missing(names []string, want string) error {
	return &ParseError{
		File:   t.name,
		Line:   t.line,
		Column: strings.Join(names, ", "),
		Value:  parsemsg.Shorten(strings.Join(t.header, ",")),
		Err:    ErrBadHeader,
		Detail: "missing column, want " + want,
	}
}

// bad returns a *ParseError about field i of the record on the current
// line.
func (t *csvTable) bad(i int, value string, err error, detail string) *ParseError {
	line := t.line
	if strings.TrimSpace(value) == "" {
		detail = "empty field, " + detail
	}
	if i < len(t.header) && i >= 0 {
		return &ParseError{File: t.name, Line: line, Column: t.header[i], Value: parsemsg.Shorten(value), Err: err, Detail: detail}
	}
	return &ParseError{File: t.name, Line: line, Value: parsemsg.Shorten(value), Err: err, Detail: detail}
}

// parseCount parses a token count: a non-negative decimal integer, as
// Python's int() reads it (spaces around it, a sign, and underscores
// between digits allowed: "1_000" is 1000).
func parseCount(s string) (int, bool) {
	n, ok := parseInt(s)
	if !ok || n < 0 || n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}

// parseInt parses a decimal integer as Python's int() reads it: spaces
// around it, a sign, and underscores between digits allowed; any Unicode
// decimal digit is a digit and any Unicode space a space (pyASCII).
func parseInt(s string) (int64, bool) { return pyParse(s, parseIntASCII) }

// pyParse parses s with parse, and where that refuses it, s with its
// Unicode digits and spaces made ASCII (pyASCII): the ASCII text, nearly
// every field, is read once.
func pyParse[T any](s string, parse func(string) (T, bool)) (T, bool) {
	if v, ok := parse(s); ok {
		return v, true
	}
	if a, ok := pyASCII(s); ok {
		return parse(a)
	}
	var zero T
	return zero, false
}

// parseIntASCII is parseInt of ASCII digits.
func parseIntASCII(s string) (int64, bool) {
	s, ok := pyDigits(strings.TrimSpace(s))
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// pyASCII is s as Python's int() and float() read it before they parse
// (CPython's _PyUnicode_TransformDecimalAndSpaceToASCII): each non-ASCII
// space (unicode.IsSpace, the same 19 code points as Python's
// str.isspace above U+007F) becomes ' ' and each decimal digit
// (unicode.Nd: '٣' is 3, '１２' is 12) its ASCII digit. False when s is
// ASCII already (nothing to read again), is not UTF-8, or has another
// non-ASCII character, which neither function accepts. The parsers try
// the text as it is first, so ASCII fields never come here.
func pyASCII(s string) (string, bool) {
	b := make([]byte, 0, len(s))
	changed := false
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
			continue
		case r == utf8.RuneError:
			return "", false
		case unicode.IsSpace(r):
			b = append(b, ' ')
		default:
			d, ok := decimalDigit(r)
			if !ok {
				return "", false
			}
			b = append(b, '0'+d)
		}
		changed = true
	}
	return string(b), changed
}

// decimalDigit is the value of the Unicode decimal digit r (category Nd).
// Unicode encodes each decimal digit set as ten contiguous code points
// from its zero, and Go's unicode.Nd table merges adjacent sets into one
// range of stride 1 starting at a zero (TestDecimalDigitRanges checks
// both), so the value is the offset in the range modulo 10.
func decimalDigit(r rune) (byte, bool) {
	if r <= unicode.MaxLatin1 {
		return 0, false // '0'-'9' are ASCII; Latin-1 has no other
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	return 0, false
}

// pyDigits removes the underscores of a decimal number's text, each of
// which Python's int() and float() allow only between two digits ("1_000",
// "0.000_1", "1e1_0"); false if one stands anywhere else.
func pyDigits(s string) (string, bool) {
	if !strings.Contains(s, "_") {
		return s, true
	}
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && (!isDigit(i-1) || !isDigit(i+1)) {
			return "", false
		}
	}
	return strings.ReplaceAll(s, "_", ""), true
}

// maxSeconds bounds a timestamp in seconds, so that the difference of two
// is a time.Duration: 4.5e9 s is 142 years, and Unix epoch seconds fit.
const maxSeconds = 4.5e9

// parseSeconds parses a decimal number of seconds into nanoseconds, as
// Python's float() reads finite decimal text: spaces around it, a sign, a
// fraction, an exponent and underscores between digits are allowed; inf,
// nan and hex are not; any Unicode decimal digit is a digit and any
// Unicode space a space (pyASCII). Plain decimals ("1700000000.123456")
// are converted exactly, rounded to the nanosecond; only those with an
// exponent go through a float64.
func parseSeconds(s string) (int64, bool) { return pyParse(s, parseSecondsASCII) }

// parseSecondsASCII is parseSeconds of ASCII digits.
func parseSecondsASCII(s string) (int64, bool) {
	s, ok := pyDigits(strings.TrimSpace(s))
	if !ok || s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+', '-':
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, dot := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) {
		if dot || strings.ContainsAny(s, "eE") {
			return parseSecondsFloat(s, neg)
		}
		return 0, false
	}
	if len(intPart) > 10 {
		intPart = strings.TrimLeft(intPart, "0")
		if len(intPart) > 10 {
			return 0, false
		}
	}
	sec := int64(0)
	for i := 0; i < len(intPart); i++ {
		sec = sec*10 + int64(intPart[i]-'0')
	}
	if sec > maxSeconds {
		return 0, false
	}
	ns := int64(0)
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	if len(frac) > 9 && frac[9] >= '5' {
		ns++ // round half up at the nanosecond
	}
	v := sec*1e9 + ns
	if neg {
		v = -v
	}
	return v, true
}

// parseSecondsFloat parses s, unsigned, with an exponent.
func parseSecondsFloat(s string, neg bool) (int64, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v > maxSeconds || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	if neg {
		v = -v
	}
	return int64(math.Round(v * 1e9)), true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
