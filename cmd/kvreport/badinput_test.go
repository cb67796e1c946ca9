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
