package report

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// printable is s with each character that would break a line, a table
// or a terminal escaped as Go writes it in a quoted string ("\n", "\t",
// "\x1b", "\u202e"): control characters, line and paragraph separators,
// bidirectional overrides and the other runes strconv.IsPrint refuses
// (the space aside), and bytes that are not UTF-8. kvreport shows the
// text of documents it did not write (labels, systems, warnings, reasons,
// paths, file names): written as it came, a label "x\nPASS 6/6" forged a
// line of the text report, and a tab or a newline broke its tables, the
// benchmark lines' comments and the Markdown rows. Every format shows the
// same escaped text.
func printable(s string) string {
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

// printableStrings makes every string v holds printable: the exported
// string fields of its structs, at any depth, the elements of its slices
// and arrays, and the keys and values of its maps (bytes, such as a
// json.RawMessage, are left as they are). v must be addressable (a
// pointer's Elem). Walking the whole document, not a list of the fields
// kvreport shows, leaves no field a new format shows unescaped.
func printableStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if p := printable(s); p != s {
				v.SetString(p)
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			printableStrings(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				printableStrings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			printableStrings(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			printableStrings(e)
			nk := reflect.New(k.Type()).Elem()
			nk.Set(k)
			printableStrings(nk)
			v.SetMapIndex(k, reflect.Value{})
			v.SetMapIndex(nk, e)
		}
	}
}
