package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/cli"
)

// TestBadValues: an empty -o or trace name is refused by name, not taken
// for stdout or said as "stat : no such file"; --fit-time takes seconds
// as --duration does, and a value it cannot read says what it wants, not
// Go's "time: missing unit in duration"; a trace that is not there is
// named with its reason, not Go's "stat PATH".
func TestBadValues(t *testing.T) {
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	missing := filepath.Join(t.TempDir(), "missing.csv")
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-o", "", tr}, `-o "": empty file name (want a file, or - for stdout)`},
		{[]string{""}, `trace "": empty file name (want a file, or - for stdin)`},
		{[]string{"--fit", "--fit-time", "5x", tr}, "--fit-time 5x: not a duration (want seconds such as 60"},
		{[]string{missing}, "kvreplay: trace: " + missing + ": no such file or directory\n"},
	} {
		var out, errb bytes.Buffer
		code := cli.Main("kvreplay", tt.args, &out, &errb, run)
		if code != 2 || !strings.Contains(errb.String(), tt.stderr) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q: want 2 and one line with %q", tt.args, code, errb.String(), tt.stderr)
		}
	}
	// --fit-time 300 is 5 minutes, as --duration 300 is.
	o, err := parse([]string{"--fit", "--fit-time", "300", tr}, &bytes.Buffer{})
	if err == nil && o.fitting.Time.Seconds() != 300 {
		t.Errorf("--fit-time 300: %v, want 5m0s", o.fitting.Time)
	} else if err != nil && strings.Contains(err.Error(), "--fit-time") {
		t.Errorf("--fit-time 300: %v", err)
	}
}
