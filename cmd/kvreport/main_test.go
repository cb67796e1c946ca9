package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestNotBuiltYet: until its engine exists the tool says so on one line and
// exits 2; --help and --version still work.
func TestNotBuiltYet(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "kvreport: "},
		{[]string{"--help"}, 0, "", "Usage:"},
		{[]string{"--version"}, 0, "kvreport ", ""},
		{[]string{"--nope"}, 2, "", "unknown flag: --nope"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := cli.Main("kvreport", tt.args, &out, &errb, run)
		if code != tt.code || !strings.HasPrefix(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("%v: exit %d stdout %q stderr %q", tt.args, code, out.String(), errb.String())
		}
		if code == 2 && strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: want one line on stderr, got %q", tt.args, errb.String())
		}
	}
}
