package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Printable is s with each character that would break a line, a table
// or a terminal escaped as Go writes it in a quoted string ("\n", "\t",
// "\x1b", "\u202e"): control characters, line and paragraph separators,
// bidirectional overrides and the other runes strconv.IsPrint refuses
// (the space aside), and bytes that are not UTF-8. It is the one rule
// for text a tool shows and did not write: its errors' lines (printError,
// an option typed with a newline in it), and kvreport's documents and
// paths.
func Printable(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || (r != ' ' && !strconv.IsPrint(r)) })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r != ' ' && !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}
