package parsemsg

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	nines := strings.Repeat("9", MaxValue)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "12a", "12a"},
		{"exactly MaxValue", nines, nines},
		{"one over", nines + "9", nines + "..."},
		{"long ASCII", strings.Repeat("x", 1000), strings.Repeat("x", MaxValue) + "..."},
		// A two-byte rune across the cut: byte 63 starts "é", byte 64
		// continues it, so the cut falls back to 63 bytes.
		{"2-byte rune across the cut", nines[:MaxValue-1] + "é" + "tail", nines[:MaxValue-1] + "..."},
		{"2-byte rune ending at the cut", nines[:MaxValue-2] + "é" + "tail", nines[:MaxValue-2] + "é..."},
		{"4-byte rune across the cut", nines[:MaxValue-2] + "😀" + "tail", nines[:MaxValue-2] + "..."},
		{"3-byte rune across the cut", nines[:MaxValue-1] + "€" + "tail", nines[:MaxValue-1] + "..."},
		{"all runes", strings.Repeat("é", 100), strings.Repeat("é", MaxValue/2) + "..."},
		{"all 3-byte runes", strings.Repeat("€", 100), strings.Repeat("€", MaxValue/3) + "..."},
		// Invalid UTF-8 is cut on a rune start when one is near, and
		// never more than UTFMax bytes short of MaxValue.
		{"continuation bytes only", strings.Repeat("\x80", 100), strings.Repeat("\x80", MaxValue-utf8.UTFMax) + "..."},
		{"invalid byte across the cut", nines[:MaxValue-1] + "\xff\xfe", nines[:MaxValue-1] + "\xff..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Shorten(tc.in)
			if got != tc.want {
				t.Errorf("Shorten(%q)\n = %q\nwant %q", tc.in, got, tc.want)
			}
			if b := Shorten([]byte(tc.in)); b != got {
				t.Errorf("Shorten([]byte) = %q, Shorten(string) = %q", b, got)
			}
			if len(got) > MaxValue+len("...") {
				t.Errorf("Shorten(%q) is %d bytes, want at most %d", tc.in, len(got), MaxValue+3)
			}
			if utf8.ValidString(tc.in) && !utf8.ValidString(got) {
				t.Errorf("Shorten(%q) = %q: a valid value became invalid UTF-8", tc.in, got)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  *Message
		want string
	}{
		{"named", Start("trace", "run.csv", "", 12), "trace: run.csv:12"},
		{"unnamed without a word", Start("trace", "", "", 3), "trace: 3"},
		{"unnamed with a word", Start("reqtrace", "", "line ", 3), "reqtrace: line 3"},
		{"a column", Start("reqtrace", "m.jsonl", "line ", 2).Col(75).Part("malformed json"), "reqtrace: m.jsonl:2:75: malformed json"},
		{"no column", Start("reqtrace", "m.jsonl", "line ", 2).Col(0).Part("x"), "reqtrace: m.jsonl:2: x"},
		{"a name hides the word", Start("reqtrace", "b.csv", "line ", 22), "reqtrace: b.csv:22"},
		{"parts", Start("p", "f", "", 1).Part("a").Part("b"), "p: f:1: a: b"},
		{"empty parts left out", Start("p", "f", "", 1).Part("").Part("a").Part(""), "p: f:1: a"},
		{"quoted", Start("p", "f", "", 1).Quote("12a").Part("bad"), `p: f:1: "12a": bad`},
		{"empty quoted", Start("p", "f", "", 1).Quote(""), `p: f:1: ""`},
		{"control characters quoted", Start("p", "f", "", 1).Quote("a\nb\x01\xff"), `p: f:1: "a\nb\x01\xff"`},
		// A file named with a newline split the message in two, the
		// second line naming no file ("trace: a" and "b.csv:2: ...").
		{"file escaped", Start("trace", "dir/a\nb\x1b[1m.csv", "", 2).Part("bad"), `trace: dir/a\nb\x1b[1m.csv:2: bad`},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
	}
}

func TestReadError(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{
		{"run.csv", "trace: run.csv:7: read: unexpected EOF"},
		{"", "trace: line 7: read: unexpected EOF"},
	} {
		err := ReadError("trace", tc.file, 7, io.ErrUnexpectedEOF)
		if err.Error() != tc.want {
			t.Errorf("ReadError(%q) = %q, want %q", tc.file, err, tc.want)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ReadError(%q) does not wrap its cause", tc.file)
		}
	}
}

// TestArg: a value typed on a command line is named as typed, or quoted
// where it would not show (empty, blank) or would break the line.
func TestArg(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"extent", "extent"},
		{"1/1024", "1/1024"},
		{"", `""`},
		{" ", `" "`},
		{"a\nb", `"a\nb"`},
		{"a\x1b[31mb", `"a\x1b[31mb"`},
		{"it's", `"it's"`},
		{"\xff", `"\xff"`},
		{"naïve", "naïve"},
	} {
		if got := Arg(tc.in); got != tc.want {
			t.Errorf("Arg(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
