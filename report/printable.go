package report

import (
	"reflect"

	"github.com/kvbench/kvbench/internal/parsemsg"
)

// printableStrings makes every string v holds printable (parsemsg.Printable:
// kvreport shows the text of documents it did not write, and written as it
// came, a label "x\nPASS 6/6" forged a line of the text report, and a tab
// or a newline broke its tables, the benchmark lines' comments and the
// Markdown rows; every format shows the same escaped text): the exported
// string fields of its structs, at any depth, the elements of its slices
// and arrays, and the keys and values of its maps (bytes, such as a
// json.RawMessage, are left as they are). v must be addressable (a
// pointer's Elem). Walking the whole document, not a list of the fields
// kvreport shows, leaves no field a new format shows unescaped.
func printableStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); v.CanSet() {
			if p := parsemsg.Printable(s); p != s {
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
