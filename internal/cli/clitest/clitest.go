// Package clitest holds checks of the tools' command lines shared by their
// tests.
package clitest

import (
	"strings"
	"testing"
)

// CheckDefaultsOnce fails t when a line of help's Options section shows a
// default twice, as a usage string that names its default beside pflag's
// own "(default ...)" does.
func CheckDefaultsOnce(t testing.TB, help string) {
	t.Helper()
	_, opts, ok := strings.Cut(help, "\nOptions:\n")
	if !ok {
		t.Errorf("help has no Options section:\n%s", help)
		return
	}
	for line := range strings.Lines(opts) {
		if strings.Count(line, "(default") > 1 {
			t.Errorf("a default shown twice: %s", strings.TrimSpace(line))
		}
	}
}
