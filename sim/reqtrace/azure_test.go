package reqtrace

import (
	"strings"
	"testing"
	"time"
)

func TestAzureSample(t *testing.T) {
	got := readAll(t, newReader(t, string(fixture(t, "azure_code_head200.csv")), FormatAzure, Options{}))
	if len(got) != 200 {
		t.Fatalf("%d requests, want 200", len(got))
	}
	for i, want := range []Request{
		{Arrival: 0, InputTokens: 4808, OutputTokens: 10},
		{Arrival: 52 * time.Millisecond, InputTokens: 3180, OutputTokens: 8},
		{Arrival: 98189 * time.Microsecond, InputTokens: 110, OutputTokens: 27},
		{Arrival: 140684 * time.Microsecond, InputTokens: 7433, OutputTokens: 14},
	} {
		if !equalRequest(got[i], want) {
			t.Errorf("request %d = %+v, want %+v", i, got[i], want)
		}
	}
	// The last row has no newline after it: 2023-11-16 18:20:23.0695450,65,10.
	if want := (Request{Arrival: 199089585 * time.Microsecond, InputTokens: 65, OutputTokens: 10}); !equalRequest(got[199], want) {
		t.Errorf("last request = %+v, want %+v", got[199], want)
	}
}

func TestAzureLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Request
	}{
		{
			"2024 with offsets",
			"TIMESTAMP,ContextTokens,GeneratedTokens\n" +
				"2024-05-10 00:00:00.009930+00:00,2048,28\n" +
				"2024-05-10 02:00:01.009930+02:00,1,2\n" +
				"2024-05-10 00:00:02+00:00,3,4\n",
			[]Request{{InputTokens: 2048, OutputTokens: 28}, {Arrival: time.Second, InputTokens: 1, OutputTokens: 2}, {Arrival: 1990070 * time.Microsecond, InputTokens: 3, OutputTokens: 4}},
		},
		{
			"ISO 8601 and no fraction",
			"TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10T00:00:00Z,1,1\n2024-05-10 00:00:01,1,1\n2024-05-10T00:00:01.5,1,1\n",
			[]Request{{InputTokens: 1, OutputTokens: 1}, {Arrival: time.Second, InputTokens: 1, OutputTokens: 1}, {Arrival: 1500 * time.Millisecond, InputTokens: 1, OutputTokens: 1}},
		},
		{
			"columns in another order, an extra one, out of order rows",
			"ContextTokens,GeneratedTokens,TIMESTAMP,Extra\n5,6,2023-11-16 18:17:04.0000000,a\n7,8,2023-11-16 18:17:03.0000000,b\n",
			[]Request{{InputTokens: 5, OutputTokens: 6}, {InputTokens: 7, OutputTokens: 8}},
		},
		{"header only, no newline", "TIMESTAMP,ContextTokens,GeneratedTokens", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, newReader(t, tc.in, FormatAzure, Options{}))
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

func TestAzureErrors(t *testing.T) {
	const header = "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
	const good = "2023-11-16 18:17:03.9799600,4808,10\r\n"
	for _, tc := range []struct {
		name   string
		row    string
		column string
		want   error
	}{
		{"month 13", "2023-13-16 18:17:03.9799600,1,1", "TIMESTAMP", ErrBadTime},
		{"not a time", "yesterday,1,1", "TIMESTAMP", ErrBadTime},
		{"epoch seconds", "1700000000.5,1,1", "TIMESTAMP", ErrBadTime},
		{"date only", "2023-11-16,1,1", "TIMESTAMP", ErrBadTime},
		{"bad offset", "2023-11-16 18:17:03+25:00,1,1", "TIMESTAMP", ErrBadTime},
		{"centuries away", "0001-01-01 00:00:00,1,1", "TIMESTAMP", ErrBadTime},
		{"negative context", "2023-11-16 18:17:04.0,-1,1", "ContextTokens", ErrBadNumber},
		{"float context", "2023-11-16 18:17:04.0,1.5,1", "ContextTokens", ErrBadNumber},
		{"empty generated", "2023-11-16 18:17:04.0,1,", "GeneratedTokens", ErrBadNumber},
		{"two fields", "2023-11-16 18:17:04.0,1", "", ErrFieldCount},
		{"four fields", "2023-11-16 18:17:04.0,1,2,3", "", ErrFieldCount},
		{"stray quote", "2023-11-16 18:17:04.0,1\"2,3", "", ErrBadCSV},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := header + good + tc.row + "\r\n" + good
			r := newReader(t, in, FormatAzure, Options{Name: "a.csv"})
			got, err := readAllErr(r)
			if len(got) != 1 {
				t.Errorf("%d requests before the error, want 1", len(got))
			}
			pe := wantParseError(t, err, 3, tc.column, tc.want)
			if !strings.HasPrefix(pe.Error(), "reqtrace: a.csv:3:") { // a syntax error adds its column, a.csv:3:24
				t.Errorf("message %q", pe.Error())
			}
			if err2 := r.Next(&Request{}); err2 != err {
				t.Errorf("error not sticky: then %v", err2)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		in     string
		column string
	}{
		{"empty", "", ""},
		{"no GeneratedTokens", "TIMESTAMP,ContextTokens\n", "GeneratedTokens"},
		{"lower case", "timestamp,contexttokens,generatedtokens\n", "TIMESTAMP, ContextTokens, GeneratedTokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.in), FormatAzure, Options{})
			wantParseError(t, err, 1, tc.column, ErrBadHeader)
		})
	}
}
