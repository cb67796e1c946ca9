package reqtrace

import (
	"strconv"
	"strings"
	"testing"
)

// TestSyntaxErrorPosition: a line that is not JSON or not CSV is named by
// file, line and column, the column of the byte where it goes wrong, and
// quoted from about there. A Mooncake line said only its line and quoted
// its first 64 bytes (`"{\"timestamp\": 5, \"input_length\": 600,
// \"output_length\": 5, \"hash_...": malformed json: invalid character
// 'x'`), where its hash_ids, which hold the error, run to hundreds of
// bytes; a CSV quote error and a ShareGPT one said their line alone.
func TestSyntaxErrorPosition(t *testing.T) {
	good := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}` + "\n"
	badIDs := `{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1, x]}`
	sharegpt := "[\n  {\"id\": \"a\", \"conversations\": [\n    {\"from\": \"human\", \"value\": \"hi\"} x\n"
	sharegpt2 := "[\n  {\"id\": \"a\", \"conversations\": [\n    {\"from\": \"human\", \"value\": \"hi\"},\n    {\"from\": \"gpt\", \"value\": \"yo\"}\n  ]},\n" +
		"  {\"id\": \"b\", \"conversations\": [\n    {\"from\": \"human\", \"value\": \"hi\"},\n    {\"from\": \"gpt\", \"value\": \"yo\"}, x\n  ]}\n]\n"
	azureHead := "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.9799600,4808,10\r\n"
	for _, tt := range []struct {
		name, in string
		f        Format
		sentinel error
		line     int
		col      int
		value    string // held by the quoted value; "" for none
	}{
		{"mooncake, bad value", good + badIDs + "\n", FormatMooncake, ErrBadJSON, 2, strings.Index(badIDs, "x") + 1, `[1, x]}`},
		{"mooncake, indented", good + "  \t" + badIDs + "\n", FormatMooncake, ErrBadJSON, 2, strings.Index(badIDs, "x") + 4, `[1, x]}`},
		{"mooncake, cut short", good + badIDs[:40] + "\n", FormatMooncake, ErrBadJSON, 2, 41, `"input_length": 6`},
		{"mooncake, no colon", good + `{"timestamp" 5}` + "\n", FormatMooncake, ErrBadJSON, 2, 14, `{"timestamp" 5}`},
		{"azure, bare quote", azureHead + "2023-11-16 18:17:04.0319600,31\"80,8\r\n", FormatAzure, ErrBadCSV, 3, 31, ""},
		{"azure, quote left open", azureHead + "2023-11-16 18:17:04.0319600,3180,\"8\r\n", FormatAzure, ErrBadCSV, 3, 37, ""},
		// Left open over lines, the reader gives up at the end of the
		// input: the line where the field began is said, and no column.
		{"azure, quote left open over lines", azureHead + "2023-11-16 18:17:04.0319600,3180,\"8\r\nx,y\r\n", FormatAzure, ErrBadCSV, 3, 0, ""},
		{"sharegpt", sharegpt, FormatShareGPT, ErrBadJSON, 3, colOf(sharegpt, "x"), ""},
		// In a later element: the decoder's offsets leave out the bytes
		// its Token calls read, the commas between elements among them.
		{"sharegpt, second element", sharegpt2, FormatShareGPT, ErrBadJSON, 8, colOf(sharegpt2, "x"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tt.in), tt.f, Options{Name: "t"})
			if err == nil {
				_, err = readAllErr(r)
			}
			pe := wantParseError(t, err, tt.line, "", tt.sentinel)
			if pe.Col != tt.col {
				t.Errorf("%v: column %d, want %d", err, pe.Col, tt.col)
			}
			at := "t:" + strconv.Itoa(tt.line) + ": "
			if tt.col > 0 {
				at = "t:" + strconv.Itoa(tt.line) + ":" + strconv.Itoa(tt.col) + ": "
			}
			if !strings.HasPrefix(err.Error(), "reqtrace: "+at) {
				t.Errorf("message %q: want it to start %q", err, "reqtrace: "+at)
			}
			if tt.value != "" && !strings.Contains(pe.Value, tt.value) {
				t.Errorf("%v: value %q, want it to hold %q", err, pe.Value, tt.value)
			}
		})
	}
}

// colOf is the 1-based column of sub's first occurrence in s, on its line.
func colOf(s, sub string) int {
	i := strings.Index(s, sub)
	return i - strings.LastIndexByte(s[:i], '\n')
}
