package reqtrace

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMooncakeSample(t *testing.T) {
	got := readAll(t, newReader(t, string(fixture(t, "mooncake_head200.jsonl")), FormatMooncake, Options{}))
	if len(got) != 200 {
		t.Fatalf("%d requests, want 200", len(got))
	}
	seq := func(first int64, from, to int64) []int64 {
		ids := []int64{first}
		for i := from; i <= to; i++ {
			ids = append(ids, i)
		}
		return ids
	}
	for _, tc := range []struct {
		i    int
		want Request
	}{
		{0, Request{InputTokens: 6758, OutputTokens: 500, HashIDs: seq(0, 1, 13), BlockTokens: 512}},
		{1, Request{InputTokens: 7322, OutputTokens: 490, HashIDs: seq(0, 14, 27), BlockTokens: 512}},
		{2, Request{InputTokens: 7236, OutputTokens: 794, HashIDs: seq(0, 28, 41), BlockTokens: 512}},
		{3, Request{InputTokens: 2290, OutputTokens: 316, HashIDs: seq(0, 42, 45), BlockTokens: 512}},
		{10, Request{Arrival: 3 * time.Second, Stamp: 3 * time.Second, InputTokens: 13544, OutputTokens: 71, HashIDs: seq(0, 219, 244), BlockTokens: 512}},
	} {
		if !reflect.DeepEqual(got[tc.i], tc.want) {
			t.Errorf("request %d = %+v, want %+v", tc.i, got[tc.i], tc.want)
		}
	}
	if last := got[199].Arrival; last != 72*time.Second {
		t.Errorf("last arrival %v, want 72s", last)
	}
}

func TestMooncakeLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Request
	}{
		{
			"crlf, blank lines, no final newline, extra fields",
			"\r\n{\"timestamp\": 1000, \"input_length\": 512, \"output_length\": 3, \"hash_ids\": [5], \"extra\": \"x\"}\r\n\r\n   \n" +
				`{"hash_ids": [5, 6], "output_length": 0, "input_length": 513, "timestamp": 1250}`,
			[]Request{
				{Stamp: time.Second, InputTokens: 512, OutputTokens: 3, HashIDs: []int64{5}, BlockTokens: 512},
				{Arrival: 250 * time.Millisecond, Stamp: 1250 * time.Millisecond, InputTokens: 513, HashIDs: []int64{5, 6}, BlockTokens: 512},
			},
		},
		{
			"zero input, fractional and out-of-order milliseconds, big ids",
			`{"timestamp": 10, "input_length": 0, "output_length": 1, "hash_ids": []}` + "\n" +
				`{"timestamp": 11.5, "input_length": 1, "output_length": 1, "hash_ids": [ -1 ]}` + "\n" +
				`{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [9223372036854775807]}` + "\n",
			[]Request{
				{Stamp: 10 * time.Millisecond, InputTokens: 0, OutputTokens: 1},
				{Arrival: 1500 * time.Microsecond, Stamp: 11500 * time.Microsecond, InputTokens: 1, OutputTokens: 1, HashIDs: []int64{-1}, BlockTokens: 512},
				{Arrival: 1500 * time.Microsecond, Stamp: 5 * time.Millisecond, InputTokens: 1, OutputTokens: 1, HashIDs: []int64{9223372036854775807}, BlockTokens: 512},
			},
		},
		{"empty input", "", nil},
		{"blank lines only", "\n\n \r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, newReader(t, tc.in, FormatMooncake, Options{}))
			if len(got) != len(tc.want) {
				t.Fatalf("%d requests %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range tc.want {
				if !reflect.DeepEqual(got[i], tc.want[i]) {
					t.Errorf("request %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestMooncakeErrors(t *testing.T) {
	const good = `{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [1, 2]}`
	for _, tc := range []struct {
		name   string
		line   string
		column string
		want   error
	}{
		{"not json", `{"timestamp": 0,`, "", ErrBadJSON},
		{"garbage", `hello`, "", ErrBadJSON},
		{"an array", `[1, 2]`, "", ErrBadJSON},
		{"a number", `17`, "", ErrBadJSON},
		{"two objects", good + good, "", ErrBadJSON},
		{"null", `null`, "timestamp", ErrMissingField},
		{"no timestamp", `{"input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrMissingField},
		{"no input_length", `{"timestamp": 1, "output_length": 1, "hash_ids": [1]}`, "input_length", ErrMissingField},
		{"no output_length", `{"timestamp": 1, "input_length": 1, "hash_ids": [1]}`, "output_length", ErrMissingField},
		{"no hash_ids", `{"timestamp": 1, "input_length": 1, "output_length": 1}`, "hash_ids", ErrMissingField},
		{"timestamp a string, not a number", `{"timestamp": "soon", "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrBadNumber},
		{"timestamp a string, a signed number", `{"timestamp": "+5", "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrBadNumber},
		{"timestamp null", `{"timestamp": null, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrBadNumber},
		{"timestamp huge", `{"timestamp": 1e300, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrBadNumber},
		{"timestamp beyond a duration", `{"timestamp": 9223372036854775, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp", ErrBadNumber},
		{"input_length a float", `{"timestamp": 1, "input_length": 1.0, "output_length": 1, "hash_ids": [1]}`, "input_length", ErrBadNumber},
		{"output_length negative", `{"timestamp": 1, "input_length": 1, "output_length": -1, "hash_ids": [1]}`, "output_length", ErrBadNumber},
		{"hash_ids an object", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": {"0": 1}}`, "hash_ids", ErrBadNumber},
		{"hash_ids with a string", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": ["1"]}`, "hash_ids", ErrBadNumber},
		{"hash_ids with a float", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1.5]}`, "hash_ids", ErrBadNumber},
		{"hash_ids nested", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [[1]]}`, "hash_ids", ErrBadNumber},
		{"hash_ids overflow", `{"timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [9223372036854775808]}`, "hash_ids", ErrBadNumber},
		{"no hash ids for an input", `{"timestamp": 1, "input_length": 1025, "output_length": 1, "hash_ids": []}`, "hash_ids", ErrInconsistent},
		{"more hash ids than tokens", `{"timestamp": 1, "input_length": 2, "output_length": 1, "hash_ids": [1, 2, 3]}`, "hash_ids", ErrInconsistent},
		{"hash ids for no input", `{"timestamp": 1, "input_length": 0, "output_length": 1, "hash_ids": [1]}`, "hash_ids", ErrInconsistent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := good + "\r\n\n" + tc.line + "\n" + good + "\n"
			r := newReader(t, in, FormatMooncake, Options{Name: "m.jsonl"})
			got, err := readAllErr(r)
			if len(got) != 1 {
				t.Errorf("%d requests before the error, want 1", len(got))
			}
			pe := wantParseError(t, err, 3, tc.column, tc.want)
			if !strings.HasPrefix(pe.Error(), "reqtrace: m.jsonl:3:") { // a syntax error adds its column, m.jsonl:3:17
				t.Errorf("message %q", pe.Error())
			}
			if err2 := r.Next(&Request{}); err2 != err {
				t.Errorf("error not sticky: then %v", err2)
			}
		})
	}
	_, err := readAllErr(newReader(t, `{"timestamp": 1, "input_length": 2, "output_length": 1, "hash_ids": [1, 2, 3]}`, FormatMooncake, Options{Name: "m.jsonl"}))
	if want := `reqtrace: m.jsonl:1: hash_ids: "3 ids": inconsistent record: more hash ids than the 2 tokens of input_length`; err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestMooncakeHashIDsBuffer checks the documented buffer rule: Next
// decodes into the caller's HashIDs array.
func TestMooncakeHashIDsBuffer(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}` + "\n" +
		`{"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [3]}` + "\n"
	r := newReader(t, in, FormatMooncake, Options{})
	req := Request{HashIDs: make([]int64, 0, 8)}
	buf := req.HashIDs[:1]
	if err := r.Next(&req); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(&req); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req.HashIDs, []int64{3}) || buf[0] != 3 {
		t.Errorf("HashIDs %v, buffer %v: want [3] decoded into the caller's array", req.HashIDs, buf)
	}
	if err := r.Next(&req); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}

// TestMooncakeTimeUnits reads timestamps in the units and encodings
// published traces use, relative or Unix times, numbers or strings: the
// unit is found from the first and the arrivals come out the same.
func TestMooncakeTimeUnits(t *testing.T) {
	line := func(ts string) string {
		return `{"timestamp": ` + ts + `, "input_length": 1, "output_length": 1, "hash_ids": [1]}` + "\n"
	}
	tests := []struct {
		name, first, second, unit string
		forced                    string
	}{
		{"ms from the start", "0", "1500", "ms from the start", ""},
		{"ms decimals", "10.5", "1510.5", "ms from the start", ""},
		{"Unix seconds", "1753694362", "1753694363.5", "s (Unix time)", ""},
		{"Unix ms", "1753694362340", "1753694363840", "ms (Unix time)", ""},
		{"Unix us as strings", `"1753694362340138"`, `"1753694363840138"`, "us (Unix time)", ""},
		{"Unix ns as strings", `"1753694362340138614"`, `"1753694363840138614"`, "ns (Unix time)", ""},
		{"Unix ns as numbers", "1753694362340138614", "1753694363840138614", "ns (Unix time)", ""},
		{"relative seconds, given", "0.5", "2", "s (--request-trace-time-unit)", "s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, []byte(line(tt.first)+line(tt.second)), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(path, FormatMooncake, Options{TimeUnit: tt.forced})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var a, b Request
			if err := f.Next(&a); err != nil {
				t.Fatal(err)
			}
			if err := f.Next(&b); err != nil {
				t.Fatal(err)
			}
			if a.Arrival != 0 || b.Arrival != 1500*time.Millisecond {
				t.Errorf("arrivals %v and %v, want 0 and 1.5s", a.Arrival, b.Arrival)
			}
			if f.TimeUnit() != tt.unit {
				t.Errorf("unit %q, want %q", f.TimeUnit(), tt.unit)
			}
		})
	}
}

// TestMooncakeAnyBlockSize reads an LMBench-style trace in Mooncake's JSONL
// form (a synthetic one, testdata/README.md): Unix-nanosecond timestamps as
// strings, hash ids covering 6 to 101 tokens each. None of its records has
// one id per 512 tokens, so every record's input is apportioned over its
// ids, and HashBlocks says so. It used to be refused at line 1.
func TestMooncakeAnyBlockSize(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "lmbench_synthetic60.jsonl"), FormatAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs := readAll(t, f)
	if len(reqs) != 60 {
		t.Fatalf("%d requests, want 60", len(reqs))
	}
	for i, r := range reqs {
		if r.BlockTokens != 0 || len(r.HashIDs) == 0 {
			t.Errorf("request %d: BlockTokens %d with %d ids for %d tokens, want 0 (apportioned)", i, r.BlockTokens, len(r.HashIDs), r.InputTokens)
		}
		sum := 0
		for j := range r.HashIDs {
			sum += ApportionTokens(r.InputTokens, len(r.HashIDs), j)
		}
		if sum != r.InputTokens {
			t.Errorf("request %d: apportioned %d tokens of %d", i, sum, r.InputTokens)
		}
	}
	if want := 10917039527 * time.Nanosecond; reqs[59].Arrival != want {
		t.Errorf("last arrival %v, want %v: the string timestamps read as Unix nanoseconds", reqs[59].Arrival, want)
	}
	if f.TimeUnit() != "ns (Unix time)" {
		t.Errorf("time unit %q", f.TimeUnit())
	}
	b := f.HashBlocks()
	lo, med, hi := b.TokensPerID()
	if b.Fit != 0 || b.Apportioned != 60 || lo < 6 || hi > 101 || med < 30 || med > 50 {
		t.Errorf("HashBlocks %+v: per id %d..%d, median %d", b, lo, hi, med)
	}
	if got := b.String(); !strings.Contains(got, "not 512-token blocks (Mooncake's) in 60 of 60 records") || !strings.Contains(got, "apportioned") {
		t.Errorf("note %q", got)
	}
}

// TestMooncakeBlockTokensGiven reads ids of a block size given by
// Options.BlockTokens: records that fit it have BlockTokens set, one that
// does not is apportioned and counted.
func TestMooncakeBlockTokensGiven(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 33, "output_length": 1, "hash_ids": [1, 2, 3]}` + "\n" +
		`{"timestamp": 1, "input_length": 32, "output_length": 1, "hash_ids": [1, 2]}` + "\n" +
		`{"timestamp": 2, "input_length": 40, "output_length": 1, "hash_ids": [7, 8, 9, 10]}` + "\n"
	path := filepath.Join(t.TempDir(), "b16.jsonl")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, FormatMooncake, Options{BlockTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs := readAll(t, f)
	var got []int
	for _, r := range reqs {
		got = append(got, r.BlockTokens)
	}
	if !reflect.DeepEqual(got, []int{16, 16, 0}) {
		t.Errorf("BlockTokens %v, want [16 16 0]", got)
	}
	b := f.HashBlocks()
	if b.Fit != 2 || b.Apportioned != 1 || !strings.Contains(b.String(), "not 16-token blocks (--request-trace-block-tokens) in 1 of 3 records (10 to 10 tokens an id, median 10)") {
		t.Errorf("HashBlocks %+v: %s", b, b)
	}
	if _, err := NewReader(strings.NewReader(in), FormatMooncake, Options{BlockTokens: -1}); err == nil {
		t.Error("BlockTokens -1 accepted")
	}
}

func TestApportionTokens(t *testing.T) {
	for _, tc := range []struct{ in, n int }{{1, 1}, {10, 3}, {2288, 67}, {100, 100}, {101, 7}} {
		sum, lo, hi := 0, tc.in, 0
		for i := range tc.n {
			v := ApportionTokens(tc.in, tc.n, i)
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		if sum != tc.in || hi-lo > 1 {
			t.Errorf("%d over %d: sum %d, %d..%d", tc.in, tc.n, sum, lo, hi)
		}
	}
}
