package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/cli"
	"github.com/spf13/pflag"
)

func TestMainPrints(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		err        error
		wantCode   int
		wantStderr string
	}{
		{"ok", nil, cli.ExitOK, ""},
		{"help", pflag.ErrHelp, cli.ExitOK, ""},
		{"failure", boom, cli.ExitFailure, "kvtrace: boom\n"},
		{"usage", cli.Usagef("--users 0: must be at least 1"), cli.ExitUsage, "kvtrace: --users 0: must be at least 1\n"},
		{"multi-line", cli.Usagef("--users 0: must be at least 1\n--duration -1: must not be negative\n"), cli.ExitUsage,
			"kvtrace: --users 0: must be at least 1\nkvtrace: --duration -1: must not be negative\n"},
		{"case kept", errors.New("Tier-0: no GPU"), cli.ExitFailure, "kvtrace: Tier-0: no GPU\n"},
		{"canceled", context.Canceled, cli.ExitFailure, "kvtrace: context canceled\n"},
		// A path in a message (a file name of a run's directory, an
		// output given) reaches no terminal as an escape sequence, a
		// carriage return or a bidirectional override.
		{"escaped", errors.New("-o /tmp/a\x1b]0;owned\x07\rb\tc: exists\u202e\xff\nµs ok"), cli.ExitFailure,
			`kvtrace: -o /tmp/a\x1b]0;owned\a\rb\tc: exists\u202e\xff` + "\nkvtrace: µs ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var gotArgs []string
			code := cli.Main("kvtrace", []string{"a", "b"}, &stdout, &stderr,
				func(ctx context.Context, args []string, so, se io.Writer) error {
					if ctx == nil || so != &stdout || se != &stderr {
						t.Error("run got the wrong context or writers")
					}
					gotArgs = args
					return tt.err
				})
			if code != tt.wantCode {
				t.Errorf("code = %d, want %d", code, tt.wantCode)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.wantStderr)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if strings.Join(gotArgs, " ") != "a b" {
				t.Errorf("args = %q", gotArgs)
			}
		})
	}
}

// A SIGINT, a SIGTERM or a SIGHUP cancels the run's context, and Main
// names the signal.
func TestMainSignal(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGINT, "interrupt"}, {syscall.SIGTERM, "terminated"}, {syscall.SIGHUP, "hangup"}} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := cli.Main("kvreplay", nil, io.Discard, &stderr, func(ctx context.Context, _ []string, _, _ io.Writer) error {
				if err := syscall.Kill(syscall.Getpid(), tc.sig); err != nil {
					return err
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Second):
					return errors.New("no cancellation")
				}
			})
			if code != cli.ExitFailure {
				t.Errorf("code = %d, want %d", code, cli.ExitFailure)
			}
			if got, want := stderr.String(), "kvreplay: context canceled ("+tc.name+" signal received)\n"; got != want {
				t.Errorf("stderr = %q, want %q", got, want)
			}
		})
	}
}

func TestSignalContextParent(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	ctx, stop := cli.SignalContext(parent)
	defer stop()
	cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the parent did not cancel the context")
	}
}

const usage = `Usage: kvtrace [options]

Examples:
  kvtrace --users 10 -o run.csv.zst
`

func newFlags(stderr io.Writer) (*pflag.FlagSet, *int) {
	fs := cli.NewFlagSet("kvtrace", usage, stderr)
	users := fs.Int("users", 1, "number of users")
	fs.String("alpha", "", "sorts before users")
	cli.AddStandard(fs)
	return fs, users
}

func TestParseFlags(t *testing.T) {
	var stderr bytes.Buffer
	fs, users := newFlags(&stderr)
	rest, err := cli.ParseFlags(fs, []string{"--users", "3", "x.csv", "--", "--y"})
	if err != nil {
		t.Fatal(err)
	}
	if *users != 3 || strings.Join(rest, " ") != "x.csv --y" {
		t.Fatalf("users %d rest %q", *users, rest)
	}
	if stderr.Len() != 0 {
		t.Fatalf("stderr = %q", stderr.String())
	}
}

// TestParseFlagsVersion: --version is ErrVersion, whatever else the
// command line holds (it is not checked), and Main prints the tool's
// name and version for it and exits 0.
func TestParseFlagsVersion(t *testing.T) {
	var stderr bytes.Buffer
	fs, _ := newFlags(&stderr)
	if _, err := cli.ParseFlags(fs, []string{"--users", "3", "--version", "x.csv"}); !errors.Is(err, cli.ErrVersion) || cli.ExitCode(err) != 0 {
		t.Fatalf("--version: %v (exit %d), want ErrVersion and exit 0", err, cli.ExitCode(err))
	}
	var out, errb bytes.Buffer
	code := cli.Main("kvtool", []string{"--version", "--users", "4", "x.csv"}, &out, &errb, func(_ context.Context, args []string, _, stderr io.Writer) error {
		fs, _ := newFlags(stderr)
		_, err := cli.ParseFlags(fs, args)
		return err
	})
	if code != 0 || out.String() != "kvtool "+cli.Version()+"\n" || errb.Len() != 0 {
		t.Fatalf("Main --version: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestParseFlagsHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		var stderr bytes.Buffer
		fs, _ := newFlags(&stderr)
		_, err := cli.ParseFlags(fs, []string{arg})
		if !errors.Is(err, pflag.ErrHelp) || cli.ExitCode(err) != cli.ExitOK {
			t.Fatalf("%s: err = %v, want pflag.ErrHelp", arg, err)
		}
		he, ok := errors.AsType[*cli.HelpError](err)
		if !ok {
			t.Fatalf("%s: err = %T, want *cli.HelpError", arg, err)
		}
		if stderr.Len() != 0 {
			t.Fatalf("%s: help printed on stderr: %q", arg, stderr.String())
		}
		out := he.Text
		if !strings.HasPrefix(out, usage+"\nOptions:\n") {
			t.Fatalf("%s: usage text %q", arg, out)
		}
		// Flags keep their definition order.
		if i, j := strings.Index(out, "--users"), strings.Index(out, "--alpha"); i < 0 || j < 0 || i > j {
			t.Fatalf("%s: flags sorted or missing:\n%s", arg, out)
		}
	}

	// Without AddStandard, pflag's own --help handling gives the same result.
	var stderr bytes.Buffer
	fs := cli.NewFlagSet("kvreport", "Usage: kvreport FILE...", &stderr)
	_, err := cli.ParseFlags(fs, []string{"--help"})
	he, ok := errors.AsType[*cli.HelpError](err)
	if !ok || !errors.Is(err, pflag.ErrHelp) || !strings.HasPrefix(he.Text, "Usage: kvreport FILE...\n\nOptions:\n") || stderr.Len() != 0 {
		t.Fatalf("err %v, stderr %q", err, stderr.String())
	}
}

// Main prints help on stdout, nothing on stderr, and exits 0.
func TestMainHelpOnStdout(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := cli.Main("kvreport", []string{"--help"}, &stdout, &stderr, func(_ context.Context, args []string, _, se io.Writer) error {
		fs := cli.NewFlagSet("kvreport", "Usage: kvreport FILE...", se)
		cli.AddStandard(fs)
		_, err := cli.ParseFlags(fs, args)
		return fmt.Errorf("wrapped: %w", err)
	})
	if code != cli.ExitOK || stderr.Len() != 0 || !strings.HasPrefix(stdout.String(), "Usage: kvreport FILE...\n\nOptions:\n") {
		t.Fatalf("code %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// TestParseFlagsSaysEveryValue: every malformed value of a command line
// is said, one a line, in the order typed, and not only the first (pflag's
// Parse stops there); an unknown option after them is said too. pflag's
// numbers are said in words, not by their Go type ("not a valid float64",
// "out of range for int64").
func TestParseFlagsSaysEveryValue(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--users", "x", "--block-size", "12q", "--rate=5x", "--seed", "-1", "f.csv"},
			"--users x: not an integer\n" +
				"--block-size 12q: not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)\n" +
				"--rate 5x: not a number\n" +
				"--seed -1: not a non-negative integer"},
		{[]string{"--rate", "1e400", "--seed=18446744073709551616", "--big", "9223372036854775808"},
			"--rate 1e400: out of range (want a number of magnitude at most 1.7976931348623157e+308)\n" +
				"--seed 18446744073709551616: out of range (want a non-negative integer up to 18446744073709551615)\n" +
				"--big 9223372036854775808: out of range (want an integer from -9223372036854775808 to 9223372036854775807)"},
		{[]string{"--users", "x", "--nope", "--rate", "y"}, "--users x: not an integer\nunknown flag: --nope"},
		{[]string{"--users", "x", "--help"}, "--users x: not an integer"},
		{[]string{"--verbose=maybe"}, "--verbose maybe: not true or false"},
	} {
		fs, _ := newFlags(io.Discard)
		var bs cli.ByteSize
		fs.Var(&bs, "block-size", "")
		fs.Float64("rate", 1, "")
		fs.Uint64("seed", 1, "")
		fs.Int64("big", 1, "")
		fs.Bool("verbose", false, "")
		_, err := cli.ParseFlags(fs, tt.args)
		if err == nil || err.Error() != tt.want || cli.ExitCode(err) != cli.ExitUsage {
			t.Errorf("%q: %v (exit %d), want exit 2 and\n%s", tt.args, err, cli.ExitCode(err), tt.want)
		}
	}
}

func TestParseFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--nope"}, "unknown flag: --nope"},
		{[]string{"--users"}, "flag needs an argument: --users"},
		{[]string{"--users", "x"}, "--users x: not an integer"},
		{[]string{"--users=99999999999999999999"}, "--users 99999999999999999999: out of range (want an integer from -9223372036854775808 to 9223372036854775807)"},
		{[]string{"--block-size", "12q"}, "--block-size 12q: not a byte size (want a number with an optional unit such as 4k, 1MiB, 2GB)"},
		{[]string{"--block-size="}, `--block-size "": not a byte size`},
		{[]string{"--block-size", "1 q"}, `--block-size "1 q": not a byte size`},
		{[]string{"--duration", "-5"}, "--duration -5: duration must not be negative"},
		{[]string{"--speed", "0"}, "--speed 0: speed must be positive"},
		{[]string{"--tier-map", "Tier-0"}, `--tier-map Tier-0: "Tier-0" has no '='`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			fs, _ := newFlags(&stderr)
			var bs cli.ByteSize
			var d cli.Seconds
			var sp cli.Speed
			var kv cli.KeyValues
			fs.Var(&bs, "block-size", "")
			fs.Var(&d, "duration", "")
			fs.Var(&sp, "speed", "")
			fs.Var(&kv, "tier-map", "")
			_, err := cli.ParseFlags(fs, tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Fatalf("error %q, want it to start with %q", err, tt.msg)
			}
			if cli.ExitCode(err) != cli.ExitUsage {
				t.Fatalf("exit code %d, want %d", cli.ExitCode(err), cli.ExitUsage)
			}
			if stderr.Len() != 0 {
				t.Fatalf("ParseFlags wrote %q; errors are Main's to print", stderr.String())
			}
		})
	}
}
