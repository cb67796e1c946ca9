package reqtrace

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseFormat: --request-trace-format takes the five names in any
// case and nothing else; String gives the name back and the text
// marshaling round-trips; a refusal is one line naming the value that
// wraps ErrUnknownFormat and leaves an UnmarshalText target as it was.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"auto", "burstgpt", "ShareGPT", "MOONCAKE", "azure", "", " azure", "azure\n", "Format(5)", "burst-gpt", "\u212Auto", "aUTO", "\u017Fharegpt", "moon\u212Aake"} {
		f.Add(s)
	}
	names := []string{"auto", "burstgpt", "sharegpt", "mooncake", "azure"}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFormat(s)
		want := -1
		for i, n := range names {
			// ASCII case folding only: the names are ASCII.
			if len(s) == len(n) && strings.ToLower(s) == n && isASCII(s) {
				want = i
			}
		}
		into := FormatMooncake
		uerr := into.UnmarshalText([]byte(s))
		if want < 0 {
			if err == nil {
				t.Fatalf("ParseFormat(%q) = %v, want an error", s, got)
			}
			msg := err.Error()
			if !errors.Is(err, ErrUnknownFormat) || strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "reqtrace: format ") {
				t.Fatalf("ParseFormat(%q): error %q is not one line naming the format, wrapping ErrUnknownFormat", s, msg)
			}
			if uerr == nil || into != FormatMooncake {
				t.Fatalf("UnmarshalText(%q) = %v, %v; want an error and the value kept", s, into, uerr)
			}
			return
		}
		if err != nil || got != Format(want) || got.String() != names[want] {
			t.Fatalf("ParseFormat(%q) = %v, %v; want %s", s, got, err, names[want])
		}
		if uerr != nil || into != got {
			t.Fatalf("UnmarshalText(%q) = %v, %v; ParseFormat gives %v", s, into, uerr, got)
		}
		text, _ := got.MarshalText()
		var back Format
		if err := back.UnmarshalText(text); err != nil || back != got {
			t.Fatalf("%v marshals as %q, which reads %v, %v", got, text, back, err)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
