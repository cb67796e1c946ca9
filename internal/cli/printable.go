package cli

import (
	"fmt"
	"io/fs"
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

// FileError is err said as a user reads a file's error: a *fs.PathError
// (os.Open's, os.Stat's) becomes "PATH: REASON", its path made Printable
// and the system call named only where it is not the open or stat a
// reader expects ("PATH: read: REASON"), instead of Go's "open PATH:
// REASON". errors.Is and errors.As see the *fs.PathError it wraps. Other
// errors are returned as they are.
func FileError(err error) error {
	pe, ok := err.(*fs.PathError)
	if !ok {
		return err
	}
	return &fileError{pe}
}

type fileError struct{ pe *fs.PathError }

func (e *fileError) Error() string {
	switch e.pe.Op {
	case "open", "openat", "stat", "lstat":
		return Printable(e.pe.Path) + ": " + e.pe.Err.Error()
	}
	return Printable(e.pe.Path) + ": " + e.pe.Op + ": " + e.pe.Err.Error()
}

func (e *fileError) Unwrap() error { return e.pe }
