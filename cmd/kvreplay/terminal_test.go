package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// kvreplay --duration 30 is 30 seconds, as kvtrace --duration 30 is; a Go
// duration reads as before.
func TestDurationSeconds(t *testing.T) {
	tr := nvmeTrace(t, t.TempDir())
	for _, tt := range []struct {
		arg  string
		want time.Duration
	}{{"30", 30 * time.Second}, {"0.5", 500 * time.Millisecond}, {"30s", 30 * time.Second}, {"2m", 2 * time.Minute}, {"0", 0}} {
		o, err := parse([]string{"--duration", tt.arg, tr}, io.Discard)
		if err != nil || o.cfg.Duration != tt.want {
			t.Errorf("--duration %s: %v, err %v; want %v", tt.arg, o.cfgDuration(), err, tt.want)
		}
	}
	code, _, stderr := kvreplay("--duration", "-3", tr)
	if code != 2 || !strings.Contains(stderr, "--duration -3: duration must not be negative") {
		t.Errorf("--duration -3: exit %d, %q", code, stderr)
	}
}

// cfgDuration is the parsed --duration, or 0 for no options.
func (o *options) cfgDuration() time.Duration {
	if o == nil {
		return 0
	}
	return o.cfg.Duration
}

// Unknown options are answered with the option meant, fio's names too.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, tt := range []struct{ arg, want string }{
		{"--iodepth=8", "kvreplay: unknown flag: --iodepth (did you mean --queue-depth?)\n"},
		{"--bs=4k", "kvreplay: unknown flag: --bs (did you mean --block-size?)\n"},
		{"--ioengine=psync", "kvreplay: unknown flag: --ioengine (did you mean --engine?)\n"},
		{"--num-users=4", "kvreplay: unknown flag: --num-users (did you mean --users?)\n"},
		{"--numjobs=4", "kvreplay: unknown flag: --numjobs (did you mean --workers?)\n"},
	} {
		if code, _, stderr := kvreplay(tt.arg, "x.csv"); code != 2 || stderr != tt.want {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tt.arg, code, stderr, tt.want)
		}
	}
}

// Under a launcher, only rank 0 talks on the shared terminal.
func TestOnlyRankZeroTalks(t *testing.T) {
	tr := nvmeTrace(t, t.TempDir())
	out := t.TempDir() + "/out.{rank}.json"
	for rank, quiet := range []bool{false, true, true} {
		o, err := parse([]string{"--rank", string(rune('0' + rank)), "--ranks", "3", "-o", out, tr}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.quiet != quiet {
			t.Errorf("rank %d of 3: quiet %v, want %v", rank, o.quiet, quiet)
		}
	}
	o, err := parse([]string{tr}, io.Discard)
	if err != nil || o.quiet {
		t.Errorf("one rank: quiet %v, err %v", o != nil && o.quiet, err)
	}
}

// A run whose summary a person reads says where its result went.
func TestResultNote(t *testing.T) {
	if got := resultNote(&options{}, false); !strings.HasPrefix(got, "result: not written") || !strings.Contains(got, "-o FILE") {
		t.Errorf("no -o on a terminal: %q", got)
	}
	if got := resultNote(&options{}, true); got != "result: written to stdout" {
		t.Errorf("-o -: %q", got)
	}
}
