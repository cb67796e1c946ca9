package cli_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/internal/cli"
)

// FuzzParseFlags: whatever the command line, ParseFlags returns the
// positional arguments pflag finds, help, the version, or a usage error
// of one line a problem, each naming an option (Main prefixes each line
// of a message with the tool's name: a newline typed in an option must
// not start a line of its own).
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{
		"--num-users\x0010\x00x.csv", "--num-users\x00x", "--duration\x00-1", "--dur\x005", "--nope", "-iodepth\x001",
		"--output", "-o\x00f\x00a\x00b", "--\x00--x", "--help", "-h", "--version", "--num-users=1\n2", "--a\nb",
		"-\x07", "--verbose=maybe", "--num-users\x00x\x00--gpu-mem-gb=a\nb\x00--nope", "--gpu-mem-gb\x001e400", "-vx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		fs := prefixFlags()
		cli.AddStandard(fs)
		rest, err := cli.ParseFlags(fs, args)
		if err == nil {
			if !slices.Equal(rest, fs.Args()) {
				t.Fatalf("ParseFlags(%q) = %q; pflag's arguments %q", args, rest, fs.Args())
			}
			return
		}
		if errors.Is(err, pflag.ErrHelp) || errors.Is(err, cli.ErrVersion) {
			return
		}
		var ue *cli.UsageError
		if !errors.As(err, &ue) || cli.ExitCode(err) != 2 {
			t.Fatalf("ParseFlags(%q): %v is not a usage error (exit %d)", args, err, cli.ExitCode(err))
		}
		msg := err.Error()
		if msg == "" || strings.ContainsRune(msg, '\r') {
			t.Fatalf("ParseFlags(%q): error %q is not one line a problem", args, msg)
		}
		for line := range strings.SplitSeq(msg, "\n") {
			if !strings.HasPrefix(line, "--") && !strings.HasPrefix(line, "unknown ") &&
				!strings.HasPrefix(line, "flag needs an argument") && !strings.HasPrefix(line, "bad flag syntax") {
				t.Fatalf("ParseFlags(%q): error %q has a line %q that names no option", args, msg, line)
			}
		}
	})
}
