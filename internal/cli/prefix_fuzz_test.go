package cli_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kvbench/kvbench/internal/cli"
)

// prefixFlags is a flag set like kvtrace's: options that share prefixes,
// one that takes no value, shorthands with and without values and a
// hidden option.
func prefixFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int("num-users", 0, "")
	fs.Int("num-gpus", 0, "")
	fs.Float64("gpu-mem-gb", 0, "")
	fs.Float64("gpu-mem", 0, "") // an exact name that is another's prefix
	var d cli.Seconds
	fs.Var(&d, "duration", "")
	fs.BoolP("verbose", "v", false, "")
	fs.StringP("output", "o", "", "")
	fs.String("hidden-opt", "", "")
	_ = fs.MarkHidden("hidden-opt")
	return fs
}

// FuzzExpandPrefixes: kv-cache.py's abbreviated options (--num-user,
// --gpu-mem-g=4) become the options they are prefixes of, one argument
// for one, the value kept; a command line pflag takes as it is (every
// option written out) is left exactly as it is, values that look like
// prefixes included; expanding twice is expanding once; an ambiguous
// prefix is one line naming it.
func FuzzExpandPrefixes(f *testing.F) {
	for _, s := range []string{
		"--num-user\x0010\x00--gpu-mem=4", "--num\x001", "--num-users\x0010\x00--duration\x0060\x00x.csv",
		"--dur=5\x00-v\x00--verb", "-o\x00--num\x00--nu", "-vo\x00--num", "--output\x00--num", "--\x00--num\x00--",
		"--gpu-mem\x001", "--gpu-mem-\x001", "--=x", "--hid\x00x", "-", "--", "---num", "--num-users=--num", "-o=--nu",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		out, err := cli.ExpandPrefixes(prefixFlags(), args)
		if prefixFlags().Parse(args) == nil && (err != nil || !slices.Equal(out, args)) {
			t.Fatalf("pflag takes %q as it is, but ExpandPrefixes rewrites it to %q, %v", args, out, err)
		}
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") || !strings.HasPrefix(msg, "ambiguous option: --") {
				t.Fatalf("ExpandPrefixes(%q): error %q", args, msg)
			}
			return
		}
		if len(out) != len(args) {
			t.Fatalf("ExpandPrefixes(%q) = %q: %d arguments from %d", args, out, len(out), len(args))
		}
		for i := range out {
			if out[i] == args[i] {
				continue
			}
			// An expansion: --prefix[=v] became --name[=v].
			name, v, hasV := strings.Cut(strings.TrimPrefix(out[i], "--"), "=")
			pre, pv, hasPV := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
			fl := prefixFlags().Lookup(name)
			if fl == nil || fl.Hidden || !strings.HasPrefix(name, pre) || v != pv || hasV != hasPV || !strings.HasPrefix(args[i], "--") {
				t.Fatalf("ExpandPrefixes(%q): %q became %q", args, args[i], out[i])
			}
		}
		again, err := cli.ExpandPrefixes(prefixFlags(), out)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("ExpandPrefixes(%q) = %q, which expands again to %q, %v", args, out, again, err)
		}
	})
}
