package reqtrace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
)

func TestFormatNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
	}{
		{"auto", FormatAuto},
		{"burstgpt", FormatBurstGPT},
		{"sharegpt", FormatShareGPT},
		{"mooncake", FormatMooncake},
		{"azure", FormatAzure},
		{"BurstGPT", FormatBurstGPT},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFormat(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseFormat(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			if strings.ToLower(tc.in) != got.String() {
				t.Errorf("String() = %q, want %q", got.String(), strings.ToLower(tc.in))
			}
			var f Format
			if err := f.UnmarshalText([]byte(tc.in)); err != nil || f != tc.want {
				t.Errorf("UnmarshalText(%q) = %v, %v", tc.in, f, err)
			}
		})
	}
	for _, bad := range []string{"", "csv", "burst"} {
		if _, err := ParseFormat(bad); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q) error %v, want ErrUnknownFormat", bad, err)
		}
	}
	if s := Format(99).String(); s != "Format(99)" {
		t.Errorf("Format(99).String() = %q", s)
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Format
	}{
		{"burstgpt_1_head30.csv", FormatBurstGPT},
		{"sharegpt_sample50.json", FormatShareGPT},
		{"mooncake_head200.jsonl", FormatMooncake},
		{"azure_code_head200.csv", FormatAzure},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b := fixture(t, tc.file)
			got, err := Detect(b[:min(len(b), 1024)])
			if err != nil || got != tc.want {
				t.Fatalf("Detect = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   string
		want Format
	}{
		{"burstgpt v2", "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n", FormatBurstGPT},
		{"azure 2024", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2024-05-10 00:00:00.009930+00:00,1,2", FormatAzure},
		{"bom and blank lines", "\ufeff\n\n  [ {", FormatShareGPT},
		{"mooncake cut", `{"timestamp": 0, "input_length": 67`, FormatMooncake},
		{"quoted header", `"TIMESTAMP","ContextTokens","GeneratedTokens"`, FormatAzure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect([]byte(tc.in))
			if err != nil || got != tc.want {
				t.Fatalf("Detect = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		in    string
		line  int
		value string
	}{
		{"empty", "", 1, ""},
		{"blank", " \n\r\n", 3, ""},
		{"prose", "hello, world\n", 1, "hello, world"},
		{"json object", "\n{\"a\": 1}\n", 2, `{"a": 1}`},
		{"i/o trace", "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\r\n", 1, "Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase"},
		{"azure lacking a column", "TIMESTAMP,ContextTokens\n", 1, "TIMESTAMP,ContextTokens"},
		{"binary", "\x28\xb5\x2f\xfd\x00", 1, "\x28\xb5\x2f\xfd\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Detect([]byte(tc.in))
			pe := wantParseError(t, err, tc.line, "", ErrUnknownFormat)
			if pe.Value != tc.value {
				t.Errorf("Value %q, want %q", pe.Value, tc.value)
			}
		})
	}
}

func TestNewReaderAuto(t *testing.T) {
	for _, file := range []string{"burstgpt_1_head30.csv", "sharegpt_sample50.json", "mooncake_head200.jsonl", "azure_code_head200.csv"} {
		t.Run(file, func(t *testing.T) {
			b := fixture(t, file)
			f, err := Detect(b)
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, newReader(t, string(b), f, Options{}))
			got := readAll(t, newReader(t, string(b), FormatAuto, Options{}))
			if !reflect.DeepEqual(got, want) {
				t.Fatal("FormatAuto reads differently from the detected format")
			}
		})
	}
	_, err := NewReader(strings.NewReader("nonsense\n"), FormatAuto, Options{Name: "x.txt"})
	pe := wantParseError(t, err, 1, "", ErrUnknownFormat)
	if pe.File != "x.txt" {
		t.Errorf("File %q, want x.txt", pe.File)
	}
	if _, err := NewReader(strings.NewReader("[]"), FormatShareGPT, Options{MaxConversations: -1}); err == nil {
		t.Error("MaxConversations -1: no error")
	}
	if _, err := NewReader(strings.NewReader("[]"), Format(42), Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Format(42): error %v, want ErrUnknownFormat", err)
	}
}

// TestOneByteReader reads every fixture one byte at a time, which moves
// every buffer boundary, and wants the same requests.
func TestOneByteReader(t *testing.T) {
	for _, tc := range []struct {
		file string
		f    Format
	}{
		{"burstgpt_1_head30.csv", FormatBurstGPT},
		{"sharegpt_sample50.json", FormatShareGPT},
		{"mooncake_head200.jsonl", FormatMooncake},
		{"azure_code_head200.csv", FormatAzure},
	} {
		t.Run(tc.f.String(), func(t *testing.T) {
			b := fixture(t, tc.file)
			want := readAll(t, newReader(t, string(b), tc.f, Options{}))
			if len(want) == 0 {
				t.Fatal("no requests")
			}
			for _, f := range []Format{tc.f, FormatAuto} {
				r, err := NewReader(iotest.OneByteReader(bytes.NewReader(b)), f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, r); !reflect.DeepEqual(got, want) {
					t.Fatalf("%v: one byte at a time gives %d requests, differently from %d at once", f, len(got), len(want))
				}
			}
			r, err := NewReader(iotest.DataErrReader(bytes.NewReader(b)), tc.f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, r); !reflect.DeepEqual(got, want) {
				t.Fatal("DataErrReader (EOF with the last data) reads differently")
			}
		})
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadErrorMidStream cuts every fixture in the middle with an I/O
// error, which must come back wrapped, not as malformed input, and stay.
func TestReadErrorMidStream(t *testing.T) {
	boom := errors.New("disk on fire")
	for _, tc := range []struct {
		file string
		f    Format
	}{
		{"burstgpt_1_head30.csv", FormatBurstGPT},
		{"sharegpt_sample50.json", FormatShareGPT},
		{"mooncake_head200.jsonl", FormatMooncake},
		{"azure_code_head200.csv", FormatAzure},
	} {
		t.Run(tc.f.String(), func(t *testing.T) {
			b := fixture(t, tc.file)
			src := iotest.OneByteReader(&failingReader{data: b[:len(b)/2], err: boom})
			r, err := NewReader(src, tc.f, Options{Name: tc.file})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAllErr(r)
			if !errors.Is(err, boom) {
				t.Fatalf("after %d requests: error %v, want it to wrap %v", len(got), err, boom)
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				t.Errorf("an I/O error came back as a *ParseError: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "reqtrace: "+tc.file+":") {
				t.Errorf("message %q does not name the file", err)
			}
			if len(got) == 0 {
				t.Error("no request before the error")
			}
			if err2 := r.Next(&Request{}); err2 != err {
				t.Errorf("error not sticky: then %v", err2)
			}
		})
	}
	// An error before the first byte, from NewReader itself.
	_, err := NewReader(&failingReader{err: boom}, FormatAuto, Options{})
	if !errors.Is(err, boom) {
		t.Errorf("NewReader: error %v, want %v", err, boom)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	b := fixture(t, "mooncake_head200.jsonl")
	want := readAll(t, newReader(t, string(b), FormatMooncake, Options{}))

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zst := enc.EncodeAll(b, nil)
	enc.Close()

	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain.jsonl", b},
		{"trace.jsonl.gz", gz.Bytes()},
		{"trace.jsonl.zst", zst},
		// pzstd writes a skippable frame (the next frame's size) before
		// each frame; Open took such a stream for text.
		{"pzstd.jsonl.zst", append([]byte{0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, byte(len(zst)), byte(len(zst) >> 8), byte(len(zst) >> 16), 0}, zst...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(p, FormatAuto, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			if f.Format() != FormatMooncake {
				t.Errorf("Format() = %v, want mooncake", f.Format())
			}
			if got := readAll(t, f); !reflect.DeepEqual(got, want) {
				t.Errorf("read %d requests, differently from the plain file", len(got))
			}
			if f.Skipped() != 0 || f.SkipErrors() != nil {
				t.Errorf("Skipped %d, SkipErrors %v", f.Skipped(), f.SkipErrors())
			}
			if err := f.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := f.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}

	// Errors name the path.
	p := filepath.Join(dir, "junk.txt")
	os.WriteFile(p, []byte("junk\n"), 0o644)
	_, err = Open(p, FormatAuto, Options{})
	if pe := wantParseError(t, err, 1, "", ErrUnknownFormat); pe.File != p {
		t.Errorf("File %q, want %q", pe.File, p)
	}
	if _, err := Open(filepath.Join(dir, "absent.csv"), FormatAuto, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: error %v, want os.ErrNotExist", err)
	}
	os.WriteFile(p, []byte{0x1f, 0x8b, 0, 0}, 0o644)
	if _, err := Open(p, FormatAuto, Options{}); err == nil || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("broken gzip: error %v", err)
	}

	// A BurstGPT file: Skipped comes through File.
	p = filepath.Join(dir, "b.csv")
	os.WriteFile(p, []byte("Timestamp,Request tokens,Response tokens\n1,2,3\nx,2,3\n"), 0o644)
	f, err := Open(p, FormatBurstGPT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := readAll(t, f); len(got) != 1 || f.Skipped() != 1 || len(f.SkipErrors()) != 1 {
		t.Errorf("%d requests, %d skipped (%v)", len(got), f.Skipped(), f.SkipErrors())
	}
}

func TestParseErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *ParseError
		want string
	}{
		{
			&ParseError{File: "b.csv", Line: 22, Column: "Request tokens", Value: "12a", Err: ErrBadNumber, Detail: "want a non-negative integer"},
			`reqtrace: b.csv:22: Request tokens: "12a": not a valid number: want a non-negative integer`,
		},
		{
			&ParseError{Line: 3, Err: ErrBadJSON, Detail: "unexpected end of input"},
			`reqtrace: line 3: malformed json: unexpected end of input`,
		},
		{
			&ParseError{File: "m.jsonl", Line: 7, Column: "hash_ids", Err: ErrMissingField},
			`reqtrace: m.jsonl:7: hash_ids: missing field`,
		},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
		if !errors.Is(tc.err, tc.err.Err) {
			t.Errorf("%v does not unwrap to its sentinel", tc.err)
		}
	}
}

func TestSentinelsDistinct(t *testing.T) {
	all := []error{ErrUnknownFormat, ErrBadHeader, ErrFieldCount, ErrBadCSV, ErrBadNumber, ErrBadTime, ErrBadJSON, ErrMissingField, ErrInconsistent, ErrTooLong, ErrNotPair}
	seen := map[string]bool{}
	for _, err := range all {
		msg := err.Error()
		if seen[msg] || msg != strings.ToLower(msg) || strings.HasSuffix(msg, ".") {
			t.Errorf("sentinel %q: duplicate, capitalised or ending in a period", msg)
		}
		seen[msg] = true
	}
}

func TestTooLongLine(t *testing.T) {
	long := strings.Repeat("1", MaxLineBytes+8<<10)
	for _, tc := range []struct {
		name string
		in   string
		f    Format
		line int
	}{
		{"burstgpt", "Timestamp,Request tokens,Response tokens\n1,2,3\n2," + long + ",3\n", FormatBurstGPT, 3},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,1," + long + "\r\n", FormatAzure, 2},
		{"mooncake", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}` + "\n" + `{"timestamp": ` + long + "}\n", FormatMooncake, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.in), tc.f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAllErr(r)
			wantParseError(t, err, tc.line, "", ErrTooLong)
			if len(got) != 1 && tc.f != FormatAzure {
				t.Errorf("%d requests before the long line, want 1", len(got))
			}
		})
	}
	// A line just under the limit is fine.
	ids := strings.Repeat("7, ", (MaxLineBytes-200)/3)
	n := strings.Count(ids, ",")
	line := `{"timestamp": 0, "input_length": ` + strconv.Itoa((n+1)*512) + `, "output_length": 1, "hash_ids": [` + ids + "7]}\n"
	if len(line) > MaxLineBytes {
		t.Fatalf("test line is %d bytes", len(line))
	}
	r := newReader(t, line, FormatMooncake, Options{})
	got := readAll(t, r)
	if len(got) != 1 || len(got[0].HashIDs) != n+1 {
		t.Errorf("long line: %d requests", len(got))
	}
}
