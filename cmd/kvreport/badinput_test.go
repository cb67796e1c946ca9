package main

import (
	"os"
	"strings"
	"testing"
)

// TestBadOperands: stdin given twice and an empty file name are usage
// errors that say so, not a second, empty read of stdin ("unknown
// document format: empty input") or "open : no such file".
func TestBadOperands(t *testing.T) {
	doc, err := os.ReadFile(docA)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-", "-"}, "stdin (-) given twice"},
		{[]string{"merge", "-", "-"}, "stdin (-) given twice"},
		{[]string{""}, `RESULT "": empty file name`},
	} {
		code, _, errs := kvreport(t, string(doc), tt.args...)
		if code != 2 || !strings.Contains(errs, tt.stderr) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line with %q", tt.args, code, errs, tt.stderr)
		}
	}
}

// TestBadValuesOneLine: a value typed with a newline is named quoted, on
// the line of its flag, and an empty one as "": the newline split
// "--format a" from a line "kvreport: b: must be one of ..." that named no
// flag, and "--format : must be one of" showed nothing.
func TestBadValuesOneLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // stderr's one line, after "kvreport: "; a prefix
	}{
		{[]string{"--format", "a\nb", docA}, `--format "a\nb": must be one of text, md`},
		{[]string{"--format", "", docA}, `--format "": must be one of text, md`},
		{[]string{"--aggregate", "a\nb", docA}, `--aggregate "a\nb": must be one of mlperf`},
		{[]string{"--baseline", "a\nb", docA}, `report: --baseline "a\nb": no such group`},
		{[]string{"--label", "x y", "--group-by", "system", docA}, `--label "x y" and --group-by system: --label puts every document in one group`},
	} {
		code, _, errs := kvreport(t, "", tt.args...)
		if code != 2 || !strings.HasPrefix(errs, "kvreport: "+tt.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line starting %q", tt.args, code, errs, "kvreport: "+tt.want)
		}
	}
}
