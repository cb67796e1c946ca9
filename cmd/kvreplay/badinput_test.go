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

// TestBadValuesOneLine: a value typed with a newline is named quoted, on
// the line of its flag, and an empty one as "": the newline split "--dir
// a" from a line "kvreplay: b: does not exist" that named no flag, and
// "--layout : want dir or extent" showed nothing. An empty --dir or
// --start-barrier (a variable that was not set) is refused: taken as not
// given, the replay benchmarked the system temp dir's disk, or ranks
// started apart. Every malformed value is said, one a line, and pflag's
// numbers in words ("not a valid uint64" was Go's type).
func TestBadValuesOneLine(t *testing.T) {
	tr := filepath.Join("..", "..", "testdata", "reference", "llama8b_u10_d30_gpu0_cpu4_s42.csv")
	for _, tt := range []struct {
		args []string
		want []string // stderr's lines, after "kvreplay: "; a prefix of each
	}{
		{[]string{"--dir", "a\nb", tr}, []string{`--dir "a\nb": does not exist: create it, or pass --mkdir`}},
		{[]string{"--dir", "", tr}, []string{`--dir "": empty directory name (want a directory; leave --dir out for the system temp dir)`}},
		{[]string{"--start-barrier", "", tr}, []string{`--start-barrier "": empty directory name`}},
		{[]string{"--layout", "a\nb", tr}, []string{`--layout "a\nb": want dir or extent`}},
		{[]string{"--layout", "", tr}, []string{`--layout "": want dir or extent`}},
		{[]string{"--search", "a\nb", tr}, []string{`--search "a\nb": want users or capacity`}},
		{[]string{"--rank", "a\nb", "--ranks", "2", "-o", "r{rank}.json", tr}, []string{`--rank "a\nb": want a non-negative integer`}},
		{[]string{"--shard", "a\nb", tr}, []string{`--shard "a\nb": want key, user or tp`}},
		{[]string{"--start-at", "a\nb", tr}, []string{`--start-at "a\nb": want RFC 3339`}},
		{[]string{"--model", "a\nb", tr}, []string{`--model "a\nb": unknown model (want one of `}},
		{[]string{"--engine", "a\nb", tr}, []string{`--engine "a\nb": no such engine: want one of `}},
		{[]string{"--plan", "--format", "a\nb", tr}, []string{`--format "a\nb": want text or json`}},
		{[]string{"--gpus", "a\nb", tr}, []string{`--gpus "a\nb": only with a gpu tier`}},
		{[]string{"--s3-bucket", "", tr}, []string{`--s3-bucket "": only with an s3 tier`}},
		{[]string{"--queue-depth", "x", "--block-size", "12q", "--seed", "-1", tr}, []string{
			"--queue-depth x: not an integer",
			"--block-size 12q: not a byte size",
			"--seed -1: not a non-negative integer"}},
	} {
		var out, errb bytes.Buffer
		code := cli.Main("kvreplay", tt.args, &out, &errb, run)
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		ok := code == 2 && len(lines) == len(tt.want)
		for i := 0; ok && i < len(lines); i++ {
			ok = strings.HasPrefix(lines[i], "kvreplay: "+tt.want[i])
		}
		if !ok {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and lines starting:\nkvreplay: %s", tt.args, code, errb.String(), strings.Join(tt.want, "\nkvreplay: "))
		}
	}
}
