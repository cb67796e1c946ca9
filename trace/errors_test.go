package trace_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/kvbench/kvbench/schema"
	"github.com/kvbench/kvbench/trace"
)

const (
	// h8 is the kvbench dialect's header, g8 a valid row of it.
	h8 = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase,Request,QoS"
	g8 = "0.000001,Write,100,Tier-1,k1,Prefill,1,interactive"
	// h6 is the reference's header, g6 a valid row of it.
	h6 = "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase"
	g6 = "1795255939.072664,Write,100,Tier-1,k1,Prefill"
	// hr has the columns in another order and two unknown ones. Positions:
	// Phase 1, Extra 2, Key 3, QoS 4, Tier 5, Timestamp 6, Foo 7,
	// Object_Size_Bytes 8, Operation 9, Request 10.
	hr = "Phase,Extra,Key,QoS,Tier,Timestamp,Foo,Object_Size_Bytes,Operation,Request"
)

// row8 returns a kvbench row with field i (1-based) replaced by v.
func row8(i int, v string) string { return replaceField(g8, i, v) }

// row6 returns a reference row with field i (1-based) replaced by v.
func row6(i int, v string) string { return replaceField(g6, i, v) }

// rowR returns a row of hr with the named column set to v.
func rowR(col, v string) string {
	vals := map[string]string{
		"Phase": "Decode", "Extra": "whatever", "Key": "kr", "QoS": "batch", "Tier": "Tier-2",
		"Timestamp": "3.5", "Foo": "", "Object_Size_Bytes": "7", "Operation": "Read", "Request": "9",
	}
	if _, ok := vals[col]; !ok {
		panic("unknown column " + col)
	}
	vals[col] = v
	var out []string
	for _, name := range strings.Split(hr, ",") {
		out = append(out, vals[name])
	}
	return strings.Join(out, ",")
}

func replaceField(row string, i int, v string) string {
	f := strings.Split(row, ",")
	f[i-1] = v
	return strings.Join(f, ",")
}

// lf and crlf join lines into a trace.
func lf(lines ...string) string   { return strings.Join(lines, "\n") + "\n" }
func crlf(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

type errCase struct {
	name     string
	in       string
	sentinel error
	line     int
	col      int
	colName  string   // ParseError.Name
	value    *string  // ParseError.Value, when checked
	rows     int      // records read before the error
	contains []string // substrings of Error()
	absent   []string // substrings Error() must not have
}

func ptr(s string) *string { return &s }

func errCases(tb testing.TB) []errCase {
	long := strings.Repeat("k", trace.MaxLineBytes)
	huge := strings.Repeat("k", 200<<10) // beyond the Reader's buffer
	cases := []errCase{
		// ErrBadHeader
		{name: "header/empty input", in: "", sentinel: trace.ErrBadHeader, line: 1},
		{name: "header/empty first line", in: "\n" + lf(h8, g8), sentinel: trace.ErrBadHeader, line: 1},
		{name: "header/empty first line CRLF", in: "\r\n" + crlf(h6, g6), sentinel: trace.ErrBadHeader, line: 1},
		{name: "header/BOM only", in: "\xef\xbb\xbf\n", sentinel: trace.ErrBadHeader, line: 1},
		{
			name: "header/missing three", in: crlf("Timestamp,Operation,Key", "0,Read,k"),
			sentinel: trace.ErrBadHeader, line: 1,
			contains: []string{"Object_Size_Bytes", "Tier", "Phase"},
		},
		{
			name: "header/missing all", in: lf("a,b,c", "1,2,3"), sentinel: trace.ErrBadHeader, line: 1,
			contains: []string{"Timestamp", "Operation", "Object_Size_Bytes", "Tier", "Key", "Phase"},
		},
		{
			name: "header/only optional columns", in: lf("Request,QoS"), sentinel: trace.ErrBadHeader, line: 1,
			contains: []string{"Timestamp", "Operation", "Object_Size_Bytes", "Tier", "Key", "Phase"},
		},
		{
			name: "header/names are case-sensitive", in: lf("timestamp,Operation,Object_Size_Bytes,Tier,Key,PHASE", "0,Read,1,Tier-0,k,Decode"),
			sentinel: trace.ErrBadHeader, line: 1, contains: []string{"Timestamp", "Phase"},
		},
		{
			name: "header/duplicate required", in: lf(h6+",Tier", g6+",Tier-1"), sentinel: trace.ErrBadHeader,
			line: 1, col: 7, value: ptr("Tier"), contains: []string{"column 4"},
		},
		{
			name: "header/duplicate optional", in: crlf(h8+",QoS", g8+",batch"), sentinel: trace.ErrBadHeader,
			line: 1, col: 9, value: ptr("QoS"),
		},
		{
			name: "header/duplicate in reordered", in: lf(hr + ",Key"), sentinel: trace.ErrBadHeader,
			line: 1, col: 11, value: ptr("Key"), contains: []string{"column 3"},
		},

		// ErrFieldCount
		{name: "fields/too few", in: lf(h8, g8, "0.1,Read,5,Tier-1,k,Decode,2"), sentinel: trace.ErrFieldCount, line: 3, col: 8, rows: 1},
		{name: "fields/too few CRLF", in: crlf(h6, g6, "1795255939.1,Read,5,Tier-1,k"), sentinel: trace.ErrFieldCount, line: 3, col: 6, rows: 1},
		{name: "fields/one field", in: lf(h8, "garbage"), sentinel: trace.ErrFieldCount, line: 2, col: 2},
		{name: "fields/too many", in: crlf(h6, g6, g6+",extra"), sentinel: trace.ErrFieldCount, line: 3, col: 7, rows: 1},
		{name: "fields/many too many", in: lf(h6, g6+",a,b,c,d,e"), sentinel: trace.ErrFieldCount, line: 2, col: 7},
		{name: "fields/trailing comma", in: lf(h8, g8+","), sentinel: trace.ErrFieldCount, line: 2, col: 9},
		{name: "fields/reordered too few", in: lf(hr, strings.TrimSuffix(rowR("Timestamp", "1"), ",9")), sentinel: trace.ErrFieldCount, line: 2, col: 10},
		{name: "fields/after blank lines", in: h8 + "\n\n" + g8 + "\n\r\n\nx\n", sentinel: trace.ErrFieldCount, line: 6, col: 2, rows: 1},

		// ErrBadNumber: Timestamp
		{name: "number/user negative", in: lf(h8+",User,Tokens", g8+",-1,5"), sentinel: trace.ErrBadNumber, line: 2, col: 9, colName: "User", value: ptr("-1")},
		{name: "number/tokens not a number", in: lf(h8+",User,Tokens", g8+",3,x"), sentinel: trace.ErrBadNumber, line: 2, col: 10, colName: "Tokens", value: ptr("x")},
		{name: "number/tokens above int64", in: lf(h8+",User,Tokens", g8+",3,9223372036854775808"), sentinel: trace.ErrBadNumber, line: 2, col: 10, colName: "Tokens"},
		{name: "number/ts two points", in: lf(h8, row8(1, "1.2.3")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp", value: ptr("1.2.3")},
		{name: "number/ts negative", in: lf(h8, g8, row8(1, "-1")), sentinel: trace.ErrBadNumber, line: 3, col: 1, colName: "Timestamp", value: ptr("-1"), rows: 1},
		{name: "number/ts plus", in: lf(h8, row8(1, "+1")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts exponent", in: lf(h8, row8(1, "1e3")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts empty", in: lf(h8, row8(1, "")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp", value: ptr("")},
		{name: "number/ts no integer part", in: lf(h8, row8(1, ".5")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts no decimals", in: lf(h8, row8(1, "1.")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts hex", in: lf(h8, row8(1, "0x10")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts space", in: lf(h8, row8(1, " 1.0")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts NaN", in: crlf(h6, row6(1, "NaN")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts overflow", in: lf(h8, row8(1, "9223372036.854775808")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts overflow seconds", in: lf(h8, row8(1, "99999999999")), sentinel: trace.ErrBadNumber, line: 2, col: 1, colName: "Timestamp"},
		{name: "number/ts reordered", in: lf(hr, rowR("Timestamp", "1,5")), sentinel: trace.ErrFieldCount, line: 2, col: 11},
		{name: "number/ts reordered bad", in: lf(hr, rowR("Timestamp", "1:5")), sentinel: trace.ErrBadNumber, line: 2, col: 6, colName: "Timestamp", value: ptr("1:5")},

		// ErrBadNumber: Object_Size_Bytes
		{name: "number/size letters", in: lf(h8, row8(3, "12a")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes", value: ptr("12a")},
		{name: "number/size empty", in: crlf(h6, row6(3, "")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size decimal", in: lf(h8, row8(3, "1.5")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size plus", in: lf(h8, row8(3, "+5")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size minus alone", in: lf(h8, row8(3, "-")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size overflow", in: lf(h8, row8(3, "9223372036854775808")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size overflow long", in: lf(h8, row8(3, "123456789012345678901234")), sentinel: trace.ErrBadNumber, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "number/size reordered", in: lf(hr, rowR("Object_Size_Bytes", "7b")), sentinel: trace.ErrBadNumber, line: 2, col: 8, colName: "Object_Size_Bytes"},

		// ErrBadNumber: Request
		{name: "number/request letters", in: lf(h8, g8, row8(7, "x")), sentinel: trace.ErrBadNumber, line: 3, col: 7, colName: "Request", value: ptr("x"), rows: 1},
		{name: "number/request negative", in: lf(h8, row8(7, "-1")), sentinel: trace.ErrBadNumber, line: 2, col: 7, colName: "Request"},
		{name: "number/request decimal", in: lf(h8, row8(7, "1.0")), sentinel: trace.ErrBadNumber, line: 2, col: 7, colName: "Request"},
		{name: "number/request overflow", in: lf(h8, row8(7, "18446744073709551616")), sentinel: trace.ErrBadNumber, line: 2, col: 7, colName: "Request"},
		{name: "number/request reordered", in: crlf(hr, rowR("Request", "0x1")), sentinel: trace.ErrBadNumber, line: 2, col: 10, colName: "Request"},

		// ErrBadEnum
		{name: "enum/op lowercase", in: lf(h8, row8(2, "read")), sentinel: trace.ErrBadEnum, line: 2, col: 2, colName: "Operation", value: ptr("read")},
		{name: "enum/op Both", in: crlf(h6, g6, row6(2, "Both")), sentinel: trace.ErrBadEnum, line: 3, col: 2, colName: "Operation", value: ptr("Both"), rows: 1},
		{name: "enum/op empty", in: lf(h8, row8(2, "")), sentinel: trace.ErrBadEnum, line: 2, col: 2, colName: "Operation"},
		{name: "enum/op trailing space", in: lf(h8, row8(2, "Read ")), sentinel: trace.ErrBadEnum, line: 2, col: 2, colName: "Operation"},
		{name: "enum/op reordered", in: lf(hr, rowR("Operation", "Evict")), sentinel: trace.ErrBadEnum, line: 2, col: 9, colName: "Operation"},
		{name: "enum/tier 4", in: lf(h8, row8(4, "Tier-4")), sentinel: trace.ErrBadEnum, line: 2, col: 4, colName: "Tier", value: ptr("Tier-4")},
		{name: "enum/tier lowercase", in: crlf(h6, row6(4, "tier-1")), sentinel: trace.ErrBadEnum, line: 2, col: 4, colName: "Tier"},
		{name: "enum/tier name", in: lf(h8, row8(4, "gpu")), sentinel: trace.ErrBadEnum, line: 2, col: 4, colName: "Tier"},
		{name: "enum/tier reordered", in: lf(hr, rowR("Tier", "Tier-10")), sentinel: trace.ErrBadEnum, line: 2, col: 5, colName: "Tier"},
		{name: "enum/phase Both", in: lf(h8, row8(6, "Both")), sentinel: trace.ErrBadEnum, line: 2, col: 6, colName: "Phase", value: ptr("Both")},
		{name: "enum/phase lowercase", in: crlf(h6, row6(6, "prefill")), sentinel: trace.ErrBadEnum, line: 2, col: 6, colName: "Phase"},
		{name: "enum/phase reordered", in: lf(hr, rowR("Phase", "")), sentinel: trace.ErrBadEnum, line: 2, col: 1, colName: "Phase"},
		{name: "enum/qos capital", in: lf(h8, row8(8, "Interactive")), sentinel: trace.ErrBadEnum, line: 2, col: 8, colName: "QoS", value: ptr("Interactive")},
		{name: "enum/qos none", in: crlf(h8, g8, row8(8, "none")), sentinel: trace.ErrBadEnum, line: 3, col: 8, colName: "QoS", rows: 1},
		{name: "enum/qos Both", in: lf(h8, row8(8, "Both")), sentinel: trace.ErrBadEnum, line: 2, col: 8, colName: "QoS"},
		{name: "enum/qos reordered", in: lf(hr, rowR("QoS", "read")), sentinel: trace.ErrBadEnum, line: 2, col: 4, colName: "QoS"},
		{name: "enum/qos CR", in: lf(h8, row8(8, "batch\r\r")), sentinel: trace.ErrBadEnum, line: 2, col: 8, colName: "QoS"},

		// ErrNegativeSize
		{name: "negative size", in: lf(h8, g8, row8(3, "-5")), sentinel: trace.ErrNegativeSize, line: 3, col: 3, colName: "Object_Size_Bytes", value: ptr("-5"), rows: 1},
		{name: "negative size CRLF", in: crlf(h6, row6(3, "-9223372036854775808")), sentinel: trace.ErrNegativeSize, line: 2, col: 3, colName: "Object_Size_Bytes"},
		{name: "negative size reordered", in: lf(hr, rowR("Object_Size_Bytes", "-1")), sentinel: trace.ErrNegativeSize, line: 2, col: 8, colName: "Object_Size_Bytes"},

		// ErrBadKey
		{name: "key/empty", in: lf(h8, row8(5, "")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key", value: ptr("")},
		{name: "key/space", in: lf(h8, g8, row8(5, "a b")), sentinel: trace.ErrBadKey, line: 3, col: 5, colName: "Key", value: ptr("a b"), rows: 1},
		{name: "key/tab", in: crlf(h6, row6(5, "a\tb")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key", value: ptr("a\tb")},
		{name: "key/invalid UTF-8", in: lf(h8, row8(5, "k\xff\xfe")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key", value: ptr("k\xff\xfe")},
		{name: "key/lone continuation byte", in: lf(h8, row8(5, "k\x85")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/NUL", in: lf(h8, row8(5, "k\x00")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/DEL", in: lf(h8, row8(5, "k\x7f")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/CR inside", in: lf(h8, row8(5, "a\rb")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/no-break space", in: lf(h8, row8(5, "a\u00a0b")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/ideographic space", in: lf(h8, row8(5, "a\u3000b")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/C1 control", in: lf(h8, row8(5, "a\u0085b")), sentinel: trace.ErrBadKey, line: 2, col: 5, colName: "Key"},
		{name: "key/reordered", in: lf(hr, rowR("Key", " ")), sentinel: trace.ErrBadKey, line: 2, col: 3, colName: "Key"},

		// ErrQuoted
		{name: "quoted/key", in: lf(h8, g8, row8(5, `"k"`)), sentinel: trace.ErrQuoted, line: 3, col: 5, colName: "Key", rows: 1},
		{name: "quoted/timestamp CRLF", in: crlf(h6, row6(1, `"1795255939.1"`)), sentinel: trace.ErrQuoted, line: 2, col: 1, colName: "Timestamp"},
		{name: "quoted/last", in: lf(h8, row8(8, `batch"`)), sentinel: trace.ErrQuoted, line: 2, col: 8, colName: "QoS"},
		{name: "quoted/comma inside quotes", in: lf(h6, `0,Read,1,Tier-0,"a,b",Decode`), sentinel: trace.ErrQuoted, line: 2, col: 5, colName: "Key"},
		{name: "quoted/unknown column", in: lf(hr, rowR("Extra", `"x"`)), sentinel: trace.ErrQuoted, line: 2, col: 2, colName: "Extra"},
		{name: "quoted/header", in: lf(`"Timestamp",Operation,Object_Size_Bytes,Tier,Key,Phase`, g6), sentinel: trace.ErrQuoted, line: 1, col: 1},
		{name: "quoted/header third", in: lf(`Timestamp,Operation,"Object_Size_Bytes",Tier,Key,Phase`, g6), sentinel: trace.ErrQuoted, line: 1, col: 3},

		// ErrLineTooLong
		{name: "too long/row", in: lf(h6, g6, "0,Read,1,Tier-0,"+long+",Decode"), sentinel: trace.ErrLineTooLong, line: 3, rows: 1},
		{name: "too long/beyond buffer", in: crlf(h6, "0,Read,1,Tier-0,"+huge+",Decode", g6), sentinel: trace.ErrLineTooLong, line: 2},
		{name: "too long/header", in: lf(h6+","+long, g6), sentinel: trace.ErrLineTooLong, line: 1},
		{name: "too long/no newline", in: h6 + "\n" + huge, sentinel: trace.ErrLineTooLong, line: 2},
	}
	cases = append(cases, zstdErrCases(tb)...)
	return cases
}

// zstdErrCases are the cases of ErrTruncated and ErrCorrupt.
func zstdErrCases(tb testing.TB) []errCase {
	// A stream of two blocks: the first holds the header and two rows (lines
	// 1 to 3), the second the rest.
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf, zstd.WithEncoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	io.WriteString(enc, lf(h8, g8, row8(5, "k2")))
	if err := enc.Flush(); err != nil {
		tb.Fatal(err)
	}
	firstBlockEnd := buf.Len()
	for i := range 100 {
		io.WriteString(enc, row8(5, "key"+strconv.Itoa(i))+"\n")
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	two := buf.Bytes()
	one := compress(tb, []byte(lf(h8, g8, g8)))
	garbage := append(bytes.Clone(zstdMagic), []byte(strings.Repeat("this is not a zstd frame header at all ", 4))...)
	flipped := bytes.Clone(one)
	flipped[len(flipped)-1] ^= 0xff // the frame's checksum

	return []errCase{
		{name: "truncated/in first block", in: string(one[:len(one)/2]), sentinel: trace.ErrTruncated, line: 1},
		{name: "truncated/magic only", in: string(zstdMagic), sentinel: trace.ErrTruncated, line: 1},
		{name: "truncated/checksum cut", in: string(one[:len(one)-2]), sentinel: trace.ErrTruncated, line: 1},
		{name: "truncated/in second block", in: string(two[:(firstBlockEnd+len(two))/2]), sentinel: trace.ErrTruncated, line: 4, rows: 2},
		{name: "truncated/second block header", in: string(two[:firstBlockEnd+1]), sentinel: trace.ErrTruncated, line: 4, rows: 2},
		{name: "corrupt/garbage after magic", in: string(garbage), sentinel: trace.ErrCorrupt, line: 1},
		{name: "corrupt/bad checksum", in: string(flipped), sentinel: trace.ErrCorrupt, line: 1},
		{name: "corrupt/garbage after frame", in: string(two) + strings.Repeat("garbage!", 8), sentinel: trace.ErrCorrupt, line: 104, rows: 102},
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			r := trace.NewReader(strings.NewReader(tc.in))
			r.Name = "bad.csv"
			defer r.Close()
			recs, err := readRecords(t, r)
			checkParseError(t, err, &tc)
			if len(recs) != tc.rows || r.Rows() != int64(tc.rows) {
				t.Errorf("read %d records (Rows() = %d) before the error, want %d", len(recs), r.Rows(), tc.rows)
			}
			// Sticky: every later Read returns the same error.
			var rec schema.Record
			for range 3 {
				if err2 := r.Read(&rec); err2 != err {
					t.Fatalf("Read after the error = %v, want the same %v", err2, err)
				}
			}
			if r.Rows() != int64(tc.rows) {
				t.Errorf("Rows() = %d after the error, want %d", r.Rows(), tc.rows)
			}
		})
	}
}

func checkParseError(tb testing.TB, err error, tc *errCase) {
	tb.Helper()
	if err == nil || err == io.EOF {
		tb.Fatalf("got %v, want %v", err, tc.sentinel)
	}
	if !errors.Is(err, tc.sentinel) {
		tb.Fatalf("error %q does not wrap %q", err, tc.sentinel)
	}
	for _, s := range sentinels {
		if s != tc.sentinel && errors.Is(err, s) {
			tb.Errorf("error %q also wraps %q", err, s)
		}
	}
	pe := asParseError(tb, err)
	if pe.Unwrap() != tc.sentinel || pe.Err != tc.sentinel {
		tb.Errorf("Unwrap() = %v, want %v", pe.Unwrap(), tc.sentinel)
	}
	if pe.Line != tc.line || pe.Column != tc.col || pe.Name != tc.colName {
		tb.Errorf("at line %d column %d (%q), want line %d column %d (%q): %v",
			pe.Line, pe.Column, pe.Name, tc.line, tc.col, tc.colName, err)
	}
	if pe.File != "bad.csv" {
		tb.Errorf("File = %q, want bad.csv", pe.File)
	}
	if tc.value != nil && pe.Value != *tc.value {
		tb.Errorf("Value = %q, want %q", pe.Value, *tc.value)
	}
	if len(pe.Value) > 64+len("...") {
		tb.Errorf("Value has %d bytes, want at most 64 and an ellipsis", len(pe.Value))
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		tb.Errorf("Error() is not one line: %q", msg)
	}
	if want := "trace: bad.csv:" + strconv.Itoa(tc.line) + ":"; !strings.HasPrefix(msg, want) {
		tb.Errorf("Error() = %q, want it to start %q", msg, want)
	}
	if tc.col > 0 && !strings.Contains(msg, "column "+strconv.Itoa(tc.col)) {
		tb.Errorf("Error() = %q does not name column %d", msg, tc.col)
	}
	if !strings.Contains(msg, tc.sentinel.Error()) {
		tb.Errorf("Error() = %q does not say %q", msg, tc.sentinel)
	}
	for _, s := range tc.contains {
		if !strings.Contains(msg, s) {
			tb.Errorf("Error() = %q does not contain %q", msg, s)
		}
	}
	for _, s := range tc.absent {
		if strings.Contains(msg, s) {
			tb.Errorf("Error() = %q contains %q", msg, s)
		}
	}
}

// TestMissingColumnsNamed checks that the message of a header lacking
// required columns names each missing one and no present one.
func TestMissingColumnsNamed(t *testing.T) {
	required := []string{"Timestamp", "Operation", "Object_Size_Bytes", "Tier", "Key", "Phase"}
	for mask := range 1<<len(required) - 1 { // every strict subset present
		var present, missing []string
		for i, c := range required {
			if mask&(1<<i) != 0 {
				present = append(present, c)
			} else {
				missing = append(missing, c)
			}
		}
		hdr := strings.Join(append(present, "Request", "Other"), ",")
		r := trace.NewReader(strings.NewReader(hdr + "\n"))
		_, err := readRecords(t, r)
		pe := asParseError(t, err)
		if pe.Err != trace.ErrBadHeader || pe.Line != 1 {
			t.Fatalf("header %q: %v, want ErrBadHeader at line 1", hdr, err)
		}
		for _, c := range missing {
			if !strings.Contains(pe.Detail, c) {
				t.Errorf("header %q: detail %q does not name missing %s", hdr, pe.Detail, c)
			}
		}
		for _, c := range present {
			// "Tier" is not a substring of another column name, nor is any other.
			if strings.Contains(pe.Detail, c) {
				t.Errorf("header %q: detail %q names present %s", hdr, pe.Detail, c)
			}
		}
	}
}

// TestHeaderErrors: Header reports a bad header as an error, not as a
// header.
func TestHeaderErrors(t *testing.T) {
	for _, in := range []string{"", "\n", lf("a,b"), lf(h6 + ",Key"), lf(`"Timestamp"`)} {
		r := trace.NewReader(strings.NewReader(in))
		hdr, err := r.Header()
		if !errors.Is(err, trace.ErrBadHeader) && !errors.Is(err, trace.ErrQuoted) {
			t.Errorf("Header() of %q = %q, %v; want a header error", in, hdr, err)
		}
		if hdr != nil {
			t.Errorf("Header() of %q = %q; want nil with the error", in, hdr)
		}
		var rec schema.Record
		if err2 := r.Read(&rec); err2 != err {
			t.Errorf("Read after Header: %v, want %v", err2, err)
		}
	}
}

// TestLineLengthLimit checks the MaxLineBytes boundary exactly, with LF,
// CRLF and no line ending.
func TestLineLengthLimit(t *testing.T) {
	line := func(n int) string {
		prefix, suffix := "0,Read,1,Tier-0,", ",Decode"
		return prefix + strings.Repeat("k", n-len(prefix)-len(suffix)) + suffix
	}
	for _, end := range []string{"\n", "\r\n", ""} {
		for _, n := range []int{trace.MaxLineBytes - 1, trace.MaxLineBytes, trace.MaxLineBytes + 1, trace.MaxLineBytes + 2} {
			in := h6 + "\n" + line(n) + end
			r := trace.NewReader(strings.NewReader(in))
			recs, err := readRecords(t, r)
			if n <= trace.MaxLineBytes {
				if err != io.EOF || len(recs) != 1 {
					t.Errorf("line of %d bytes + %q: %d records, %v; want 1 record", n, end, len(recs), err)
				}
				continue
			}
			if !errors.Is(err, trace.ErrLineTooLong) {
				t.Errorf("line of %d bytes + %q: %v, want ErrLineTooLong", n, end, err)
			} else if pe := asParseError(t, err); pe.Line != 2 {
				t.Errorf("line of %d bytes: error at line %d, want 2", n, pe.Line)
			}
		}
	}
}

// TestErrorMessage pins the documented one-line form of a ParseError.
func TestErrorMessage(t *testing.T) {
	r := trace.NewReader(strings.NewReader(lf(h8, row8(3, "12a"))))
	r.Name = "run.csv.zst"
	_, err := readRecords(t, r)
	want := `trace: run.csv.zst:2: column 3 (Object_Size_Bytes): "12a": not a valid number: want a non-negative integer`
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err, want)
	}

	// Without a name the message still has the line.
	r = trace.NewReader(strings.NewReader(lf(h8, g8, row8(2, "read"))))
	_, err = readRecords(t, r)
	if err == nil || !strings.HasPrefix(err.Error(), `trace: 3: column 2 (Operation): "read": `) {
		t.Errorf("Error() = %q", err)
	}

	// A long value is shortened; control characters are quoted.
	r = trace.NewReader(strings.NewReader(lf(h8, row8(3, strings.Repeat("9", 100)+"\x01"))))
	r.Name = "x"
	_, err = readRecords(t, r)
	pe := asParseError(t, err)
	if pe.Value != strings.Repeat("9", 64)+"..." {
		t.Errorf("Value = %q, want 64 nines and an ellipsis", pe.Value)
	}
	if strings.ContainsAny(err.Error(), "\x01\r\n") {
		t.Errorf("Error() = %q holds a control character", err)
	}

	// A value is cut on a rune boundary: a two-byte rune across byte 64
	// is left out whole, not split into an invalid byte the message
	// would show as \xc3.
	r = trace.NewReader(strings.NewReader(lf(h8, row8(3, strings.Repeat("9", 63)+strings.Repeat("é", 10)))))
	r.Name = "x"
	_, err = readRecords(t, r)
	pe = asParseError(t, err)
	if want := strings.Repeat("9", 63) + "..."; pe.Value != want {
		t.Errorf("Value = %q, want %q", pe.Value, want)
	}
	if !utf8.ValidString(pe.Value) || strings.Contains(err.Error(), `\x`) {
		t.Errorf("Error() = %q splits a rune", err)
	}
}

// TestOpenMissing: a missing file is an I/O error, not a ParseError.
func TestOpenMissing(t *testing.T) {
	_, err := trace.Open(t.TempDir() + "/nope.csv")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
	var pe *trace.ParseError
	if errors.As(err, &pe) {
		t.Errorf("Open of a missing file gave a ParseError: %v", err)
	}
}

// TestTierMessage: a row on a tier that is none names every tier the
// format has, Tier-3 (kvtrace --object-tier) included, which it reads.
func TestTierMessage(t *testing.T) {
	r := trace.NewReader(strings.NewReader(lf(h8, row8(4, "Tier-3"), row8(4, "Tier-7"))))
	defer r.Close()
	var rec schema.Record
	if err := r.Read(&rec); err != nil || rec.Tier != schema.TierObject {
		t.Fatalf("Tier-3: %v, tier %v", err, rec.Tier)
	}
	err := r.Read(&rec)
	var pe *trace.ParseError
	if !errors.As(err, &pe) || pe.Detail != "want Tier-0, Tier-1, Tier-2 or Tier-3" {
		t.Errorf("Tier-7: %v", err)
	}
}
