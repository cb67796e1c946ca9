package reqtrace

import (
	"cmp"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestBurstGPTSample(t *testing.T) {
	r := newReader(t, string(fixture(t, "burstgpt_1_head30.csv")), FormatBurstGPT, Options{})
	got := readAll(t, r)
	if len(got) != 30 {
		t.Fatalf("%d requests, want 30", len(got))
	}
	for i, want := range []Request{
		{Arrival: 0, InputTokens: 472, OutputTokens: 18},
		{Arrival: 40 * time.Second, InputTokens: 1087, OutputTokens: 230},
		{Arrival: 113 * time.Second, InputTokens: 417, OutputTokens: 276},
		{Arrival: 180 * time.Second, InputTokens: 1360, OutputTokens: 647},
	} {
		if !equalRequest(got[i], want) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want)
		}
	}
	// Row 21 is a failed request: kept, with zero tokens, as the reference
	// keeps it (a 0-byte object).
	if want := (Request{Arrival: 1101 * time.Second}); !equalRequest(got[20], want) {
		t.Errorf("row 21 = %+v, want %+v", got[20], want)
	}
	if want := (Request{Arrival: 2288 * time.Second, InputTokens: 507, OutputTokens: 448}); !equalRequest(got[29], want) {
		t.Errorf("last row = %+v, want %+v", got[29], want)
	}
	if s := r.(Skipper); s.Skipped() != 0 || s.SkipErrors() != nil {
		t.Errorf("skipped %d: %v", s.Skipped(), s.SkipErrors())
	}
}

func equalRequest(a, b Request) bool {
	return a.Arrival == b.Arrival && a.InputTokens == b.InputTokens && a.OutputTokens == b.OutputTokens &&
		a.Conversation == b.Conversation && a.Turn == b.Turn && len(a.HashIDs) == len(b.HashIDs)
}

// TestBurstGPTV2 reads the newer layout: Session ID and Elapsed time after
// Timestamp, float timestamps, kept to the nanosecond rounding.
func TestBurstGPTV2(t *testing.T) {
	const v2 = "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\r\n" +
		"1200.25,1733121459-3,12.5,ChatGPT,104,313,417,Conversation log\r\n" +
		"1200.2503,1733121459-3,3.1,ChatGPT,88,20,108,Conversation log\r\n" +
		"1201.0000001,,0.4,GPT-4,0,0,0,API log\r\n" +
		"1263.75,1733121522-9,1.75,ChatGPT,5,7,12,Conversation log" // no final newline
	got := readAll(t, newReader(t, v2, FormatBurstGPT, Options{}))
	want := []Request{
		{Arrival: 0, InputTokens: 104, OutputTokens: 313},
		{Arrival: 300 * time.Microsecond, InputTokens: 88, OutputTokens: 20},
		{Arrival: 750000100 * time.Nanosecond},
		{Arrival: 63500 * time.Millisecond, InputTokens: 5, OutputTokens: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	for i := range want {
		if !equalRequest(got[i], want[i]) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestBurstGPTLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Request
	}{
		{
			"columns in another order, spaces in the header",
			" Response tokens , Request tokens ,Timestamp\n7,5,10\n8,6,12.5\n",
			[]Request{{InputTokens: 5, OutputTokens: 7}, {Arrival: 2500 * time.Millisecond, InputTokens: 6, OutputTokens: 8}},
		},
		{
			"no Timestamp column: all at 0, as the reference's default",
			"Request tokens,Response tokens\n1,2\n3,4\n",
			[]Request{{InputTokens: 1, OutputTokens: 2}, {InputTokens: 3, OutputTokens: 4}},
		},
		{
			"out of order: arrivals never decrease",
			"Timestamp,Request tokens,Response tokens\n10,1,1\n12,2,2\n11,3,3\n5,4,4\n13,5,5\n",
			[]Request{{InputTokens: 1, OutputTokens: 1}, {Arrival: 2 * time.Second, InputTokens: 2, OutputTokens: 2}, {Arrival: 2 * time.Second, InputTokens: 3, OutputTokens: 3}, {Arrival: 2 * time.Second, InputTokens: 4, OutputTokens: 4}, {Arrival: 3 * time.Second, InputTokens: 5, OutputTokens: 5}},
		},
		{
			"quoted fields, spaces around numbers, blank lines, extra fields",
			"Timestamp,Model,Request tokens,Response tokens\n\n\"1\",\"Chat, GPT\", 5 ,6,extra\n\n2,x,+7,0008\n",
			[]Request{{InputTokens: 5, OutputTokens: 6}, {Arrival: time.Second, InputTokens: 7, OutputTokens: 8}},
		},
		{
			"epoch timestamps",
			"Timestamp,Request tokens,Response tokens\n1700000000.123456,1,1\n1700000001.5,1,1\n",
			[]Request{{InputTokens: 1, OutputTokens: 1}, {Arrival: 1376544 * time.Microsecond, InputTokens: 1, OutputTokens: 1}},
		},
		{
			"utf-8 byte order mark",
			"\ufeffTimestamp,Request tokens,Response tokens\n3,1,2\n4,1,2\n",
			[]Request{{InputTokens: 1, OutputTokens: 2}, {Arrival: time.Second, InputTokens: 1, OutputTokens: 2}},
		},
		{"header only", "Timestamp,Request tokens,Response tokens\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, newReader(t, tc.in, FormatBurstGPT, Options{}))
			if len(got) != len(tc.want) {
				t.Fatalf("%d requests %+v, want %d", len(got), got, len(tc.want))
			}
			for i := range tc.want {
				if !equalRequest(got[i], tc.want[i]) {
					t.Errorf("request %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestBurstGPTSkips: the reference drops rows that fail int() or float()
// silently; kvbench drops them too but counts them and says why.
func TestBurstGPTSkips(t *testing.T) {
	const header = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	for _, tc := range []struct {
		name   string
		row    string
		column string
		want   error
		// ref is what kv-cache.py does with the row, where it does not
		// skip it: "keeps" it, "sleeps before" it until the run ends, or
		// "stops" its reader at it.
		ref string
	}{
		{"request tokens not a number", "7,ChatGPT,12a,3,15,x", "Request tokens", ErrBadNumber, ""},
		{"request tokens a float", "7,ChatGPT,12.0,3,15,x", "Request tokens", ErrBadNumber, ""},
		{"negative response tokens", "7,ChatGPT,12,-3,9,x", "Response tokens", ErrBadNumber, "keeps"},
		{"empty response tokens", "7,ChatGPT,12,,9,x", "Response tokens", ErrBadNumber, ""},
		{"huge request tokens", "7,ChatGPT,99999999999999999999999,1,9,x", "Request tokens", ErrBadNumber, "keeps"},
		{"timestamp not a number", "seven,ChatGPT,12,3,15,x", "Timestamp", ErrBadNumber, ""},
		{"timestamp nan", "nan,ChatGPT,12,3,15,x", "Timestamp", ErrBadNumber, "keeps"},
		{"timestamp inf", "inf,ChatGPT,12,3,15,x", "Timestamp", ErrBadNumber, "sleeps before"},
		{"timestamp out of range", "1e300,ChatGPT,12,3,15,x", "Timestamp", ErrBadNumber, "sleeps before"},
		{"empty timestamp", ",ChatGPT,12,3,15,x", "Timestamp", ErrBadNumber, ""},
		{"total tokens not an integer", "7,ChatGPT,12,3,n/a,x", "Total tokens", ErrBadNumber, ""},
		{"underscore not between digits", "7,ChatGPT,1__2,3,15,x", "Request tokens", ErrBadNumber, ""},
		{"short row", "7,ChatGPT,12", "", ErrFieldCount, "stops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := header + "1,ChatGPT,1,2,3,x\n" + tc.row + "\n9,ChatGPT,4,5,9,x"
			r := newReader(t, in, FormatBurstGPT, Options{Name: "b.csv"})
			got := readAll(t, r)
			if len(got) != 2 || got[1].InputTokens != 4 || got[1].Arrival != 8*time.Second {
				t.Fatalf("requests %+v, want the rows around the bad one", got)
			}
			s := r.(Skipper)
			if s.Skipped() != 1 || len(s.SkipErrors()) != 1 {
				t.Fatalf("Skipped %d, SkipErrors %v; want 1", s.Skipped(), s.SkipErrors())
			}
			pe := wantParseError(t, s.SkipErrors()[0], 3, tc.column, tc.want)
			if pe.File != "b.csv" || !strings.HasPrefix(pe.Error(), "reqtrace: b.csv:3: ") {
				t.Errorf("message %q", pe.Error())
			}
			if strings.HasPrefix(tc.name, "empty") != strings.Contains(pe.Error(), "empty field") {
				t.Errorf("message %q: says empty field wrongly", pe.Error())
			}
			want := RefDepartures{}
			switch tc.ref {
			case "keeps":
				want.Kept, want.KeptLine = 1, 3
			case "sleeps before":
				// It reads it, and sleeps the gap to it first, until
				// the run ends.
				want.Kept, want.KeptLine, want.Stall, want.StallLine = 1, 3, 1, 3
			case "stops":
				want.Short, want.ShortLine = 1, 3
			}
			if got := r.(*burstGPT).ref; got != want {
				t.Errorf("RefDepartures %+v, want %+v (kv-cache.py %s the row)", got, want, cmp.Or(tc.ref, "skips"))
			}
		})
	}

	// A bad first row does not set the time origin.
	got := readAll(t, newReader(t, header+"x,a,1,1,2,x\n10,a,1,1,2,x\n12,a,1,1,2,x\n", FormatBurstGPT, Options{}))
	if len(got) != 2 || got[0].Arrival != 0 || got[1].Arrival != 2*time.Second {
		t.Errorf("after a bad first row: %+v", got)
	}

	// Only the first MaxSkipErrors reasons are kept; all are counted.
	in := header + strings.Repeat("x,a,1,1,2,x\n", 25) + "1,a,1,1,2,x\n"
	r := newReader(t, in, FormatBurstGPT, Options{})
	if got := readAll(t, r); len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	if s := r.(Skipper); s.Skipped() != 25 || len(s.SkipErrors()) != MaxSkipErrors {
		t.Errorf("Skipped %d with %d reasons, want 25 and %d", s.Skipped(), len(s.SkipErrors()), MaxSkipErrors)
	}
}

// TestBurstGPTByteOrderMark: a BurstGPT file that begins with a UTF-8 byte
// order mark is read with the mark dropped, its timestamps kept, and the
// first column's name recorded: kv-cache.py keeps the mark in that name.
func TestBurstGPTByteOrderMark(t *testing.T) {
	for _, tc := range []struct{ in, first string }{
		{"\ufeffTimestamp,Request tokens,Response tokens\n5,10,2\n7,20,3\n", "Timestamp"},
		{"\ufeffRequest tokens,Response tokens,Timestamp\n10,2,5\n20,3,7\n", "Request tokens"},
		{"Timestamp,Request tokens,Response tokens\n5,10,2\n7,20,3\n", ""},
	} {
		r := newReader(t, tc.in, FormatBurstGPT, Options{})
		got := readAll(t, r)
		if len(got) != 2 || got[1].Arrival != 2*time.Second || got[1].InputTokens != 20 {
			t.Errorf("%q: requests %+v, want 2, 2 s apart", tc.in, got)
		}
		if c := r.(*burstGPT).ref.BOMColumn; c != tc.first {
			t.Errorf("%q: BOMColumn %q, want %q", tc.in, c, tc.first)
		}
	}
}

// TestBurstGPTPythonNumbers: the reference reads a row's numbers with
// Python's int() and float(), which take underscores between digits and a
// sign, so such a row is a request, not a skipped one.
func TestBurstGPTPythonNumbers(t *testing.T) {
	const in = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
		"1_000,ChatGPT,1_024,+2_048,3_072,x\n" +
		"1_000.000_5,ChatGPT, 007 ,0,-1,x\n"
	r := newReader(t, in, FormatBurstGPT, Options{})
	got := readAll(t, r)
	want := []Request{
		{Arrival: 0, InputTokens: 1024, OutputTokens: 2048},
		{Arrival: 500 * time.Microsecond, InputTokens: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("%d requests (%+v), want %d", len(got), got, len(want))
	}
	for i := range want {
		if !equalRequest(got[i], want[i]) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := r.(Skipper); s.Skipped() != 0 {
		t.Errorf("skipped %d: %v", s.Skipped(), s.SkipErrors())
	}
}

func TestBurstGPTHeaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		line   int
		column string
	}{
		{"empty", "", 1, ""},
		{"no request tokens", "Timestamp,Model,Response tokens\n1,a,2\n", 1, "Request tokens"},
		{"no response tokens", "\nTimestamp,Request tokens\n1,2\n", 2, "Response tokens"},
		{"neither", "Timestamp,Model\n", 1, "Request tokens, Response tokens"},
		{"case matters, as in csv.DictReader", "Timestamp,request tokens,response tokens\n", 1, "Request tokens, Response tokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.in), FormatBurstGPT, Options{})
			wantParseError(t, err, tc.line, tc.column, ErrBadHeader)
		})
	}
}

func TestBurstGPTStickyEOF(t *testing.T) {
	r := newReader(t, "Request tokens,Response tokens\n1,2\n", FormatBurstGPT, Options{})
	var req Request
	if err := r.Next(&req); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := r.Next(&req); err != io.EOF {
			t.Fatalf("after the end: %v", err)
		}
	}
}

// TestStamps: a record's Stamp is its own timestamp, decreasing where the
// trace's do, while its Arrival never decreases: BurstGPT's and a
// Mooncake-style trace's from their zero, an Azure trace's from its first
// record; ShareGPT's 0.
func TestStamps(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Format
		in   string
		want []time.Duration
	}{
		{"burstgpt", FormatBurstGPT, "Timestamp,Request tokens,Response tokens\n10,1,1\n20.5,1,1\n15,1,1\n",
			[]time.Duration{10 * time.Second, 20500 * time.Millisecond, 15 * time.Second}},
		{"mooncake", FormatMooncake, `{"timestamp": 3000, "input_length": 1, "output_length": 1, "hash_ids": [1]}` + "\n" +
			`{"timestamp": 2000, "input_length": 1, "output_length": 1, "hash_ids": [2]}` + "\n",
			[]time.Duration{3 * time.Second, 2 * time.Second}},
		{"azure", FormatAzure, "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.5,1,1\n2023-11-16 18:17:02,1,1\n",
			[]time.Duration{0, -1500 * time.Millisecond}},
		{"sharegpt", FormatShareGPT, `[{"id": "a", "conversations": [{"from": "human", "value": "hello there"}, {"from": "gpt", "value": "hi"}]}]`,
			[]time.Duration{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, newReader(t, tc.in, tc.f, Options{}))
			if len(got) != len(tc.want) {
				t.Fatalf("%d requests, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				if got[i].Stamp != w {
					t.Errorf("request %d: Stamp %v, want %v", i, got[i].Stamp, w)
				}
				if i > 0 && got[i].Arrival < got[i-1].Arrival {
					t.Errorf("request %d: Arrival %v before the one before's %v", i, got[i].Arrival, got[i-1].Arrival)
				}
			}
		})
	}
}

// TestCarriageReturnLines reads CSV traces whose lines end with a lone CR
// (old Mac line endings), which Python's csv module, as kv-cache.py reads
// a BurstGPT file, ends rows at: encoding/csv kept the CR in the field, so
// BurstGPT's file was a header and no requests, and Azure's no format.
// A CR inside a CRLF, split between two reads, stays one line end.
func TestCarriageReturnLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		f        Format
	}{
		{"burstgpt", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r5,ChatGPT,10,20,30,x\r6,ChatGPT,11,21,32,x\r", FormatBurstGPT},
		{"burstgpt no end", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\r5,ChatGPT,10,20,30,x\r6,ChatGPT,11,21,32,x", FormatBurstGPT},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\r2023-11-16 18:17:03.0,10,20\r2023-11-16 18:17:04.0,11,21\r", FormatAzure},
	} {
		for _, oneByte := range []bool{false, true} {
			var src io.Reader = strings.NewReader(tc.in)
			if oneByte {
				src = iotest.OneByteReader(src)
			}
			r, err := NewReader(src, FormatAuto, Options{Name: "cr.csv"})
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if f := r.(interface{ format() Format }).format(); f != tc.f {
				t.Errorf("%s: format %v, want %v", tc.name, f, tc.f)
			}
			var got []Request
			for {
				var req Request
				err := r.Next(&req)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				got = append(got, req)
			}
			if len(got) != 2 || got[0].InputTokens != 10 || got[1].OutputTokens != 21 || got[1].Arrival != time.Second {
				t.Errorf("%s (one byte %v): %+v, want 2 requests a second apart", tc.name, oneByte, got)
			}
		}
	}
}
